"""Tool descriptions a model cannot copy as they are: no fill-in placeholders, real examples."""

from __future__ import annotations

import re

import pytest

from totem.smallmodel.surface import SMALL_TOOLS
from totem.smallmodel.surface import tool_text as small_text
from totem.tools.base import tool_spec
from totem.tools.patch import DESCRIPTION
from totem.tools.patch_format import plan_patch
from totem.tools.registry import builtin_tools

# what a template looks like: "(optional)", "<name>", a line ending in a bare ": path"
PLACEHOLDER = re.compile(r"\(optional\)|<[a-z_ ]+>|:\s*(?:path|new/path|name)\s*$", re.I | re.M)


def texts_of(spec_description: str, parameters: dict[str, object]) -> list[str]:
    found = [spec_description]
    props = parameters.get("properties", {})
    assert isinstance(props, dict)
    found += [str(p.get("description", "")) for p in props.values() if isinstance(p, dict)]
    return found


@pytest.mark.parametrize("tool", builtin_tools(), ids=lambda t: t.name)
def test_no_builtin_description_is_a_fill_in_template(tool: object) -> None:
    spec = tool_spec(tool)  # type: ignore[arg-type]
    for text in texts_of(spec.description, spec.parameters):
        assert not PLACEHOLDER.search(text), (spec.name, text)


@pytest.mark.parametrize("name", SMALL_TOOLS)
def test_the_small_texts_are_short_and_literal(name: str) -> None:
    description, arguments = small_text(name)
    assert description and arguments
    for text in [description, *arguments.values()]:
        assert not PLACEHOLDER.search(text), (name, text)
        assert "e.g." not in text and "for example" not in text  # an example gets copied


def test_the_patch_example_is_a_patch_that_applies() -> None:
    example = DESCRIPTION[DESCRIPTION.index("*** Begin Patch"):
                          DESCRIPTION.index("*** End Patch") + len("*** End Patch")]
    files = {"src/cart.py": "def total(items):\n    return sum(items)\n",
             "old_cart.py": "x = 1\n"}
    changes = {c.path: c for c in plan_patch(example, files.get)}
    assert changes["src/cart.py"].new == "def total(items):\n    return round(sum(items), 2)\n"
    assert changes["docs/notes.md"].new == "Totals are rounded.\n"
    assert changes["old_cart.py"].new is None
