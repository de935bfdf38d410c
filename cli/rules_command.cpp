#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/schema.hpp"
#include "rules/registry.hpp"

namespace mbl::cli {

void add_rules_commands(CLI::App& app, RulesArgs& args, CLI::App*& rules_cmd, CLI::App*& explain_cmd) {
    rules_cmd = app.add_subcommand("rules", "List every rule: code, name, severity and summary");
    rules_cmd->add_option("--format", args.format, "Output format")->check(CLI::IsMember({"text", "json"}));
    rules_cmd->add_option("--mcore", args.mcore, "Mark which error rules Megatron Core enforces at this revision");
    explain_cmd = app.add_subcommand("explain", "Print a rule's documentation: what it does, why, examples");
    explain_cmd->add_option("rule", args.code, "Rule code or name, e.g. RC004 or full-recompute-without-method")->required();
}

int run_rules(const RulesArgs& args) {
    const Revision* revision = args.mcore.empty() ? nullptr : resolve_revision(args.mcore);
    if (!args.mcore.empty() && !revision) return kUnusable;
    if (args.format == "json") {
        nlohmann::ordered_json list = nlohmann::ordered_json::array();
        for (const auto& r : all_rules()) {
            const RuleInfo& i = r->info();
            nlohmann::ordered_json j = {{"code", i.code}, {"name", i.name}, {"severity", severity_name(i.severity)},
                                        {"summary", i.summary}};
            if (revision) j["active"] = !i.is_rejection() || revision->rejects(i.code);
            list.push_back(std::move(j));
        }
        std::cout << list.dump(2) << '\n';
        return kOk;
    }
    for (const auto& r : all_rules()) {
        const RuleInfo& i = r->info();
        std::string mark;
        if (revision) mark = (!i.is_rejection() || revision->rejects(i.code)) ? "  " : "- ";
        std::cout << fmt::format("{}{}  {:<8} {:<52} {}\n", mark, i.code, severity_name(i.severity), i.name, i.summary);
    }
    if (revision)
        std::cout << fmt::format("\nRules marked - do not apply at Megatron Core {} (no such rejection there).\n",
                                 revision->name);
    return kOk;
}

int run_explain(const RulesArgs& args) {
    const Rule* rule = find_rule(args.code);
    if (!rule) {
        std::vector<std::string> names;
        for (const auto& r : all_rules()) names.emplace_back(r->info().name);
        std::cerr << fmt::format("mbridge-lint: no rule \"{}\"; `mbridge-lint rules` lists them\n", args.code);
        return kUnusable;
    }
    const RuleInfo& i = rule->info();
    std::cout << fmt::format("# {} {} ({})\n\n{}\n\n", i.code, i.name, severity_name(i.severity), i.summary);
    std::vector<std::string> revs;
    for (const auto& name : Schema::instance().revision_names())
        if (!i.is_rejection() || Schema::instance().revision(name)->rejects(i.code)) revs.push_back(name);
    std::cout << i.doc;
    std::cout << fmt::format("\nApplies at Megatron Core: {}\n", fmt::join(revs, ", "));
    return kOk;
}

}  // namespace mbl::cli
