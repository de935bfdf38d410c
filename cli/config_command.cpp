// `mbridge-lint config [PATH]`: the configuration that governs PATH and where each value came from.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "config/project_config.hpp"
#include "core/revision_detection.hpp"
#include "core/schema.hpp"
#include "core/version.hpp"
#include "engine/mcore_trees.hpp"
#include "report/report.hpp"

namespace mbl::cli {

CLI::App* add_config_command(CLI::App& app, ConfigArgs& args) {
    CLI::App* cmd = app.add_subcommand("config", "Print the configuration that applies to a file or directory, and "
                                                 "where each value came from");
    cmd->add_option("path", args.path, "File or directory whose configuration to show (default: .)");
    cmd->add_option("--format", args.format, "Output format")->check(CLI::IsMember({"text", "json"}));
    cmd->add_option("--config", args.config, "Use this configuration file instead of discovering one");
    add_mcore_option(*cmd, args.mcore, "As for check: overrides the configuration's mcore", &args.mcore_path);
    cmd->add_option("--te-version", args.te_version, "As for check: overrides the configuration's te-version");
    return cmd;
}

namespace {

using json = nlohmann::ordered_json;

json source_json(const SettingSource& s) {
    switch (s.kind) {
        case SettingSource::Kind::Default: return "default";
        case SettingSource::Kind::CommandLine: return "command line";
        case SettingSource::Kind::File:
            return json{{"file", s.where.file}, {"line", s.where.line}, {"column", s.where.column}};
    }
    return nullptr;
}

json string_list(const std::vector<std::string>& v) {
    json a = json::array();
    for (const auto& s : v) a.push_back(s);
    return a;
}

// The selection and exclude options given to `check`: --select replaces the configuration's select and ignore,
// --exclude its exclude; the others add to what is in force.
json command_line_layer(const CommandLineSelection& s) {
    json layer = json::object();
    if (s.select) layer["select"] = string_list(*s.select);
    if (!s.extend_select.empty()) layer["extend-select"] = string_list(s.extend_select);
    if (!s.ignore.empty()) layer["ignore"] = string_list(s.ignore);
    if (s.exclude) layer["exclude"] = string_list(*s.exclude);
    if (!s.extend_exclude.empty()) layer["extend-exclude"] = string_list(s.extend_exclude);
    return layer;
}

const SettingSource kCommandLine{SettingSource::Kind::CommandLine, {}};

// The revision in force and where it came from: the command line, the configuration, the Bridge checkout around the
// path, or the default; `facts` is the revision whose config classes are read.
struct RevisionSetting {
    Setting<std::string> mcore;
    const Revision* facts = nullptr;
    std::optional<RevisionChoice> detected;   // a Bridge checkout's pin
    std::optional<RevisionChoice> from_path;  // --mcore-path
};

// nullopt (said on stderr) when --mcore-path names no usable tree.
std::optional<RevisionSetting> revision_setting(const ConfigArgs& args, const ProjectConfig& c) {
    const Schema& schema = Schema::instance();
    RevisionSetting r;
    r.mcore = {schema.revision(schema.default_revision())->name, {}};
    if (c.mcore) r.mcore = *c.mcore;
    if (!args.mcore.empty()) r.mcore = {resolve_revision(args.mcore)->name, kCommandLine};
    // Neither says: the revision a Bridge checkout around PATH pins (docs/user-guide.md "Revision detection"), its
    // config classes read from the checkout when it is checked out.
    if (!c.mcore && args.mcore.empty() && args.mcore_path.empty())
        if (auto d = RevisionDetector().detect(args.path)) r.detected = with_facts(*d);
    if (r.detected) r.mcore.value = r.detected->revision->name;
    r.facts = r.detected ? r.detected->revision : schema.revision(r.mcore.value);
    if (args.mcore_path.empty()) return r;
    r.from_path = choice_for_mcore_path(args.mcore_path, c.mcore || !args.mcore.empty() ? r.facts : nullptr,
                                        fmt::format("mcore = {}", r.mcore.value));
    if (!r.from_path->revision) {
        std::cerr << "mbridge-lint: " << r.from_path->reason << '\n';
        return std::nullopt;
    }
    r.facts = r.from_path->revision;
    r.mcore = {r.facts->name, kCommandLine};
    return r;
}

// The memory budget in force as {text, bytes}, null when unset; nullopt (said on stderr) for a malformed
// --gpu-memory.
std::optional<json> gpu_memory_setting(const ConfigArgs& args, const ProjectConfig& c) {
    if (args.gpu_memory.empty())
        return c.gpu_memory ? json{{"text", c.gpu_memory->value.text}, {"bytes", c.gpu_memory->value.bytes}}
                            : json(nullptr);
    auto size = parse_memory_size(args.gpu_memory);
    if (!size) {
        std::cerr << fmt::format("mbridge-lint: --gpu-memory \"{}\" is not a memory size such as 80GiB\n",
                                 args.gpu_memory);
        return std::nullopt;
    }
    return json{{"text", size->text}, {"bytes", size->bytes}};
}

// One row per key: name, value as JSON, source.
using SettingRows = std::vector<std::tuple<std::string, json, SettingSource>>;

SettingRows setting_rows(const ConfigArgs& args, const ProjectConfig& c, const RevisionSetting& r, json gpu) {
    std::optional<Setting<std::string>> te = c.te_version;
    if (!args.te_version.empty()) te = Setting<std::string>{args.te_version, kCommandLine};
    SettingRows rows;
    rows.emplace_back("mcore", r.mcore.value, r.mcore.source);
    rows.emplace_back("mcore-path", args.mcore_path.empty() ? json(nullptr) : json(args.mcore_path),
                      args.mcore_path.empty() ? SettingSource{} : kCommandLine);
    rows.emplace_back("te-version", te ? json(te->value) : json(nullptr), te ? te->source : SettingSource{});
    rows.emplace_back("select", string_list(c.select.value), c.select.source);
    rows.emplace_back("extend-select", string_list(c.extend_select.value), c.extend_select.source);
    rows.emplace_back("ignore", string_list(c.ignore.value), c.ignore.source);
    json pfi = json::object();
    for (const auto& p : c.per_file_ignores.value) pfi[p.pattern] = string_list(p.codes);
    rows.emplace_back("per-file-ignores", pfi, c.per_file_ignores.source);
    json sev = json::object();
    for (const auto& o : c.severity.value) sev[o.code] = severity_name(o.severity);
    rows.emplace_back("severity", sev, c.severity.source);
    rows.emplace_back("exclude", string_list(c.exclude.value), c.exclude.source);
    rows.emplace_back("extend-exclude", string_list(c.extend_exclude.value), c.extend_exclude.source);
    rows.emplace_back("root", c.root.value, c.root.source);
    rows.emplace_back("gpu-memory", std::move(gpu),
                      !args.gpu_memory.empty() ? kCommandLine
                      : c.gpu_memory           ? c.gpu_memory->source
                                               : SettingSource{});
    rows.emplace_back("hf-config-paths", string_list(c.hf_config_paths.value), c.hf_config_paths.source);
    return rows;
}

void write_config_json(const ConfigArgs& args, const ProjectConfig& c, const RevisionSetting& r,
                       const SettingRows& rows) {
    json doc;
    doc["kind"] = "config";  // schemas/output/config.schema.json
    doc["version"] = 1;
    doc["path"] = args.path;
    doc["config_file"] = c.file.empty() ? json(nullptr) : json(c.file);
    doc["extends"] = string_list(c.extends);
    json settings = json::object();
    for (const auto& [key, value, source] : rows) settings[key] = {{"value", value}, {"source", source_json(source)}};
    if (r.detected)
        settings["mcore"]["source"] = {
            {"detected",
             {{"checkout", r.detected->checkout},
              {"commit", r.detected->commit.empty() ? json(nullptr) : json(r.detected->commit)},
              {"reason", r.detected->reason}}}};
    settings["mcore"]["facts"] = r.facts->facts_source();
    if (r.from_path) settings["mcore"]["source"] = {{"mcore-path", {{"reason", r.from_path->reason}}}};
    doc["settings"] = std::move(settings);
    if (args.command_line) doc["command_line"] = command_line_layer(*args.command_line);
    std::cout << doc.dump(2) << '\n';
}

void write_config_text(const ConfigArgs& args, const ProjectConfig& c, const RevisionSetting& r,
                       const SettingRows& rows) {
    std::cout << fmt::format("configuration for {}\nconfig file: {}\n", args.path,
                             c.file.empty() ? "none found (defaults)" : c.file);
    // A value set in a base file shows that file as its source.
    if (!c.extends.empty()) std::cout << fmt::format("extends: {}\n", fmt::join(c.extends, " -> "));
    std::cout << '\n';
    for (const auto& [key, value, source] : rows) {
        std::string shown = value.is_null() ? "unset" : value.dump();
        if (key == "gpu-memory" && !value.is_null())
            shown =
                fmt::format("\"{}\" ({} bytes)", value["text"].get<std::string>(), value["bytes"].get<std::uint64_t>());
        std::string from = source.describe();
        if (key == "mcore" && r.detected)
            from = fmt::format("detected from {}: {}", r.detected->checkout, r.detected->reason);
        if (key == "root" && source.kind == SettingSource::Kind::Default)
            from = c.file.empty() ? "default: the current directory" : "default: the config file's directory";
        if (key == "mcore" && r.from_path) from = r.from_path->reason;
        std::cout << fmt::format("{:<17}= {:<40}  # {}\n", key, shown, from);
    }
    if (args.command_line) {
        const json layer = command_line_layer(*args.command_line);
        if (!layer.empty()) {
            std::cout << "\ncommand line, a layer over the configuration (docs/user-guide.md#selecting-rules):\n";
            for (const auto& [key, value] : layer.items()) std::cout << fmt::format("{:<17}= {}\n", key, value.dump());
        }
    }
    std::cout << fmt::format("\nMegatron Core {} facts (config classes, defaults, recompute labels): {}\n",
                             r.facts->name, r.facts->facts_source());
}

}  // namespace

int run_config(const ConfigArgs& args) {
    std::error_code ec;
    if (!std::filesystem::exists(args.path, ec)) {
        std::cerr << fmt::format("mbridge-lint: {}: no such file or directory\n", args.path);
        return kUnusable;
    }
    if (!args.mcore.empty() && !resolve_revision(args.mcore)) return kUnusable;
    if (!args.te_version.empty() && !Version::parse(args.te_version)) {
        std::cerr << fmt::format("mbridge-lint: --te-version \"{}\" is not a version such as 2.6.0\n", args.te_version);
        return kUnusable;
    }
    ConfigResolver resolver(args.config);
    auto loaded = resolver.for_path(args.path);
    if (!loaded->ok()) {
        SourceManager sources;
        for (const auto& d : loaded->errors) sources.load(d.range.file);
        write_text(std::cerr, loaded->errors, sources, TextStyle{use_color("auto")});
        return kUnusable;
    }
    const ProjectConfig& c = loaded->config;
    const auto revision = revision_setting(args, c);
    if (!revision) return kUnusable;
    auto gpu = gpu_memory_setting(args, c);
    if (!gpu) return kUnusable;
    const SettingRows rows = setting_rows(args, c, *revision, std::move(*gpu));
    if (args.format == "json") write_config_json(args, c, *revision, rows);
    else write_config_text(args, c, *revision, rows);
    return kOk;
}

}  // namespace mbl::cli
