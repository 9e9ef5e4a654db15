"""smallmodel/imports_check.py: the names other files import from a changed module that it
no longer defines, read with ast from the project's own files."""

from __future__ import annotations

from totem.smallmodel.imports_check import missing_imports
from totem.smallmodel.project import ProjectFile


def test_a_renamed_function_that_a_test_imports_is_found() -> None:
    files = [ProjectFile("acronym_test.py", "from acronym import (\n    abbreviate,\n)\n")]
    assert missing_imports("acronym.py", "def create_acronym(w):\n    pass\n", files) == [
        ("acronym_test.py", "abbreviate")]
    assert missing_imports("acronym.py", "def abbreviate(w):\n    return w\n", files) == []


def test_a_package_module_is_matched_by_its_dotted_names() -> None:
    files = [ProjectFile("tests/test_cart.py", "from shop.cart import Cart, TAX\n"),
             ProjectFile("main.py", "from cart import total\n"),
             ProjectFile("other.py", "from shop.orders import Cart\n")]
    changed = "class Cart:\n    pass\n\nTAX = 0.2\n"
    assert missing_imports("shop/cart.py", changed, files) == [("main.py", "total")]


def test_what_a_module_imports_it_also_gives_and_a_star_gives_anything() -> None:
    files = [ProjectFile("app.py", "from util import path, helper\n")]
    assert missing_imports("util.py", "from os import path\nhelper = 1\n", files) == []
    assert missing_imports("util.py", "from os.path import *\n", files) == []


def test_nothing_is_said_of_files_that_do_not_parse_or_are_not_python() -> None:
    files = [ProjectFile("app.py", "from util import gone\n"),
             ProjectFile("broken.py", "from util import (\n")]
    assert missing_imports("util.py", "def (:\n", files) == []
    assert missing_imports("util.js", "export const x = 1\n", files) == []
    assert missing_imports("util.py", "x = 1\n", files) == [("app.py", "gone")]
