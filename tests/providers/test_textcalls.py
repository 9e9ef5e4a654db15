"""Tool calls written as text by small models, from real outputs kept as fixtures.

Each fixture under tests/fixtures/smallmodel/calls/ holds a model's text and the calls it
must become (none for prose), checked against totem's real tool definitions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from totem.run.textcalls import params_of, parse_text_tool_calls, repair_call
from totem.tools.base import tool_spec
from totem.tools.registry import builtin_tools

FIXTURES = Path(__file__).parents[1] / "fixtures" / "smallmodel" / "calls"
SPECS = {s.name: s.parameters for s in map(tool_spec, builtin_tools())}
PARAMS = params_of(SPECS)
KNOWN = set(SPECS)


def fixtures() -> list[Path]:
    return sorted(FIXTURES.glob("*.json"))


@pytest.mark.parametrize("path", fixtures(), ids=lambda p: p.stem)
def test_each_recorded_form_becomes_its_calls(path: Path) -> None:
    case: dict[str, Any] = json.loads(path.read_text())
    found = parse_text_tool_calls(case["text"], KNOWN, params=PARAMS)
    assert [[name, args] for name, args in found] == case["expect"], case["source"]


def test_the_fixtures_cover_every_form() -> None:
    names = {p.stem for p in fixtures()}
    for form in ("xml-tools-bash-attributes", "xml-read-child-element", "tool-call-tags",
                 "name-args-keyword", "name-args-positional", "json-fenced-name-arguments",
                 "json-bare-tool-args", "file-named-tool", "schema-copied-arguments",
                 "prose-mentions-a-tool"):
        assert form in names


@pytest.mark.parametrize("text", [
    "You can use read(path=\"a.py\") to see it.",
    "Use the <read> tool to look at the file.",
    "I will use bash to run the tests.",
    "print(\"hello\")",  # a call, but not to a tool
    "<div class=\"x\">read</div>",
    "{\"answer\": \"8437\"}",
    "read the file first",
])
def test_prose_that_mentions_a_tool_stays_prose(text: str) -> None:
    assert parse_text_tool_calls(text, KNOWN, params=PARAMS) == []


def test_xml_values_are_unescaped_and_the_text_of_an_element_fills_the_missing_argument(
) -> None:
    text = '<write path="notes.txt">one &amp; two</write>\n<bash command="echo a &gt; b"/>'
    assert parse_text_tool_calls(text, KNOWN, params=PARAMS) == [
        ("write", {"path": "notes.txt", "content": "one & two"}),
        ("bash", {"command": "echo a > b"}),
    ]


def test_qwen3_coder_function_form() -> None:
    text = "<function=read>\n<parameter=path>\nsrc/app.py\n</parameter>\n</function>"
    assert parse_text_tool_calls(text, KNOWN, params=PARAMS) == [("read", {"path": "src/app.py"})]


def test_several_calls_one_per_line_in_a_fence() -> None:
    text = "```python\nread(\"a.py\")\ngrep(pattern=\"port\", include=\"*.ini\")\n```"
    assert parse_text_tool_calls(text, KNOWN, params=PARAMS) == [
        ("read", {"path": "a.py"}), ("grep", {"pattern": "port", "include": "*.ini"})]


def test_a_file_named_tool_is_a_write_only_with_content_and_a_write_tool() -> None:
    assert repair_call("hello.txt", {"content": "hi"}, KNOWN) == (
        "write", {"path": "hello.txt", "content": "hi"})
    assert repair_call("hello.txt", {}, KNOWN) is None
    assert repair_call("hello.txt", {"content": "hi"}, {"read"}) is None
    assert repair_call("summarize", {"content": "hi"}, KNOWN) is None
