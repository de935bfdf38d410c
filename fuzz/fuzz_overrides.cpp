// Fuzz target: the Hydra-style override grammar and applying overrides to a config tree. Each input line is one
// override (as one command-line argument); those that parse are applied, in order, to a small Bridge-shaped tree,
// which is then linted, as `check FILE -- OVERRIDES` does.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/schema.hpp"
#include "engine/lint_session.hpp"
#include "parser/overrides.hpp"

namespace {

const char* const kBase = R"(model:
  num_layers: 4
  hidden_size: 64
  num_attention_heads: 4
  recompute_granularity: full
  recompute_method: uniform
  recompute_num_layers: 1
  recompute_modules: [core_attn]
mixed_precision: bf16_mixed
train:
  micro_batch_size: 1
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<mbl::Override> overrides;
    std::size_t start = 0;
    for (int n = 1; start <= text.size() && n <= 64; ++n) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        mbl::OverrideParse parsed = mbl::parse_override("<override " + std::to_string(n) + ">",
                                                        std::string_view(text).substr(start, end - start));
        if (parsed.override) overrides.push_back(std::move(*parsed.override));
        start = end + 1;
    }
    // As `check base.yaml -- OVERRIDES` runs: the overrides applied to the tree, which is then linted; the same
    // overrides merged as a --config-file tree would be too.
    mbl::SessionOptions options;
    options.mcore = "0.20.dev";
    options.prepare = [&](mbl::Value& root, const mbl::Revision& revision, std::vector<mbl::Diagnostic>& errors) {
        mbl::Value again = root;
        mbl::apply_overrides(root, overrides, revision, errors);
        mbl::merge_config_tree(again, root);
    };
    mbl::SourceManager sources;
    sources.add("/nonexistent/mbridge-lint-fuzz/base.yaml", kBase);
    mbl::LintSession session(options, sources);
    (void)session.lint("/nonexistent/mbridge-lint-fuzz/base.yaml");
    return 0;
}
