// FieldEdit -> text edits, for the YAML front end (from the real loader's provenance) and for Python recipe text
// (from the statement ranges the recipe front end records). Everything outside the edited entry must stay as written.
#include <catch2/catch.hpp>

#include "core/line_index.hpp"
#include "engine/fixes.hpp"
#include "parser/front_end.hpp"
#include "parser/python_edit.hpp"
#include "parser/yaml_edit.hpp"
#include "parser/yaml_loader.hpp"

using namespace mbl;

namespace {

const std::string kFile = "cfg.yaml";

// Applies one FieldEdit to YAML text the way --fix does. `beside` names the field whose line the diagnostic points at
// (where a missing field is inserted). Returns "<none>" when the front end declines.
std::string edit_yaml(const std::string& text, FieldEdit edit, const std::string& beside = "") {
    auto loaded = load_yaml(kFile, text);
    REQUIRE(loaded.ok());
    SourceManager sources;
    sources.add(kFile, text);
    Diagnostic d;
    if (!beside.empty()) {
        const Value* model = loaded.root.find("model");
        const Value* at = model->find(beside);
        if (!at && model->find("transformer")) at = model->find("transformer")->find(beside);
        REQUIRE(at);
        d.range = at->prov().range;
    }
    d.fix = Fix::safe("t", {std::move(edit)});
    std::vector<Diagnostic> diags{d};
    resolve_fix_edits(diags, loaded.root, sources);
    if (diags[0].fix->edits.empty()) return "<none>";
    auto out = apply_edits(text, diags[0].fix->edits);
    REQUIRE(out);
    // Whatever the edit did, the file must still load.
    CHECK(load_yaml(kFile, out->text).ok());
    return out->text;
}

FieldEdit remove_field(const std::string& field) { return {FieldEdit::Op::Remove, FieldName::named(field), "", -1}; }
FieldEdit set_field(const std::string& field, const std::string& v) {
    return {FieldEdit::Op::Set, FieldName::named(field), v, -1};
}
FieldEdit replace_item(const std::string& field, const std::string& v, int i) {
    return {FieldEdit::Op::ReplaceItem, FieldName::named(field), v, i};
}

}  // namespace

TEST_CASE("LineIndex maps offsets and 1-based positions, with the empty line after a final newline", "[edits]") {
    LineIndex idx("ab\ncd\n");
    CHECK(idx.line_count() == 3);
    CHECK(idx.offset(2, 1) == 3);
    CHECK(idx.offset(2, 99) == 5);  // clamped to the line's end, before its newline
    CHECK(idx.offset(3, 1) == 6);
    CHECK(idx.line_of(6) == 3);
    CHECK(idx.column_of(4) == 2);
    LineIndex crlf("a\r\nb");
    CHECK(crlf.line_end(1) == 1);
    CHECK(crlf.next_line_start(1) == 3);
}

TEST_CASE("YAML: removing a block entry removes its lines and nothing else", "[edits][yaml]") {
    const std::string text = "# header\n"
                             "model:\n"
                             "  recompute_granularity: selective  # chosen for memory\n"
                             "  recompute_num_layers: 4  # left over from full\n"
                             "\n"
                             "  num_layers: 8\n";
    CHECK(edit_yaml(text, remove_field("recompute_num_layers")) ==
          "# header\n"
          "model:\n"
          "  recompute_granularity: selective  # chosen for memory\n"
          "\n"
          "  num_layers: 8\n");
}

TEST_CASE("YAML: removing a block list value removes every item line, keeps the comment after it", "[edits][yaml]") {
    const std::string text = "model:\n"
                             "  recompute_granularity: full\n"
                             "  recompute_modules:\n"
                             "    - core_attn\n"
                             "    # the next one matters\n"
                             "    - mlp\n"
                             "  # about num_layers\n"
                             "  num_layers: 8\n";
    CHECK(edit_yaml(text, remove_field("recompute_modules")) == "model:\n"
                                                                "  recompute_granularity: full\n"
                                                                "  # about num_layers\n"
                                                                "  num_layers: 8\n");
    // A block list written at the key's own indentation belongs to the key too.
    const std::string same_indent = "model:\n  recompute_modules:\n  - core_attn\n  - mlp\n  num_layers: 8\n";
    CHECK(edit_yaml(same_indent, remove_field("recompute_modules")) == "model:\n  num_layers: 8\n");
}

TEST_CASE("YAML: removing the only entry of a block mapping is declined (the mapping would become null)",
          "[edits][yaml]") {
    CHECK(edit_yaml("model:\n  recompute_num_layers: 4\n", remove_field("recompute_num_layers")) == "<none>");
}

TEST_CASE("YAML: flow mappings lose the entry and one comma", "[edits][yaml]") {
    const std::string text = "model: {recompute_granularity: selective, recompute_num_layers: 4, num_layers: 8}\n";
    CHECK(edit_yaml(text, remove_field("recompute_num_layers")) ==
          "model: {recompute_granularity: selective, num_layers: 8}\n");
    CHECK(edit_yaml(text, remove_field("num_layers")) ==
          "model: {recompute_granularity: selective, recompute_num_layers: 4}\n");
    CHECK(edit_yaml(text, remove_field("recompute_granularity")) ==
          "model: {recompute_num_layers: 4, num_layers: 8}\n");
    CHECK(edit_yaml("model: {recompute_num_layers: 4}\n", remove_field("recompute_num_layers")) == "model: {}\n");
}

TEST_CASE("YAML: setting a value replaces only the value, keeping quotes elsewhere and the comment", "[edits][yaml]") {
    const std::string text =
        "model:\n  distribute_saved_activations: yes   # true in YAML 1.1\n  sequence_parallel: true\n";
    CHECK(edit_yaml(text, set_field("distribute_saved_activations", "false")) ==
          "model:\n  distribute_saved_activations: false   # true in YAML 1.1\n  sequence_parallel: true\n");
    // A multi-line value is replaced as a whole.
    CHECK(edit_yaml("model:\n  recompute_granularity:\n    full\n  num_layers: 2\n",
                    set_field("recompute_granularity", "selective")) ==
          "model:\n  recompute_granularity: selective\n  num_layers: 2\n");
    // Strings that would read as something else are quoted.
    CHECK(edit_yaml("model:\n  recompute_method: block\n  num_layers: 2\n", set_field("recompute_method", "yes")) ==
          "model:\n  recompute_method: true\n  num_layers: 2\n");
    CHECK(yaml_edit::render(Value::string("yes")) == "\"yes\"");
    CHECK(yaml_edit::render(Value::string("core_attn")) == "core_attn");
    CHECK(yaml_edit::render(Value::string("a: b")) == "\"a: b\"");
}

TEST_CASE("YAML: a missing field is inserted after the diagnostic's entry, with its indentation", "[edits][yaml]") {
    const std::string text = "model:\n    recompute_granularity: full  # whole layers\n    recompute_num_layers: 1\n";
    CHECK(
        edit_yaml(text, set_field("recompute_method", "uniform"), "recompute_granularity") ==
        "model:\n    recompute_granularity: full  # whole layers\n    recompute_method: uniform\n    recompute_num_layers: 1\n");
    // At the end of a file without a final newline.
    CHECK(edit_yaml("model:\n  num_layers: 2\n  recompute_granularity: full", set_field("recompute_method", "uniform"),
                    "recompute_granularity") ==
          "model:\n  num_layers: 2\n  recompute_granularity: full\n  recompute_method: uniform\n");
    // In a flow mapping.
    CHECK(edit_yaml("model: {recompute_granularity: full, recompute_num_layers: 1}\n",
                    set_field("recompute_method", "uniform"), "recompute_granularity") ==
          "model: {recompute_granularity: full, recompute_method: uniform, recompute_num_layers: 1}\n");
    // CRLF files stay CRLF.
    CHECK(edit_yaml("model:\r\n  recompute_granularity: full\r\n  num_layers: 2\r\n",
                    set_field("recompute_method", "uniform"), "recompute_granularity") ==
          "model:\r\n  recompute_granularity: full\r\n  recompute_method: uniform\r\n  num_layers: 2\r\n");
}

TEST_CASE("YAML: replacing one list item keeps the list's style and the item's quotes", "[edits][yaml]") {
    CHECK(edit_yaml("model:\n  recompute_modules: [core_atn, mlp]  # two\n  num_layers: 2\n",
                    replace_item("recompute_modules", "core_attn", 0)) ==
          "model:\n  recompute_modules: [core_attn, mlp]  # two\n  num_layers: 2\n");
    CHECK(edit_yaml("model:\n  recompute_modules: ['mlp', \"atn\"]\n  num_layers: 2\n",
                    replace_item("recompute_modules", "core_attn", 1)) ==
          "model:\n  recompute_modules: ['mlp', \"core_attn\"]\n  num_layers: 2\n");
    CHECK(edit_yaml("model:\n  recompute_modules:\n    - mlp\n    - moe_lyer\n  num_layers: 2\n",
                    replace_item("recompute_modules", "moe", 1)) ==
          "model:\n  recompute_modules:\n    - mlp\n    - moe\n  num_layers: 2\n");
}

TEST_CASE("YAML: builder configs are edited under model.transformer", "[edits][yaml]") {
    const std::string text =
        "model:\n  _target_: x.Builder\n  transformer:\n    recompute_granularity: selective\n    recompute_num_layers: 2\n";
    CHECK(edit_yaml(text, remove_field("recompute_num_layers")) ==
          "model:\n  _target_: x.Builder\n  transformer:\n    recompute_granularity: selective\n");
}

TEST_CASE("YAML: quoted keys, and keys in list items are declined", "[edits][yaml]") {
    CHECK(edit_yaml("model:\n  \"recompute_num_layers\": 4\n  num_layers: 2\n", remove_field("recompute_num_layers")) ==
          "model:\n  num_layers: 2\n");
    auto span = yaml_edit::entry_at("- model: 1\n", 2);
    CHECK(!span);
}

TEST_CASE("YAML comments: only real comments, with their columns", "[edits][yaml]") {
    auto comments = yaml_edit::comments("a: \"x # not\"  # yes\n# own line\nb: it's#no # last\n");
    REQUIRE(comments.size() == 3);
    CHECK(comments[0].line == 1);
    CHECK(comments[0].column == 15);
    CHECK(comments[0].text == " yes");
    CHECK(!comments[0].own_line);
    CHECK(comments[1].own_line);
    CHECK(comments[2].text == " last");
}

namespace {

const std::string kPy = "recipe.py";

// A Python statement's range as the recipe front end records it: from its first non-blank character to the end of
// its last line's code.
SourceRange statement(const std::string& text, int first_line, int last_line = 0) {
    LineIndex idx(text);
    if (last_line == 0) last_line = first_line;
    const std::size_t b = idx.line_start(first_line);
    std::size_t col = 0;
    while (text[b + col] == ' ') ++col;
    std::string last(text.substr(idx.line_start(last_line), idx.line_end(last_line) - idx.line_start(last_line)));
    if (auto hash = last.find("  #"); hash != std::string::npos) last.resize(hash);
    return SourceRange{kPy, first_line, static_cast<int>(col) + 1, last_line, static_cast<int>(last.size()) + 1};
}

std::string edit_python(const std::string& text, const FieldEdit& edit, const Value* value, SourceRange entry,
                        int siblings = 3) {
    EditSite site;
    site.field = std::string(edit.field.str());
    site.value = value;
    site.entry = std::move(entry);
    site.siblings = siblings;
    auto edits = python_edit::field_edit(kPy, edit, site, text, LineIndex(text));
    if (edits.empty()) return "<none>";
    return apply_edits(text, edits)->text;
}

}  // namespace

TEST_CASE("Python: an assignment statement is removed with its line, comment included", "[edits][python]") {
    const std::string text = "def recipe():\n"
                             "    cfg = base()\n"
                             "    cfg.model.recompute_granularity = \"selective\"\n"
                             "    cfg.model.recompute_num_layers = 4  # from the old full setup\n"
                             "    return cfg\n";
    Value v = Value::integer(4, Provenance::at(Origin::Recipe, statement(text, 4)));
    CHECK(edit_python(text, remove_field("recompute_num_layers"), &v, v.prov().range) ==
          "def recipe():\n    cfg = base()\n    cfg.model.recompute_granularity = \"selective\"\n    return cfg\n");
}

TEST_CASE("Python: a multi-line assignment goes as a whole, the only statement of a block stays", "[edits][python]") {
    const std::string text = "def recipe(cfg):\n"
                             "    cfg.model.recompute_modules = [\n"
                             "        \"core_attn\",\n"
                             "    ]\n"
                             "    if cfg.model.fp8:\n"
                             "        cfg.model.recompute_num_layers = 2\n"
                             "    return cfg\n";
    Value list = Value::list({}, Provenance::at(Origin::Recipe, statement(text, 2, 4)));
    CHECK(edit_python(text, remove_field("recompute_modules"), &list, list.prov().range) ==
          "def recipe(cfg):\n    if cfg.model.fp8:\n        cfg.model.recompute_num_layers = 2\n    return cfg\n");
    Value n = Value::integer(2, Provenance::at(Origin::Recipe, statement(text, 6)));
    CHECK(edit_python(text, remove_field("recompute_num_layers"), &n, n.prov().range) == "<none>");
}

TEST_CASE("Python: setting replaces the right-hand side as a Python literal", "[edits][python]") {
    const std::string text = "cfg.model.distribute_saved_activations = True  # why not\n";
    Value v = Value::boolean(true, Provenance::at(Origin::Recipe, statement(text, 1)));
    CHECK(edit_python(text, set_field("distribute_saved_activations", "false"), &v, v.prov().range) ==
          "cfg.model.distribute_saved_activations = False  # why not\n");
    CHECK(python_edit::render(Value::string("uniform")) == "\"uniform\"");
    CHECK(python_edit::render(Value::null()) == "None");
}

TEST_CASE("Python: a missing field becomes a sibling assignment on the next line", "[edits][python]") {
    const std::string text =
        "def r():\n    cfg.model.recompute_granularity = \"full\"\n    cfg.model.recompute_num_layers = 1\n";
    CHECK(edit_python(text, set_field("recompute_method", "uniform"), nullptr, statement(text, 2)) ==
          "def r():\n    cfg.model.recompute_granularity = \"full\"\n    cfg.model.recompute_method = \"uniform\"\n"
          "    cfg.model.recompute_num_layers = 1\n");
}

TEST_CASE("Python: keyword arguments of a provider call", "[edits][python]") {
    const std::string text = "m = GPTModelProvider(num_layers=2, recompute_num_layers=4, hidden_size=64)\n";
    const int col = static_cast<int>(text.find("recompute_num_layers")) + 1;
    SourceRange kw{kPy, 1, col, 1, col + static_cast<int>(std::string("recompute_num_layers=4").size())};
    Value v = Value::integer(4, Provenance::at(Origin::Recipe, kw));
    CHECK(edit_python(text, remove_field("recompute_num_layers"), &v, kw) ==
          "m = GPTModelProvider(num_layers=2, hidden_size=64)\n");
    CHECK(edit_python(text, set_field("recompute_num_layers", "1"), &v, kw) ==
          "m = GPTModelProvider(num_layers=2, recompute_num_layers=1, hidden_size=64)\n");
    CHECK(edit_python(text, set_field("recompute_method", "uniform"), nullptr, kw) ==
          "m = GPTModelProvider(num_layers=2, recompute_num_layers=4, recompute_method=\"uniform\", hidden_size=64)\n");
}

TEST_CASE("Python: one string of a list literal is replaced, keeping its quotes", "[edits][python]") {
    const std::string text = "cfg.model.recompute_modules = [\"core_atn\", 'mlp_x']\n";
    const Provenance p = Provenance::at(Origin::Recipe, statement(text, 1));
    Value list = Value::list({Value::string("core_atn", p), Value::string("mlp_x", p)}, p);
    CHECK(edit_python(text, replace_item("recompute_modules", "core_attn", 0), &list, p.range) ==
          "cfg.model.recompute_modules = [\"core_attn\", 'mlp_x']\n");
    CHECK(edit_python(text, replace_item("recompute_modules", "mlp", 1), &list, p.range) ==
          "cfg.model.recompute_modules = [\"core_atn\", 'mlp']\n");
}

TEST_CASE("Python: chained, augmented and unrelated statements are declined", "[edits][python]") {
    const std::string chained = "cfg.model.recompute_num_layers = other.x = 4\n";
    Value v = Value::integer(4, Provenance::at(Origin::Recipe, statement(chained, 1)));
    CHECK(edit_python(chained, remove_field("recompute_num_layers"), &v, v.prov().range) == "<none>");
    const std::string augmented = "cfg.model.recompute_num_layers += 4\n";
    Value a = Value::integer(4, Provenance::at(Origin::Recipe, statement(augmented, 1)));
    CHECK(edit_python(augmented, remove_field("recompute_num_layers"), &a, a.prov().range) == "<none>");
    const std::string other = "cfg.model.num_layers = 4\n";
    Value o = Value::integer(4, Provenance::at(Origin::Recipe, statement(other, 1)));
    CHECK(edit_python(other, remove_field("recompute_num_layers"), &o, o.prov().range) == "<none>");
}

TEST_CASE("Python comments skip strings, including triple-quoted ones", "[edits][python]") {
    auto comments = python_edit::comments(
        "\"\"\"Docs.\n# mbridge-lint: disable=RC104 (inside a docstring)\n\"\"\"\nx = '#no'  # yes\n    # own\n");
    REQUIRE(comments.size() == 2);
    CHECK(comments[0].line == 4);
    CHECK(comments[0].text == " yes");
    CHECK(!comments[0].own_line);
    CHECK(comments[1].own_line);
    CHECK(comments[1].column == 5);
}
