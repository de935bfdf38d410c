// The YAML front end: Bridge config dumps, override files and bare `model:` mappings.
#include <algorithm>

#include "core/did_you_mean.hpp"
#include "core/input_errors.hpp"
#include "core/schema.hpp"
#include "parser/front_end.hpp"
#include "parser/yaml_edit.hpp"
#include "parser/yaml_loader.hpp"

namespace mbl {
namespace {

// Directory walks lint a YAML file only when its content has the shape of a Megatron Bridge config, whatever its
// name: a ConfigContainer dump (`_target_`), or a mapping with a `model`, `mixed_precision` or `comm_overlap` section
// at least half of whose top-level keys are ConfigContainer sections, and whose `model` mapping (when it has keys) holds a model
// field or a near miss of one. Model cards, CI workflows, compose files and tool settings have other top-level keys
// (a card's `model:` holds `hf_id`, `architecture`, ...), so they are skipped.
bool is_model_field_like(const std::string& key) {
    static const NameMatcher fields(Schema::instance().field_names());
    if (key.empty() || key[0] == '_' || key == "transformer") return true;  // _target_; builder configs nest fields
    return Schema::instance().field(key) != nullptr || !fields.close_matches(key, 1).empty();
}

bool looks_like_bridge_config(const Value& root) {
    if (!root.is_map()) return false;
    if (root.target().find("ConfigContainer") != std::string::npos) return true;
    const auto& sections = Schema::instance().config_sections();
    std::size_t keys = 0, section_keys = 0;
    bool has_core_section = false;
    for (const auto& e : root.entries()) {
        ++keys;
        if (std::find(sections.begin(), sections.end(), e.key) != sections.end()) ++section_keys;
        has_core_section |= e.key == "model" || e.key == "mixed_precision" || e.key == "comm_overlap";
    }
    if (!has_core_section || 2 * section_keys < keys) return false;
    const Value* model = root.find("model");
    if (!model || !model->is_map() || model->entries().empty()) return true;
    return std::any_of(model->entries().begin(), model->entries().end(),
                       [](const auto& e) { return is_model_field_like(e.key); });
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
