#include "rules/registry.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "rules/megatron_raises.hpp"

namespace mbl {

#define MBL_RULE(CODE) std::unique_ptr<Rule> make_rule_##CODE();
#include "rules/rules.def"
#undef MBL_RULE

const std::vector<std::unique_ptr<Rule>>& all_rules() {
    static const std::vector<std::unique_ptr<Rule>> rules = [] {
        std::vector<std::unique_ptr<Rule>> v;
#define MBL_RULE(CODE) v.push_back(make_rule_##CODE());
#include "rules/rules.def"
#undef MBL_RULE
        return v;
    }();
    return rules;
}

// Codes are case-insensitive on the command line: rc004 == RC004.
static bool names(const RuleInfo& info, std::string_view code_or_name) {
    if (info.code == code_or_name || info.name == code_or_name) return true;
    if (code_or_name.size() != info.code.size()) return false;
    for (size_t i = 0; i < info.code.size(); ++i)
        if (std::toupper(static_cast<unsigned char>(code_or_name[i])) != info.code[i]) return false;
    return true;
}

const Rule* find_rule(std::string_view code_or_name) {
    for (const auto& r : all_rules())
        if (names(r->info(), code_or_name)) return r.get();
    return nullptr;
}

const RuleInfo* find_doc(std::string_view code_or_name) {
    if (const Rule* rule = find_rule(code_or_name)) return &rule->info();
    for (const auto& info : input_error_docs())
        if (names(info, code_or_name)) return &info;
    return nullptr;
}

namespace {

// The diagnostics of rules that yield to a rule that reported too (RuleInfo::yields_to).
void drop_yielding(std::vector<Diagnostic>& diagnostics) {
    std::set<std::string, std::less<>> reported;
    for (const auto& d : diagnostics) reported.insert(d.code);
    std::erase_if(diagnostics, [&](const Diagnostic& d) {
        const Rule* rule = find_rule(d.code);
        return rule && std::any_of(rule->info().yields_to.begin(), rule->info().yields_to.end(),
                                   [&](std::string_view code) { return !code.empty() && reported.count(code); });
    });
}

}  // namespace

std::vector<Diagnostic> rule_diagnostics(const EffectiveModel& model, const RuleOptions& options, RuleMemo* memo) {
    std::vector<Diagnostic> out;
    RuleMemo own;
    // An error rule runs where Megatron Core's compiled checks have a raise site it names; the verdict of running them
    // over the config then decides which of its diagnostics stand (apply_megatron_verdict).
    for (const auto& rule : all_rules()) {
        const RuleInfo& info = rule->info();
        if (info.is_rejection() && !enforced_at(info, *model.revision)) continue;
        RuleContext ctx(model, options, memo ? memo : &own);
        rule->check(ctx);
        for (auto& d : ctx.take(info)) out.push_back(std::move(d));
    }
    if (model.post_init || model.bridge_setup) apply_megatron_verdict(model, options, out);
    drop_yielding(out);
    return out;
}

}  // namespace mbl
