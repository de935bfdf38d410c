#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

#include "../support/lint_text.hpp"
#include "../support/product_sources.hpp"
#include "core/schema.hpp"
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
    // A Python recipe's tree as the evaluator leaves it: the rule runner sees the model alone.
    auto fin =
        mbl::finalize(root, *mbl::Schema::instance().revision("main"), mbl::SourceRange::point("recipe.py", 1, 1));
    const auto found = mbl::rule_diagnostics(fin.model, {});
    CHECK_FALSE(find(found, "RC004"));
    CHECK_FALSE(find(found, "RC005"));
    CHECK(find(found, "RC115"));  // dropout is known: the info still applies
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

namespace {

// Whether `code` reports on the first config of `yaml` when it runs alone, without the rule runner.
bool fires_alone(const std::string& code, const std::string& yaml, const mbl::SessionOptions& options) {
    const std::string path =
        (std::filesystem::temp_directory_path() / "mbridge-lint-in-memory" / "alone.yaml").string();
    mbl::SourceManager sources;
    sources.add(path, yaml);
    mbl::LintSession session(options, sources);
    const mbl::FileResult file = session.lint(path);
    const auto model = session.effective_model(file, 0);
    const mbl::Rule* rule = mbl::find_rule(code);
    if (!model || !rule) return false;
    mbl::RuleContext ctx(*model, file.rule_options);
    rule->check(ctx);
    return !ctx.take(rule->info()).empty();
}

}  // namespace

// Where a rule and one it yields to (RuleInfo::yields_to) would both report, only the one yielded to does: one
// problem, one report. Removing a yields_to entry fails this test.
TEST_CASE("a rule that yields to another is quiet where that one reports", "[rules]") {
    struct Case {
        std::string yielding, to, yaml;
        mbl::SessionOptions options = {};
    };
    const std::string memory_model =
        "train: {micro_batch_size: 1, global_batch_size: 64}\nmodel:\n  transformer_impl: local\n  num_layers: 32\n"
        "  hidden_size: 4096\n  num_attention_heads: 32\n  num_query_groups: 8\n  ffn_hidden_size: 14336\n"
        "  gated_linear_unit: true\n  normalization: RMSNorm\n  add_bias_linear: false\n  attention_dropout: 0.0\n"
        "  hidden_dropout: 0.0\n  bf16: true\n  vocab_size: 128256\n  seq_length: 2048\n"
        "  tensor_model_parallel_size: 4\n  sequence_parallel: true\n  pipeline_model_parallel_size: 2\n"
        "  recompute_granularity: full\n  recompute_method: uniform\n  recompute_num_layers: 1\n";
    const std::vector<Case> cases = {
        {"RC110", "RC007",
         "model:\n  tensor_model_parallel_size: 1\n  sequence_parallel: true\n  recompute_granularity: full\n"
         "  recompute_method: uniform\n  recompute_num_layers: 1\n  distribute_saved_activations: true\n"},
        {"RC116", "RC015",
         "model:\n  num_moe_experts: 8\n  moe_layer_recompute: true\n  recompute_granularity: full\n"
         "  recompute_method: uniform\n  recompute_num_layers: 1\n"},
        {"RC014",
         "RC013",
         "mixed_precision: bf16_with_fp8_delayed_scaling_mixed\nmodel:\n  num_moe_experts: 8\n"
         "  moe_grouped_gemm: true\n  recompute_granularity: selective\n  recompute_modules: [moe_act]\n",
         {.te_version = "2.4.0"}},
        {"RC109", "RC002", "model:\n  recompute_granularity: Full\n  recompute_modules: [core_attn]\n"},
        {"RC202", "RC201", memory_model, {.gpu_memory_bytes = 80.0 * (1ull << 30), .data_parallel_size = 8}},
    };
    std::set<std::pair<std::string, std::string>> covered;
    for (const auto& c : cases) {
        INFO(c.yielding << " yields to " << c.to << "\n" << c.yaml);
        const auto ds = mbl::test::lint_text(c.yaml, c.options);
        CHECK(find(ds, c.to));
        CHECK_FALSE(find(ds, c.yielding));
        CHECK(fires_alone(c.yielding, c.yaml, c.options));
        covered.emplace(c.yielding, c.to);
    }
    for (const auto& rule : mbl::all_rules())
        for (const auto to : rule->info().yields_to)
            if (!to.empty()) {
                INFO(rule->info().code << " yields to " << to << ": add a case here where both would report");
                CHECK(covered.count({std::string(rule->info().code), std::string(to)}));
            }
}

TEST_CASE("one pipeline: nothing outside engine/ includes the per-tree step, so every caller takes LintSession",
          "[rules][pipeline]") {
    std::vector<std::string> includers;
    for (const auto& f : mbl::test::sources_under({"core", "pyeval", "parser", "memory", "rules", "config", "report",
                                                   "integrations", "cli", "gpu_check", "tests", "fuzz"}))
        if (f.path.rfind("tests/data/", 0) != 0 &&  // the layering test's data includes upwards on purpose
            f.text.find("#include \"engine/linter.hpp\"") != std::string::npos)
            includers.push_back(f.path);
    CHECK(includers == std::vector<std::string>{});
}
