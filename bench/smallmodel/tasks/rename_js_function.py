"""Rename a JavaScript function, defined in one file and used in another."""

import re
from pathlib import Path

from bench.smallmodel.checks import read, unchanged, write

STEPS = 3
CART = """function calcTotal(items) {
  return items.reduce((sum, item) => sum + item.price * item.qty, 0);
}

function describe(items) {
  return `${items.length} items, ${calcTotal(items)} total`;
}

module.exports = { calcTotal, describe };
"""
CHECKOUT = """const { calcTotal } = require("./cart");

function charge(items, card) {
  return { card, amount: calcTotal(items) };
}

module.exports = { charge };
"""
FILES = {
    "src/cart.js": CART,
    "src/checkout.js": CHECKOUT,
    "package.json": '{\n  "name": "till",\n  "version": "2.0.1",\n  "main": "src/cart.js"\n}\n',
}
RENAMED = ("src/cart.js", "src/checkout.js")
PROMPTS = {
    "direct": "Rename the function calcTotal to computeTotal everywhere in this project.",
    "terse": "calcTotal -> computeTotal, all files",
    "indirect": (
        "package.json needs no change. calcTotal in src/cart.js should be called computeTotal, "
        "and checkout.js uses it too."
    ),
    "other": "Renomme la fonction calcTotal en computeTotal partout dans ce projet.",
}
KEEP = {"indirect": ("package.json",)}


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip().splitlines()]


def check(root: Path, answer: str) -> str | None:
    # judged on the text (no Node needed): each file is its original with the name replaced
    if (why := unchanged(root, FILES, skip=RENAMED)) is not None:
        return why
    for path in RENAMED:
        text = read(root, path)
        if text is None:
            return f"{path} missing"
        if re.search(r"\bcalcTotal\b", text):
            return f"calcTotal still in {path}"
        if _lines(text.replace("computeTotal", "calcTotal")) != _lines(FILES[path]):
            return f"{path} is not its original with the name replaced"
    return None


def solve(root: Path) -> str:
    for path in RENAMED:
        write(root, path, FILES[path].replace("calcTotal", "computeTotal"))
    return "Renamed in src/cart.js and src/checkout.js."
