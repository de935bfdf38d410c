#include "rules/rule_helpers.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace mbl::rules {

bool selective_pre(const EffectiveModel& m) {
    return m.known({field::recompute_granularity}) && m.modules_pre.known && m.granularity_pre() == "selective";
}

bool selective_post(const EffectiveModel& m) {
    return m.known({field::recompute_granularity, field::moe_layer_recompute}) && m.modules_post.known &&
           m.granularity_post == "selective";
}

const Value* module_item(const EffectiveModel& m, std::string_view label) {
    const Value& list = m[field::recompute_modules];
    if (!list.is_list()) return nullptr;
    for (const auto& item : list.items())
        if (item.is_string() && item.as_string() == label) return &item;
    return nullptr;
}

Diagnostic& report_label(RuleContext& ctx, const RuleInfo& rule, std::string_view label, std::string message) {
    if (const Value* item = module_item(ctx.model, label)) return ctx.report_at(rule, *item, std::move(message));
    const Value& modules = ctx.model[field::recompute_modules];
    if (!modules.is_null() && modules.prov().range.valid()) return ctx.report(rule, field::recompute_modules, std::move(message));
    Diagnostic& d = ctx.report(rule, ctx.model.moe_layer_converted && label == "moe" ? field::moe_layer_recompute
                                                                                      : field::recompute_granularity,
                               std::move(message));
    if (ctx.model.modules_pre.defaulted && label == "core_attn")
        RuleContext::hint(d, "recompute_modules is not set, so Megatron Core fills in [\"core_attn\"] under selective");
    if (ctx.model.moe_layer_converted && label == "moe")
        RuleContext::hint(d, "moe_layer_recompute=True makes Megatron Core add \"moe\" to recompute_modules");
    return d;
}

std::string rejection_note(const EffectiveModel& m, std::string_view exception) {
    return fmt::format("Megatron Core {} rejects this config at start-up ({} in TransformerConfig.__post_init__)",
                       m.revision ? m.revision->name : "", exception);
}

static std::optional<std::string> backend_name(const Value& v) {
    if (v.is_string()) {
        std::string s = v.as_string();
        auto dot = s.rfind('.');
        if (dot != std::string::npos) s = s.substr(dot + 1);  // "AttnBackend.flash" -> "flash"
        return s;
    }
    if (v.is_int() || v.is_map()) {
        // Enum written by value: AttnBackend(flash=1, fused=2, unfused=3, local=4, auto=5).
        std::int64_t n = -1;
        if (v.is_int()) n = v.as_int();
        else if (const Value* args = v.find("_args_"); args && args->is_list() && !args->items().empty() &&
                                                       args->items()[0].is_int())
            n = args->items()[0].as_int();
        static const char* names[] = {"", "flash", "fused", "unfused", "local", "auto"};
        if (n >= 1 && n <= 5) return std::string(names[n]);
    }
    return std::nullopt;
}

std::optional<bool> attention_is_fused(const EffectiveModel& m) {
    if (!m.known({"transformer_impl", "attention_backend"})) return std::nullopt;
    auto impl = m.str("transformer_impl");
    if (impl && *impl == "local") return false;
    auto backend = backend_name(m["attention_backend"]);
    if (!backend) return m["attention_backend"].is_null() ? std::optional<bool>(true) : std::nullopt;
    if (*backend == "unfused" || *backend == "local") return false;
    return true;  // flash, fused, auto (which picks fused/flash when available)
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
    const auto& v = rev.enum_values("mhc_connections_field");
    return v.empty() ? field::enable_mhc_connections : FieldName::named(v.front());
}

bool ep_overlap_recomputes_stages(const EffectiveModel& m) {
    const auto& mode = m.revision->enum_values("ep_overlap_full_recompute");
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
