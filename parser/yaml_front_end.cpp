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

// Bridge's performance launcher of late 2025 (scripts/performance/run_script.py) merges only the `ConfigContainer:`
// section of a YAML that has one ("If YAML contains a nested ConfigContainer, merge only that subtree"); the file's
// other top-level sections (`perf_matrix:`) are the launcher's own, read by setup_experiment.py, never merged into the
// config. Such a file's config is that section.
const Value::Entry* launcher_config_section(const Value& root) {
    if (!root.is_map()) return nullptr;
    const Value::Entry* e = root.find_entry("ConfigContainer");
    return e && e->value.is_map() ? e : nullptr;
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
        ParsedConfig config;
        config.anchor = SourceRange::point(name, 1, 1);
        if (const Value::Entry* section = launcher_config_section(loaded.root)) {
            config.anchor = section->key_range;
            Value subtree = section->value;
            loaded.root = std::move(subtree);
        }
        if (allow_skip && !looks_like_bridge_config(loaded.root)) {
            result.skipped = true;
            return result;
        }
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
