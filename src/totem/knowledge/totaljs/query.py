"""From a person's prompt to a documentation search, with the words in words.json:

    1. lowercase, accents off, Spanish phrases ("base de datos") to English words
    2. filler words dropped (Spanish and English), Spanish topic words translated
    3. no search for short prompts, nor for prompts that name nothing of Total.js or jComponent
       (so that unrelated prompts are never sent to the documentation server)
    4. the product: named outright (jComponent, Total.js), else the one whose words the prompt
       uses more, else Total.js 5
    5. a request to make something with a recipe (a component) asks for that recipe
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from totem.knowledge.base import Query

__all__ = ["MIN_WORDS", "MAX_QUERY_WORDS", "plan", "words"]

HERE = Path(__file__).parent
MIN_WORDS = 3  # prompts with fewer words ("hola", "fix it") are not searched
MAX_QUERY_WORDS = 6
_TOKEN = re.compile(r"[a-z0-9$][a-z0-9$._|@#-]*")


@dataclass(frozen=True, slots=True)
class Words:
    products: dict[str, dict[str, Any]]
    shared: frozenset[str]
    default: str
    make: frozenset[str]
    recipes: dict[str, dict[str, str]]
    phrases: dict[str, str]
    filler: frozenset[str]
    translate: dict[str, str]
    vocabulary: frozenset[str]  # the words that make a prompt worth a search

    def topics(self, product: str) -> frozenset[str]:
        return frozenset(self.products[product]["topics"])

    def names(self, product: str) -> frozenset[str]:
        return frozenset(self.products[product]["names"])


@functools.cache
def words() -> Words:
    data = json.loads((HERE / "words.json").read_text(encoding="utf-8"))
    vocabulary = set(data["shared_topics"])
    for product in data["products"].values():
        vocabulary |= set(product["topics"]) | set(product["names"])
    return Words(
        products=data["products"],
        shared=frozenset(data["shared_topics"]),
        default=data["default_product"],
        make=frozenset(data["make"]),
        recipes=data["recipes"],
        phrases=data["phrases"],
        filler=frozenset(data["filler"]),
        translate=data["translate"],
        vocabulary=frozenset(vocabulary),
    )


def _plain(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokens(prompt: str) -> list[str]:
    """The prompt's words: lowercase, without accents, Spanish phrases made English words."""
    text = _plain(prompt)
    for phrase, english in words().phrases.items():
        text = re.sub(rf"\b{re.escape(phrase)}\b", f" {english} ", text)
    return [t.rstrip(".-_|") for t in _TOKEN.findall(text) if t.rstrip(".-_|")]


def _product(topics: list[str], w: Words) -> str:
    named = [p for p in w.products if any(t in w.names(p) for t in topics)]
    if len(named) == 1:
        return named[0]
    scores = {p: sum(t in w.topics(p) for t in topics) for p in w.products}
    best = max(scores.values())
    leaders = [p for p, score in scores.items() if score == best]
    return leaders[0] if best and len(leaders) == 1 else w.default


def _worth_a_search(topics: list[str], *, making: bool, names: set[str], w: Words) -> bool:
    """A framework named, or two of its topics, or one in a request to make something: one
    common word alone ("read the big files") is no question about the framework."""
    known = [t for t in topics if t in w.vocabulary]
    return any(t in names for t in known) or len(known) >= 2 or (making and bool(known))


def plan(prompt: str) -> Query | None:
    """The search for `prompt`, or None when it is not worth one."""
    w = words()
    found = tokens(prompt)
    if len(found) < MIN_WORDS:
        return None
    making = any(t in w.make for t in found)
    topics = [w.translate.get(t, t) for t in found if t not in w.filler]
    topics = [t for t in dict.fromkeys(topics) if t]
    names = {n for p in w.products for n in w.names(p)}
    if not _worth_a_search(topics, making=making, names=names, w=w):
        return None
    product = _product(topics, w)
    rest = [t for t in topics if t not in names]
    recipe = next((r for r in w.recipes if making and {r, r + "s"} & set(rest)), "")
    if recipe:
        product = w.recipes[recipe]["product"]
        extra = [t for t in rest if t not in (recipe, recipe + "s") and t not in w.make]
        text = " ".join([w.recipes[recipe]["query"], *extra[: MAX_QUERY_WORDS - 3]])
    else:
        text = " ".join(rest[:MAX_QUERY_WORDS]) or w.products[product]["title"]
    return Query(text, product, str(w.products[product]["title"]), recipe)
