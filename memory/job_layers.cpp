// Which kind each layer is and which pipeline stage holds it: the hybrid pattern (Megatron Core
// models/hybrid/hybrid_layer_allocation.py), moe_layer_freq, pipeline_model_parallel_layout, first/last-stage sizes.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <numeric>

#include "memory/job_parts.hpp"

namespace mbl::memory {

std::int64_t int_or(const EffectiveModel& m, FieldName field, std::int64_t fallback) {
    if (!m.known({field})) return fallback;
    auto v = m.integer(field);
    return v ? *v : fallback;
}

double number_or(const EffectiveModel& m, FieldName field, double fallback) {
    if (!m.known({field})) return fallback;
    auto v = m.number(field);
    return v ? *v : fallback;
}

bool flag_of(const EffectiveModel& m, FieldName field) { return m.known({field}) && m.flag(field); }

// The hybrid layer pattern (hybrid_layer_pattern, or the deprecated hybrid_override_pattern); nullopt for GPT models.
std::optional<std::string> hybrid_pattern(const EffectiveModel& m) {
    for (const FieldName f : {field::hybrid_layer_pattern, field::hybrid_override_pattern})
        if (m[f].is_string() && !m[f].as_string().empty()) return m[f].as_string();
    return std::nullopt;
}

// Megatron Core's symbols (models/hybrid/hybrid_layer_allocation.py): M Mamba, G gated delta net, * attention,
// D DSA attention, + MLA attention, - MLP, E MoE; '|' separates pipeline segments, '/' starts the MTP layers.
std::optional<LayerPlan> plan_from_pattern(const std::string& pattern, std::vector<Assumption>& notes) {
    LayerPlan plan;
    const std::string main = pattern.substr(0, pattern.find('/'));
    if (main.size() != pattern.size())
        notes.push_back({"multi-token prediction layers of the hybrid pattern are not counted"});
    int segment = 0;
    bool gdn = false;
    for (char c : main) {
        switch (c) {
            case 'M': plan.kinds.push_back(LayerKind::Mamba); break;
            case 'G':
                plan.kinds.push_back(LayerKind::Mamba);
                gdn = true;
                break;
            case '*':
            case 'D':
            case '+': plan.kinds.push_back(LayerKind::AttentionOnly); break;
            case '-': plan.kinds.push_back(LayerKind::MlpOnly); break;
            case 'E': plan.kinds.push_back(LayerKind::MoeOnly); break;
            case '|':
                plan.segments.push_back(segment);
                segment = 0;
                continue;
            case ' ': continue;
            default: return std::nullopt;
        }
        ++segment;
    }
    if (!plan.segments.empty()) plan.segments.push_back(segment);
    if (gdn) notes.push_back({"gated delta net layers (G) are not modelled: each is counted as a Mamba layer"});
    if (plan.kinds.empty()) return std::nullopt;
    return plan;
}

// GPT models: which layers are MoE (moe_layer_freq: every k-th layer starting at 0, or a 0/1 list).
std::vector<LayerKind> gpt_layer_kinds(const EffectiveModel& m, int layers, std::vector<Assumption>& notes) {
    std::vector<LayerKind> kinds(static_cast<size_t>(layers), LayerKind::Dense);
    if (!m.is_moe()) return kinds;
    const Value& freq = m[field::moe_layer_freq];
    if (freq.is_int() && freq.as_int() > 0) {
        for (int i = 0; i < layers; ++i)
            if (i % freq.as_int() == 0) kinds[static_cast<size_t>(i)] = LayerKind::Moe;
    } else if (freq.is_list() && static_cast<int>(freq.items().size()) == layers) {
        for (int i = 0; i < layers; ++i)
            if (freq.items()[static_cast<size_t>(i)].truthy()) kinds[static_cast<size_t>(i)] = LayerKind::Moe;
    } else {
        std::fill(kinds.begin(), kinds.end(), LayerKind::Moe);
        if (!freq.is_null()) notes.push_back({"moe_layer_freq could not be read: every layer taken as MoE"});
    }
    return kinds;
}

namespace {

// Expands "(tt|)*3" groups and "t*4" repeats of a pipeline layout string into plain symbols; nullopt if malformed.
std::optional<std::string> expand_layout(std::string_view text, size_t& pos, int depth = 0) {
    std::string out;
    auto repeat = [&]() -> std::optional<int> {
        if (pos >= text.size() || text[pos] != '*') return 1;
        int n = 0;
        size_t start = ++pos;
        while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) && n < 100000)
            n = n * 10 + (text[pos++] - '0');
        if (pos == start || n <= 0 || n >= 100000) return std::nullopt;
        return n;
    };
    while (pos < text.size() && text[pos] != ')') {
        const char c = text[pos++];
        std::string piece;
        if (c == '(') {
            if (depth > 8) return std::nullopt;
            auto inner = expand_layout(text, pos, depth + 1);
            if (!inner || pos >= text.size() || text[pos] != ')') return std::nullopt;
            ++pos;
            piece = *inner;
        } else if (c == ' ' || c == '"' || c == '\'') {
            continue;
        } else if (c == 't' || c == 'E' || c == 'L' || c == 'm' || c == '|') {
            piece = std::string(1, c);
        } else {
            return std::nullopt;
        }
        auto n = repeat();
        if (!n || out.size() + piece.size() * static_cast<size_t>(*n) > 1'000'000) return std::nullopt;
        for (int i = 0; i < *n; ++i) out += piece;
    }
    return out;
}

}  // namespace

// Layers per pipeline stage: the segments of a hybrid pattern, a string layout ("Et*3|(tt|)*29m|L"; both may imply
// the virtual pipeline size), first/last-stage overrides, or an even split.
std::vector<int> stage_layers(const EffectiveModel& m, const LayerPlan& plan, int pp, int& vpp,
                              std::vector<Assumption>& notes) {
    const int layers = static_cast<int>(plan.kinds.size());
    std::vector<int> per(static_cast<size_t>(pp), layers / pp);
    auto from_virtual_stages = [&](const std::vector<int>& virtual_stages) {
        vpp = static_cast<int>(virtual_stages.size()) / pp;
        std::fill(per.begin(), per.end(), 0);
        for (size_t v = 0; v < virtual_stages.size(); ++v) per[v % static_cast<size_t>(pp)] += virtual_stages[v];
    };
    if (!plan.segments.empty()) {
        if (plan.segments.size() % static_cast<size_t>(pp) == 0) {
            from_virtual_stages(plan.segments);
            return per;
        }
        notes.push_back(
            {fmt::format("the hybrid pattern's {} pipeline segments do not divide over {} stages: layers split evenly",
                         plan.segments.size(), pp)});
    }
    const Value& layout = m[field::pipeline_model_parallel_layout];
    if (layout.is_string()) {
        size_t pos = 0;
        auto expanded = expand_layout(layout.as_string(), pos);
        std::vector<int> virtual_stages{0};
        if (expanded && pos == layout.as_string().size()) {
            for (char c : *expanded) {
                if (c == '|') virtual_stages.push_back(0);
                else if (c == 't') ++virtual_stages.back();
            }
        }
        const int stages = static_cast<int>(virtual_stages.size());
        if (expanded && stages % pp == 0 &&
            std::accumulate(virtual_stages.begin(), virtual_stages.end(), 0) == layers) {
            from_virtual_stages(virtual_stages);
            return per;
        }
        notes.push_back({fmt::format("pipeline_model_parallel_layout \"{}\" could not be read: layers split evenly",
                                     layout.as_string())});
    }
    auto first = m.integer(field::num_layers_in_first_pipeline_stage);
    auto last = m.integer(field::num_layers_in_last_pipeline_stage);
    if (pp > 1 && (first || last)) {
        int rest = layers - static_cast<int>(first.value_or(0)) - static_cast<int>(last.value_or(0));
        int middle_stages = pp - (first ? 1 : 0) - (last ? 1 : 0);
        for (int r = 0; r < pp; ++r) per[static_cast<size_t>(r)] = middle_stages > 0 ? rest / middle_stages : 0;
        if (first) per.front() = static_cast<int>(*first);
        if (last) per.back() = static_cast<int>(*last);
        return per;
    }
    if (layers % pp != 0) {
        notes.push_back(
            {fmt::format("{} layers do not split evenly over {} pipeline stages: one more on each of the last "
                         "{} stages assumed",
                         layers, pp, layers % pp)});
        for (int r = pp - layers % pp; r < pp; ++r) ++per[static_cast<size_t>(r)];
    }
    return per;
}

}  // namespace mbl::memory
