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

// Whether a YAML text that could not be read has a Bridge config's mark: a line starting with a `model:`,
// `mixed_precision:`, `comm_overlap:` or `ConfigContainer:` key, or a `_target_` naming the ConfigContainer. A walk
// reports a broken file that has one (a config with a typo) and skips one that has none (a Helm chart's template,
// whose `{{ }}` is no YAML until Helm renders it).
bool text_has_config_mark(std::string_view text) {
    static constexpr std::string_view kKeys[] = {"model:", "mixed_precision:", "comm_overlap:", "ConfigContainer:"};
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view line = text.substr(at, end - at);
        for (std::string_view key : kKeys)
            if (line.starts_with(key)) return true;
        if (line.find("_target_") != std::string_view::npos && line.find("ConfigContainer") != std::string_view::npos)
            return true;
        at = end + 1;
    }
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
        if (loaded.stream && allow_skip) read_stream_shapes(name, text, loaded);
        // A walk reads a file only when its content has a Bridge config's shape. One no config can be (a list, a stream
        // of several documents, a tag OmegaConf refuses) has it only when one of its mappings does; one that cannot
        // be read at all only when its text has a config's mark.
        if (!loaded.ok() && allow_skip &&
            (loaded.shape_read ? std::none_of(loaded.shapes.begin(), loaded.shapes.end(),
                                              [](const Value& doc) {
                                                  const Value::Entry* section = launcher_config_section(doc);
                                                  return looks_like_bridge_config(section ? section->value : doc);
                                              })
                               : !text_has_config_mark(text))) {
            result.skipped = true;
            return result;
        }
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
