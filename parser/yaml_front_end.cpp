// The YAML front end: Bridge config dumps, override files and bare `model:` mappings.
#include "core/input_errors.hpp"
#include "parser/front_end.hpp"
#include "parser/yaml_edit.hpp"
#include "parser/yaml_loader.hpp"

namespace mbl {
namespace {

// True when a YAML root looks like a Megatron Bridge config (directory walks skip unrelated YAML).
bool looks_like_bridge_config(const Value& root) {
    if (!root.is_map()) return false;
    if (root.target().find("ConfigContainer") != std::string::npos) return true;
    for (const char* key : {"model", "mixed_precision", "comm_overlap"})
        if (root.find(key)) return true;
    return false;
}

class YamlFrontEnd final : public FrontEnd {
public:
    std::string_view language() const override { return "yaml"; }
    bool handles(std::string_view path) const override { return path.ends_with(".yaml") || path.ends_with(".yml"); }
    ParseResult parse(const std::string& name, std::string_view text, bool allow_skip,
                      ParseContext& ctx) const override {
        ParseResult result;
        if (auto bad = encoding_error(name, text)) {
            result.errors.push_back(std::move(*bad));
            return result;
        }
        YamlLoadResult loaded = load_yaml(name, text);
        if (!loaded.ok()) {
            result.errors = std::move(loaded.errors);
            return result;
        }
        if (allow_skip && !looks_like_bridge_config(loaded.root)) {
            result.skipped = true;
            return result;
        }
        ParsedConfig config;
        config.anchor = SourceRange::point(name, 1, 1);
        if (const auto* e = loaded.root.find_entry("model"); e && e->key_range.valid()) config.anchor = e->key_range;
        config.root = std::move(loaded.root);
        config.precision = tree_precision_lookup(name, config.root, ctx);
        result.configs.push_back(std::move(config));
        return result;
    }
    std::vector<SourceComment> comments(std::string_view text) const override { return yaml_edit::comments(text); }
    std::vector<TextEdit> field_edit(const FieldEdit& edit, const EditSite& site, std::string_view text,
                                     const LineIndex& lines) const override {
        return yaml_edit::field_edit(site.entry.file, edit, site, text, lines);
    }
};

}  // namespace

std::unique_ptr<FrontEnd> make_yaml_front_end() { return std::make_unique<YamlFrontEnd>(); }

}  // namespace mbl
