// Options shared by `check` and `show`: the source root, Hugging Face configs, --config-file and overrides.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstring>
#include <memory>

#include "cli/commands.hpp"
#include "core/input_errors.hpp"
#include "core/source_manager.hpp"
#include "parser/overrides.hpp"
#include "parser/yaml_loader.hpp"

namespace mbl::cli {

std::vector<std::string> split_overrides(int& argc, char** argv) {
    std::vector<std::string> out;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--") != 0) continue;
        for (int j = i + 1; j < argc; ++j) out.emplace_back(argv[j]);
        argc = i;
        break;
    }
    return out;
}

void add_recipe_options(CLI::App& cmd, RecipeArgs& args) {
    cmd.add_option("--root", args.root,
                   "Source root of the recipes (default: the nearest parent holding src/megatron/bridge, else the "
                   "file's top-level package's parent); imports are followed only inside it");
    cmd.add_option("--hf-config", args.hf_configs,
                   "A Hugging Face config.json for AutoBridge.from_hf_pretrained models: PATH (every model), "
                   "ORG/NAME=PATH, or a directory laid out like the hub cache; repeatable")
        ->allow_extra_args(false);
    cmd.add_option("--config-file", args.config_files,
                   "A YAML file merged over the config before the command-line overrides (same nesting as the "
                   "config, e.g. model: {recompute_granularity: full}); repeatable")
        ->allow_extra_args(false);
    cmd.add_option("-j,--jobs", args.jobs,
                   "Worker threads: several files at once, or the recipes of one file (default: one per core)")
        ->check(CLI::Range(1, 256));
}

bool setup_overrides(const RecipeArgs& args, ConfigPreparer& prepare, SourceManager& sources,
                     std::vector<Diagnostic>& errors) {
    auto trees = std::make_shared<std::vector<Value>>();
    for (const auto& file : args.config_files) {
        std::string error;
        const std::string* text = sources.load(file, &error);
        if (!text) {
            errors.push_back(input_error(InputError::Unreadable, SourceRange::whole_file(file),
                                         fmt::format("cannot read --config-file {}: {}", file, error)));
            continue;
        }
        YamlLoadResult loaded = load_yaml(file, *text, Origin::Override);
        if (!loaded.ok()) {
            for (auto& d : loaded.errors) errors.push_back(std::move(d));
            continue;
        }
        trees->push_back(std::move(loaded.root));
    }
    auto overrides = std::make_shared<std::vector<Override>>();
    for (size_t i = 0; i < args.overrides.size(); ++i) {
        const std::string name = fmt::format("<override {}>", i + 1);
        sources.add(name, args.overrides[i]);
        OverrideParse parsed = parse_override(name, args.overrides[i]);
        if (parsed.error) errors.push_back(std::move(*parsed.error));
        else overrides->push_back(std::move(*parsed.override));
    }
    if (!errors.empty()) return false;
    if (trees->empty() && overrides->empty()) return true;
    prepare = [trees, overrides](Value& root, const Revision& revision, std::vector<Diagnostic>& diagnostics) {
        for (const auto& t : *trees) merge_config_tree(root, t);
        apply_overrides(root, *overrides, revision, diagnostics);
    };
    return true;
}

}  // namespace mbl::cli
