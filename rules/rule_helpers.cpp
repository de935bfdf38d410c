#include "rules/rule_helpers.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace mbl::rules {

bool selective_pre(const EffectiveModel& m) {
    return m.known({field::recompute_granularity}) && m.modules_pre.known && m.granularity_pre == "selective";
}

bool selective_post(const EffectiveModel& m) {
    return m.known({field::recompute_granularity, field::moe_layer_recompute}) && m.modules_post.known &&
           m.granularity_post == "selective";
}

const Value* module_item(const EffectiveModel& m, std::string_view label) {
    const Value& list = m[field::recompute_modules];
    if (!list.is_list()) return nullptr;
    for (const auto& item : list.items())
        if (item.is_string() && item.as_string() == label && item.prov().range.valid()) return &item;
    return nullptr;
}

Diagnostic& report_label(RuleContext& ctx, const RuleInfo& rule, std::string_view label, std::string message) {
    const Value& modules = ctx.model[field::recompute_modules];
    const Value* item = module_item(ctx.model, label);
    Diagnostic& d = item ? ctx.report_at(rule, *item, std::move(message))
                    : !modules.is_null() && modules.prov().range.valid() && !ctx.model.modules_pre.defaulted
                        ? ctx.report(rule, field::recompute_modules, std::move(message))
                        : ctx.report(rule,
                                     ctx.model.moe_layer_converted && label == "moe" ? field::moe_layer_recompute
                                                                                     : field::recompute_granularity,
                                     std::move(message));
    const auto& defaults = ctx.revision().default_modules;
    if (ctx.model.modules_pre.defaulted && std::find(defaults.begin(), defaults.end(), label) != defaults.end()) {
        std::vector<std::string> quoted;
        for (const auto& l : defaults) quoted.push_back(fmt::format("\"{}\"", l));
        RuleContext::hint(d, fmt::format("recompute_modules is not set, so Megatron Core fills in [{}] under selective",
                                         fmt::join(quoted, ", ")));
    }
    if (ctx.model.moe_layer_converted && label == "moe")
        RuleContext::hint(d, "moe_layer_recompute=True makes Megatron Core add \"moe\" to recompute_modules");
    return d;
}

std::string rejection_note(const EffectiveModel& m, std::string_view exception) {
    return fmt::format("Megatron Core {} rejects this config at start-up ({} in TransformerConfig.__post_init__)",
                       m.revision ? m.revision->name : "", exception);
}

bool GraphScope::full() const {
    if (impl == "full_iteration") return true;
    if (modules.empty()) return true;
    return std::find(modules.begin(), modules.end(), "full_iteration") != modules.end() ||
           std::find(modules.begin(), modules.end(), "full") != modules.end();
}

bool GraphScope::captures(std::string_view module) const {
    return full() || std::find(modules.begin(), modules.end(), module) != modules.end();
}

std::optional<GraphScope> graph_scope(const EffectiveModel& m) {
    if (!m.known({field::cuda_graph_impl, field::cuda_graph_scope, field::cuda_graph_modules})) return std::nullopt;
    GraphScope g;
    g.impl = m.str(field::cuda_graph_impl).value_or("none");
    for (FieldName name : {field::cuda_graph_scope, field::cuda_graph_modules}) {
        const Value& v = m[name];
        if (v.is_string()) {
            std::string s = v.as_string();
            if (auto dot = s.rfind('.'); dot != std::string::npos) s = s.substr(dot + 1);
            g.modules.push_back(s);
        }
        if (!v.is_list()) continue;
        for (const auto& item : v.items()) {
            if (!item.is_string()) return std::nullopt;
            std::string s = item.as_string();
            if (auto dot = s.rfind('.'); dot != std::string::npos) s = s.substr(dot + 1);  // CudaGraphScope.attn
            g.modules.push_back(s);
        }
    }
    return g;
}

FieldName mhc_connections_field(const Revision& rev) {
    const auto& v = rev.enum_values(revision_enum::mhc_connections_field);
    return v.empty() ? field::enable_mhc_connections : FieldName::named(v.front());
}

bool ep_overlap_recomputes_stages(const EffectiveModel& m) {
    const auto& mode = m.revision->enum_values(revision_enum::ep_overlap_full_recompute);
    if (std::find(mode.begin(), mode.end(), "stage") == mode.end()) return false;
    return !m.known({field::overlap_moe_expert_parallel_comm}) || m.flag(field::overlap_moe_expert_parallel_comm);
}

std::string quoted_list(const std::vector<std::string>& items) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += i + 1 == items.size() ? (items.size() > 2 ? ", or " : " or ") : ", ";
        out += fmt::format("\"{}\"", items[i]);
    }
    return out;
}

}  // namespace mbl::rules
