"""A small model's edit read the one way it can only mean. Each call below is one the real
Qwen2.5-Coder-1.5B made in bench/smallmodel (transcripts of round 1 at 53573b1), where the
edit failed as written and the model repeated it until the run's guard stopped it. A larger
model's same call keeps its usual error."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.support.tool_calls import Call
from totem.tools.base import ToolContext, ToolError
from totem.tools.edit import Edit

CACHE = ('"""Cache helpers."""\n\n\ndef calc_ttl(hits, base=60):\n    """Seconds an entry '
         'lives."""\n    return base * (1 + min(hits, 9))\n\n\ndef describe(hits):\n    return '
         'f"ttl={calc_ttl(hits)}s"\n\n\ndef longest(entries):\n    return max(calc_ttl(h) for h '
         'in entries)\n')
INI = ("[database]\nhost = db.internal\ntimeout = 30\npool = 5\n\n[cache]\nhost = "
       "cache.internal\ntimeout = 30\n")
REPORT = ("def summary(rows):\n    return json.dumps({'count': len(rows), 'first': rows[0]})\n"
          "\n\nif __name__ == '__main__':\n    print(summary(['a', 'b']))\n")


def small(ctx: ToolContext, request: str = "") -> ToolContext:
    return dataclasses.replace(ctx, small_model=True, request=request)


def test_a_bare_name_used_three_times_is_renamed_everywhere_in_the_file(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "cache_utils.py").write_text(CACHE)
    result = call(Edit(), small(ctx), path="cache_utils.py", old_string="calc_ttl",
                  new_string="compute_ttl")
    assert (project / "cache_utils.py").read_text() == CACHE.replace("calc_ttl", "compute_ttl")
    assert "every use of calc_ttl" in result.output
    # a larger model is told the places instead
    (project / "cache_utils.py").write_text(CACHE)
    with pytest.raises(ToolError, match="appears 3 times"):
        call(Edit(), ctx, path="cache_utils.py", old_string="calc_ttl", new_string="compute_ttl")


def test_a_rename_says_which_other_files_still_use_the_name(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "shapes.py").write_text("def area_of(width, height):\n    return width * height\n")
    (project / "main.py").write_text("from shapes import area_of\n\n\ndef report(w, h):\n"
                                     "    return f'{w}x{h} -> {area_of(w, h)}'\n")
    (project / "areas.txt").write_text("the area_office is elsewhere\n")  # not the name
    result = call(Edit(), small(ctx), path="shapes.py", old_string="area_of",
                  new_string="rectangle_area")
    assert "area_of is still used in main.py (2)" in result.output
    assert "areas.txt" not in result.output
    result = call(Edit(), small(ctx), path="main.py", old_string="area_of",
                  new_string="rectangle_area")
    assert "area_of" not in (project / "main.py").read_text()
    assert "still used" not in result.output


def test_a_part_of_a_longer_name_is_not_renamed(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "m.py").write_text("total = 1\nsubtotal = total + 2\ntotal_max = total\n")
    call(Edit(), small(ctx), path="m.py", old_string="total", new_string="amount")
    assert (project / "m.py").read_text() == (
        "amount = 1\nsubtotal = amount + 2\ntotal_max = amount\n")


def test_a_line_found_in_two_sections_is_changed_in_the_one_the_request_names(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "app.ini").write_text(INI)
    # the bench's own words: the section left alone is named too
    asked = small(ctx, "Set the database timeout to 45 in app.ini. Leave the cache settings "
                       "alone.")
    result = call(Edit(), asked, path="app.ini", old_string="timeout = 30",
                  new_string="timeout = 45")
    assert (project / "app.ini").read_text() == INI.replace("timeout = 30", "timeout = 45", 1)
    assert "names [database]" in result.output


def test_a_request_that_names_no_section_or_both_keeps_the_error(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "app.ini").write_text(INI)
    for request in ("Set the timeout to 45.", "Set the cache and database timeouts to 45."):
        with pytest.raises(ToolError, match="appears 2 times"):
            call(Edit(), small(ctx, request), path="app.ini", old_string="timeout = 30",
                 new_string="timeout = 45")
    assert (project / "app.ini").read_text() == INI


def test_text_edited_in_the_file_that_uses_it_is_changed_where_it_is(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "app.py").write_text("from messages import GREETING\n\n"
                                    "print(GREETING.format(name='world'))\n")
    (project / "messages.py").write_text("GREETING = 'Helo, {name}!'\n"
                                         "FAREWELL = 'Goodbye, {name}.'\n")
    result = call(Edit(), small(ctx), path="app.py", old_string="Helo", new_string="Hello")
    assert (project / "messages.py").read_text().startswith("GREETING = 'Hello, {name}!'")
    assert "it is only in messages.py" in result.output
    assert result.title == "messages.py"


def test_text_in_two_other_files_keeps_the_error(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "app.py").write_text("print('hi')\n")
    (project / "a.py").write_text("X = 'Helo'\n")
    (project / "b.py").write_text("Y = 'Helo'\n")
    with pytest.raises(ToolError, match="It is in a.py, b.py"):
        call(Edit(), small(ctx), path="app.py", old_string="Helo", new_string="Hello")


def test_an_import_written_before_a_use_goes_to_the_top(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "report.py").write_text(REPORT)
    old = "json.dumps({'count': len(rows), 'first': rows[0]})"
    result = call(Edit(), small(ctx), path="report.py", old_string=old,
                  new_string="import json; " + old)
    assert (project / "report.py").read_text() == "import json\n\n\n" + REPORT
    assert "at the top of the file" in result.output


def test_an_import_added_at_the_end_goes_after_the_other_imports(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    source = '"""Report."""\nimport os\n\nfrom pathlib import Path\n\n\ndef f():\n    pass\n'
    (project / "r.py").write_text(source)
    call(Edit(), small(ctx), path="r.py", old_string="", new_string="import json")
    assert (project / "r.py").read_text() == source.replace(
        "from pathlib import Path\n", "from pathlib import Path\nimport json\n")


def test_the_whole_file_sent_again_as_an_addition_is_refused(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "cache_utils.py").write_text(CACHE)
    again = CACHE.replace("calc_ttl", "compute_ttl").replace('"""Cache helpers."""\n', "")
    with pytest.raises(ToolError, match="would be there twice"):
        call(Edit(), small(ctx), path="cache_utils.py", old_string="", new_string=again)
    assert (project / "cache_utils.py").read_text() == CACHE


def test_a_new_function_is_still_added_at_the_end(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    (project / "cache_utils.py").write_text(CACHE)
    call(Edit(), small(ctx), path="cache_utils.py", old_string="",
         new_string="def shortest(entries):\n    return min(calc_ttl(h) for h in entries)\n")
    assert (project / "cache_utils.py").read_text().endswith("def shortest(entries):\n"
                                                            "    return min(calc_ttl(h) for h "
                                                            "in entries)\n")


def test_a_sibling_function_shaped_like_the_file_is_added(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    source = 'def add(a, b):\n    """Sum of a and b."""\n    return a + b\n'
    (project / "ops.py").write_text(source)
    call(Edit(), small(ctx), path="ops.py", old_string="",
         new_string='def sub(a, b):\n    """Difference of a and b."""\n    return a - b\n')
    assert (project / "ops.py").read_text().count("def ") == 2


def test_a_readme_sent_again_with_read_numbers_is_refused(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    readme = ("# Courier\n\nCourier moves parcels between depots.\n\n## Usage\n\nEach depot "
              "will recieve a manifest before the truck leaves.\nRun `courier plan` to print "
              "the route.\n")
    (project / "README.md").write_text(readme)
    # the real 1.5B call, after its write over README.md was refused
    with pytest.raises(ToolError, match="would be there twice"):
        call(Edit(), small(ctx), path="README.md", old_string="",
             new_string="     6\n\n## Usage\n     7\n\nEach depot will recieve a manifest "
                        "before the truck leaves.\n     8\nRun `courier plan` to print the "
                        "route.\n")
    assert (project / "README.md").read_text() == readme


def test_the_file_that_holds_the_text_is_not_changed_when_the_run_may_not_change_it(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    """The real 1.5B call of fix_to_pass_test: the test's text edited in slug.py, where the
    request said to leave test_slug.py alone (the run's refusal is asked first)."""
    (project / "slug.py").write_text("def slugify(title):\n    return title\n")
    test = "def test_slugify():\n    assert slugify('  Many   Spaces ') == 'many-spaces'\n"
    (project / "test_slug.py").write_text(test)
    bounded = dataclasses.replace(
        small(ctx), change_refusal=lambda path: "hands off" if path == "test_slug.py" else None)
    with pytest.raises(ToolError, match="It is in test_slug.py, but a change there would be "
                                        "refused: hands off"):
        call(Edit(), bounded, path="slug.py",
             old_string="assert slugify('  Many   Spaces ') == 'many-spaces'",
             new_string="assert slugify('  Many   Spaces ') == 'many'")
    assert (project / "test_slug.py").read_text() == test


def test_a_failed_edit_of_a_file_missing_an_import_says_how_to_add_it(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    """The real 1.5B call for "report.py fails with NameError": the line sent back as it is."""
    (project / "report.py").write_text(REPORT)
    line = "json.dumps({'count': len(rows), 'first': rows[0]})"
    with pytest.raises(ToolError) as failed:
        call(Edit(), small(ctx), path="report.py", old_string=line, new_string=line)
    assert str(failed.value).endswith(
        "[Check of report.py: line 2: name 'json' is not defined (a missing import or "
        "definition?)]\n[To import json, call edit with path report.py, old_string \"\" and "
        "new_string \"import json\".]")
    call(Edit(), small(ctx), path="report.py", old_string="", new_string="import json")
    assert (project / "report.py").read_text() == "import json\n\n\n" + REPORT
    with pytest.raises(ToolError, match="the same; there is nothing to change.$"):
        call(Edit(), ctx, path="report.py", old_string=line, new_string=line)


def test_an_import_given_in_place_of_the_line_that_needs_it_goes_to_the_top(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    """The real 1.5B call after being told how to add the import."""
    (project / "report.py").write_text(REPORT)
    call(Edit(), small(ctx), path="report.py",
         old_string="json.dumps({'count': len(rows), 'first': rows[0]})",
         new_string="import json")
    assert (project / "report.py").read_text() == "import json\n\n\n" + REPORT


def test_an_import_put_in_place_of_one_still_used_is_added_below_it(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    """The real 1.5B call in write_test: the test it wrote used pytest and Stack."""
    test = "import pytest\n\n@pytest.mark.parametrize('n', [1])\ndef test_pop(n):\n" \
           "    assert Stack().pop() == n\n"
    (project / "test_stack.py").write_text(test)
    call(Edit(), small(ctx), path="test_stack.py", old_string="import pytest",
         new_string="from stack import Stack")
    assert (project / "test_stack.py").read_text() == test.replace(
        "import pytest\n", "import pytest\nfrom stack import Stack\n")
    # an import the file no longer uses is replaced as asked
    (project / "m.py").write_text("import os\n\nprint(Path('.'))\n")
    call(Edit(), small(ctx), path="m.py", old_string="import os",
         new_string="from pathlib import Path")
    assert (project / "m.py").read_text() == "from pathlib import Path\n\nprint(Path('.'))\n"


def test_a_definition_renamed_alone_renames_its_uses_in_the_file(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    """The real 0.5B call for "rename calc_ttl to compute_ttl": the def line only."""
    (project / "cache_utils.py").write_text(CACHE)
    (project / "main.py").write_text("from cache_utils import calc_ttl\n\nprint(calc_ttl(1))\n")
    result = call(Edit(), small(ctx), path="cache_utils.py",
                  old_string="def calc_ttl(hits, base=60):",
                  new_string="def compute_ttl(hits, base=60):")
    assert (project / "cache_utils.py").read_text() == CACHE.replace("calc_ttl", "compute_ttl")
    assert "every use of calc_ttl in the file was renamed too (3 places)" in result.output
    assert "calc_ttl is still used in main.py (2)" in result.output
    # a changed signature is no rename: the edit is made as written
    (project / "cache_utils.py").write_text(CACHE)
    call(Edit(), small(ctx), path="cache_utils.py", old_string="def calc_ttl(hits, base=60):",
         new_string="def calc_ttl(hits, base=30):")
    assert "base=30" in (project / "cache_utils.py").read_text()


def test_a_new_function_given_for_the_first_line_of_another_goes_before_it(
    project: Path, ctx: ToolContext, call: Call
) -> None:
    """The real 1.5B call for "add clamp to mathx.py": mean's first line as old_string, the
    new function (with forty blank lines after it) as new_string."""
    source = "def double(x):\n    return 2 * x\n\n\ndef mean(values):\n    return sum(values)\n"
    (project / "mathx.py").write_text(source)
    clamp = "def clamp(value, low, high):\n    return max(low, min(value, high))"
    result = call(Edit(), small(ctx), path="mathx.py", old_string="def mean(values):",
                  new_string=clamp + "\n" * 40)
    assert (project / "mathx.py").read_text() == source.replace(
        "def mean(values):", clamp + "\n\n\ndef mean(values):")
    assert "clamp was put before it instead" in result.output
