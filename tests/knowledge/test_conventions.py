"""the conventions check finds each planted violation, says nothing of a clean file, and
its findings reach the model in the result of write, edit and patch (Total.js projects only)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePath

import pytest

from tests.support.knowledge_runs import run_session
from totem.knowledge import format_findings
from totem.knowledge.totaljs.conventions import check, rules
from totem.messages import Message, ToolPart
from totem.settings.config import KnowledgeSettings
from totem.testing.scripted import call, reply

CLEAN_JS = """\
NEWACTION('Orders|create', {
\tname: 'Create an order',
\tinput: '*name:String, price:Number',
\troute: '+API ?',
\taction: async function($, model) {
\t\tmodel.id = UID();
\t\tvar items = await DATA.find('tbl_order')
\t\t\t.where('isremoved', false)
\t\t\t.promise($);
\t\tfor (var i = 0; i < items.length; i++)
\t\t\tFUNC.normalize(items[i]);
\t\tvar html = '<div class="box">' + model.name + '</div>';
\t\tvar re = /a\\/b"c/g;
\t\t// a "comment" with double quotes
\t\t$.success(model.id);
\t}
});

NEWSCHEMA('Orders', function(schema) {
\tschema.action('list', {
\t\taction: async function($) {
\t\t\t$.callback(await DATA.list('tbl_order').promise($));
\t\t}
\t});
});

exports.install = function() {
\tROUTE('GET /', index);
};

function index($) {
\t$.view('index');
}

COMPONENT('counter', 'step:1', function(self, config, cls) {

\tvar count = 0;

\tself.make = function() {
\t\tself.aclass(cls);
\t\tself.event('click', 'button', function() {
\t\t\tself.set(count + config.step);
\t\t});
\t};

\tself.setter = function(value) {
\t\tcount = value || 0;
\t\tswitch (typeof value) {
\t\t\tcase 'number':
\t\t\t\tself.find('span').text(count);
\t\t\t\tbreak;
\t\t}
\t};
});
"""

# each rule, planted once in an otherwise clean file: (rule, path, text, line)
PLANTED = [
    ("tabs", "schemas/a.js", "var a = 1;\n    var b = 2;\n", 2),
    ("trailing-space", "schemas/a.js", "var a = 1; \nvar b = 2;\n", 1),
    ("semicolon", "schemas/a.js", "var a = 1;\nvar b = a + 1\n", 2),
    ("semicolon", "public/js/a.js", "self.make = function() {\n\tself.aclass('x');\n}\n", 3),
    ("semicolon", "public/js/a.js", "ON('ready', function() {\n\tSET('a', 1);\n})\n", 3),
    ("quotes", "schemas/a.js", "var a = \"text\";\n", 1),
    ("var", "schemas/a.js", "function f() {\n\tconst a = 1;\n\treturn a;\n}\n", 2),
    ("for-loop", "schemas/a.js", "var a = [1];\na.forEach(function(x) {\n\tFUNC.x(x);\n});\n",
     2),
    ("file-name", "schemas/OrderList.js", "var a = 1;\n", 0),
    ("file-name", "schemas/order_list.js", "var a = 1;\n", 0),
    ("action-id", "schemas/a.js", "NEWACTION('createOrder', {\n\taction: function($) {\n"
     "\t\t$.success();\n\t}\n});\n", 1),
    ("action-id", "schemas/a.js", "NEWSCHEMA('orders', function(schema) {\n});\n", 1),
    ("action-response", "schemas/a.js", "NEWACTION('Orders|read', {\n\taction: function($) {\n"
     "\t\t$.json({ ok: true });\n\t}\n});\n", 3),
    ("require", "controllers/a.js", "var helper = require('../modules/helper');\n", 1),
    ("require", "definitions/a.js", "var Fs = require('fs');\n", 1),
    ("not-swing", "public/js/a.js", "// import javax.swing.JComponent;\nvar a = 1;\n", 1),
    ("tabs", "public/css/a.css", ".a {\n  color: red;\n}\n", 2),
    ("trailing-space", "views/index.html", "<div>\t\n</div>\n", 1),
    ("quotes", "views/index.html", "<div class=\"a\">\n<script>\n\tSET(\"a\", 1);\n</script>\n"
     "</div>\n", 3),
    ("semicolon", "views/index.html", "<p>x</p>\n<script>\n\tSET('a', 1)\n</script>\n", 3),
]


def test_a_clean_file_has_no_findings() -> None:
    assert check(PurePath("schemas/orders.js"), CLEAN_JS) == []
    assert check(PurePath("public/css/app.css"), ".a {\n\tcolor: red;\n}\n") == []
    html = ("<div class=\"box\">\n\t<ui-component name=\"counter\" path=\"common.count\">"
            "</ui-component>\n</div>\n<script>\n\tvar common = { count: 1 };\n</script>\n"
            "<script type=\"text/html\">\n\t<b>{{ \"x\" }}</b>\n</script>\n")
    assert check(PurePath("views/index.html"), html) == []
    # a top-level const for an npm package, and require() outside the app's folders
    assert check(PurePath("index.js"), "const Sharp = require('sharp');\n"
                 "require('total5');\nTotal.run({ port: 8000 });\n") == []


def test_every_rule_is_planted_and_found() -> None:
    assert {rule for rule, *_ in PLANTED} == set(rules()["rules"])
    for rule, path, text, line in PLANTED:
        found = [(f.rule, f.line) for f in check(PurePath(path), text)]
        assert found == [(rule, line)], (rule, path, found)


def test_findings_are_grouped_and_worded_for_the_model() -> None:
    text = "var a = \"x\";\nvar b = \"y\"\n"
    said = format_findings("schemas/a.js", check(PurePath("schemas/a.js"), text), "Total.js")
    assert said.startswith("\n\nTotal.js conventions check of schemas/a.js: 3 findings.")
    assert "- lines 1, 2: write strings in single quotes" in said
    assert "- line 2: end the statement with a semicolon [semicolon]" in said
    assert format_findings("x.js", [], "Total.js") == ""


BAD = "NEWACTION('createOrder', {\n    action: function($) {\n\t\t$.success(\"ok\")\n\t}\n});\n"
PATCH = """*** Begin Patch
*** Add File: public/js/Widget.js
+COMPONENT('widget', function(self) {
+\tself.make = function() {
+\t\tself.html("hi");
+\t};
+});
*** End Patch"""


def total5_project(tmp: Path) -> Path:
    root = tmp / "project"
    root.mkdir()
    (root / "package.json").write_text('{"dependencies": {"total5": "latest"}}')
    (root / "schemas").mkdir()
    (root / "schemas/orders.js").write_text("var a = 1;\n")
    return root


def tool_outputs(messages: Sequence[Message]) -> list[str]:
    return [p.output for m in messages for p in m.parts if isinstance(p, ToolPart)]


def test_the_findings_reach_the_model_in_the_tool_results(tmp_path: Path) -> None:
    root = total5_project(tmp_path)
    turns = [
        call(("write", {"path": "schemas/new.js", "content": BAD})),
        call(("read", {"path": "schemas/orders.js"}),  # an existing file is read first
             ("edit", {"path": "schemas/orders.js", "old_string": "var a = 1;",
                       "new_string": "var a = \"one\";"})),
        call(("patch", {"patch": PATCH})),
        call(("write", {"path": "schemas/clean.js", "content": CLEAN_JS})),
        reply("fixed"),
    ]
    ran = run_session(tmp_path, root, ["go"], turns)  # short: no documentation search
    write, _read, edit, patch, clean = tool_outputs(ran.messages)
    assert write.startswith("Created schemas/new.js (5 lines).\n\nTotal.js conventions check")
    for rule in ("[action-id]", "[tabs]", "[quotes]", "[semicolon]"):
        assert rule in write
    assert "line 1: write strings in single quotes" in edit
    assert "public/js/Widget.js" in patch and "[file-name]" in patch and "[quotes]" in patch
    assert clean == f"Created schemas/clean.js ({CLEAN_JS.count(chr(10))} lines)."
    sent = [p.output for m in ran.requests[1].messages for p in m.parts if isinstance(p, ToolPart)]
    assert sent == [write]  # what the model received with its next request


@pytest.mark.parametrize("setup", ["other project", "conventions off", "new folder"])
def test_no_check_outside_total5_projects_or_when_switched_off(tmp_path: Path,
                                                                setup: str) -> None:
    root = tmp_path / "project"
    root.mkdir()
    knowledge = KnowledgeSettings()
    if setup == "other project":
        (root / "package.json").write_text('{"dependencies": {"express": "4"}}')
    elif setup == "conventions off":
        (root / "package.json").write_text('{"dependencies": {"total5": "1"}}')
        knowledge = KnowledgeSettings(conventions=False)
    turns = [call(("write", {"path": "app.js", "content": BAD})), reply("ok")]
    ran = run_session(tmp_path, root, ["go"], turns, knowledge=knowledge)
    assert tool_outputs(ran.messages) == ["Created app.js (5 lines)."]


def test_only_the_projects_own_js_html_and_css_files_are_checked() -> None:
    from totem.knowledge.totaljs.conventions import checked_file

    for name in ("schemas/orders.js", "views/index.html", "public/css/app.css", "index.js"):
        assert checked_file(PurePath(name)), name
    for name in ("node_modules/total5/index.js", "public/js/spa.min@20.js", "config",
                 "package.json", "README.md", "tmp/cache.js"):
        assert not checked_file(PurePath(name)), name
