#include <catch2/catch.hpp>

#include "../support/lint_text.hpp"
#include "core/schema.hpp"
#include "engine/linter.hpp"
#include "parser/yaml_loader.hpp"
#include "rules/registry.hpp"

namespace {
std::vector<mbl::Diagnostic> lint(const std::string& yaml, const std::string& rev = "0.20.dev") {
    return mbl::test::lint_text(yaml, {.mcore = rev}, "cfg.yaml");
}
const mbl::Diagnostic* find(const std::vector<mbl::Diagnostic>& ds, const std::string& code) {
    for (const auto& d : ds)
        if (d.code == code) return &d;
    return nullptr;
}
}  // namespace

TEST_CASE("all problems of a config are reported in one run", "[rules]") {
    auto ds = lint("model:\n  cpu_offloading: true\n  recompute_granularity: full\n  sequence_parallel: true\n"
                   "  distribute_saved_activations: true\n  tensor_model_parallel_size: 2\n");
    for (const char* code : {"RC001", "RC004", "RC005", "RC007"}) CHECK(find(ds, code));
}

TEST_CASE("unknown labels get a did-you-mean, and labels of later revisions say so", "[rules]") {
    auto ds = lint("model:\n  recompute_granularity: selective\n  recompute_modules: [moe_actt, mhc]\n");
    std::vector<const mbl::Diagnostic*> rc008;
    for (const auto& d : ds)
        if (d.code == "RC008") rc008.push_back(&d);
    REQUIRE(rc008.size() == 2);
    CHECK(rc008[0]->message.find("did you mean \"moe_act\"") != std::string::npos);
    CHECK(rc008[0]->range.column == 23);
    REQUIRE(rc008[0]->fix);
    CHECK(rc008[0]->fix->field_edits.at(0).new_value == "moe_act");
    // Every revision that accepts the label is named; the first later one is suggested.
    bool names_them = false;
    for (const auto& n : rc008[1]->notes)
        names_them |= n.message ==
                      "\"mhc\" is accepted by Megatron Core dev, main; pass --mcore dev if that is what the job runs";
    CHECK(names_them);
    CHECK_FALSE(rc008[1]->fix);  // not a typo: no replacement
}

TEST_CASE("error rules apply only at revisions that have the rejection", "[rules]") {
    const std::string yaml = "model:\n  recompute_granularity: selective\n  recompute_modules: [mhc]\n";
    CHECK(find(lint(yaml, "main"), "RC016"));
    CHECK_FALSE(find(lint(yaml, "main"), "RC008"));
    CHECK(find(lint(yaml, "0.20.dev"), "RC008"));
    CHECK_FALSE(find(lint(yaml, "0.20.dev"), "RC016"));
}

TEST_CASE("diagnostics point at the line that set the value, with notes for the others", "[rules]") {
    auto ds = lint("model:\n  moe_grouped_gemm: false\n  num_moe_experts: 8\n  recompute_granularity: selective\n"
                   "  recompute_modules:\n    - moe_act\n");
    const auto* d = find(ds, "RC009");
    REQUIRE(d);
    CHECK(d->range.line == 6);
    REQUIRE_FALSE(d->notes.empty());
    CHECK(d->notes[0].range.line == 2);
}

TEST_CASE("fp8 settings set by the precision recipe explain where they came from", "[rules]") {
    auto ds = lint("mixed_precision: bf16_with_fp8_delayed_scaling_mixed\nmodel:\n  num_moe_experts: 8\n"
                   "  moe_grouped_gemm: true\n  recompute_granularity: selective\n  recompute_modules: [layernorm]\n");
    const auto* d = find(ds, "RC013");
    REQUIRE(d);
    bool located = false;
    for (const auto& n : d->notes) located |= n.range.line == 1;
    CHECK(located);
}

TEST_CASE("rules never fire on unknown values", "[rules]") {
    mbl::Value root = mbl::Value::map();
    mbl::Value model = mbl::Value::map();
    model.set("recompute_granularity", mbl::Value::string("full"));
    model.set("recompute_method", mbl::Value::unknown("returned by a helper the linter could not follow"));
    model.set("recompute_num_layers", mbl::Value::unknown("argument"));
    root.set("model", std::move(model));
    mbl::SourceManager sources;
    mbl::Linter linter({mbl::Schema::instance().revision("main"), {}}, sources);
    auto r = linter.lint_tree(root, mbl::SourceRange::point("recipe.py", 1, 1));
    CHECK_FALSE(find(r.diagnostics, "RC004"));
    CHECK_FALSE(find(r.diagnostics, "RC005"));
    CHECK(find(r.diagnostics, "RC115"));  // dropout is known: the info still applies
}

TEST_CASE("wrong-typed values are reported once and then ignored by rules", "[rules]") {
    auto ds =
        lint("model:\n  recompute_granularity: full\n  recompute_num_layers: \"2\"\n  recompute_method: uniform\n");
    CHECK(find(ds, "IN005"));
    CHECK_FALSE(find(ds, "RC005"));
}

TEST_CASE("the TE-version rule needs --te-version", "[rules]") {
    const std::string yaml =
        "mixed_precision: bf16_with_mxfp8_mixed\nmodel:\n  num_moe_experts: 8\n  moe_grouped_gemm: true\n"
        "  recompute_granularity: selective\n  recompute_modules: [moe_act]\n";
    CHECK_FALSE(find(lint(yaml), "RC014"));
    CHECK(find(mbl::test::lint_text(yaml, {.mcore = "0.20.dev", .te_version = "2.5.1"}), "RC014"));
    CHECK_FALSE(find(mbl::test::lint_text(yaml, {.mcore = "0.20.dev", .te_version = "2.6.0"}), "RC014"));
}

TEST_CASE("0.13 refuses output-discarding recompute under every fp8 recipe, 0.14 only under delayed", "[rules]") {
    const std::string yaml =
        "mixed_precision: bf16_with_fp8_current_scaling_mixed\nmodel:\n  num_moe_experts: 8\n"
        "  moe_grouped_gemm: true\n  recompute_granularity: selective\n  recompute_modules: [moe_act]\n";
    CHECK(find(lint(yaml, "0.13"), "RC013"));
    CHECK_FALSE(find(lint(yaml, "0.14"), "RC013"));
}

TEST_CASE("unknown model fields are input errors with a suggestion", "[rules]") {
    auto ds = lint("model:\n  recompute_granulrity: full\n");
    const auto* d = find(ds, "IN004");
    REQUIRE(d);
    CHECK(d->message.find("did you mean \"recompute_granularity\"") != std::string::npos);
    CHECK(d->range.line == 2);
}
