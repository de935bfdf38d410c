#include "rules/rule.hpp"

#include <fmt/format.h>

#include "rules/rule_helpers.hpp"

namespace mbl {

SourceRange RuleContext::where(FieldName field) const {
    const Value& v = model[field];
    return v.prov().range.valid() ? v.prov().range : model.anchor;
}

void RuleContext::attach_provenance(Diagnostic& d, const Value& v) const {
    if (!v.prov().detail.empty()) d.notes.push_back(Note{SourceRange{}, v.prov().detail});
    for (const auto& step : v.prov().chain) d.notes.push_back(Note{step.range, step.message});
}

Diagnostic& RuleContext::report(const RuleInfo& rule, FieldName field, std::string message) {
    const Value& v = model[field];
    Diagnostic& d = report_at(rule, v, std::move(message));
    if (!v.prov().range.valid()) d.range = model.anchor;
    return d;
}

Diagnostic& RuleContext::report_at(const RuleInfo& rule, const Value& value, std::string message) {
    Diagnostic d;
    d.code = std::string(rule.code);
    d.name = std::string(rule.name);
    d.severity = rule.severity;
    d.range = value.prov().range.valid() ? value.prov().range : model.anchor;
    d.message = std::move(message);
    attach_provenance(d, value);
    out_.push_back(std::move(d));
    return out_.back();
}

void RuleContext::raises(const Diagnostic& d, std::string_view exception) {
    raises_[static_cast<std::size_t>(&d - out_.data())] = exception;
}

std::any& RuleContext::memo(std::string_view key) const {
    RuleMemo& m = memo_ ? *memo_ : own_memo_;
    auto it = m.find(key);
    if (it == m.end()) it = m.emplace(std::string(key), std::any()).first;
    return it->second;
}

std::vector<Diagnostic> RuleContext::take(const RuleInfo& rule) {
    if (rule.is_rejection())
        for (std::size_t i = 0; i < out_.size(); ++i) {
            auto it = raises_.find(i);
            const std::string_view exception = it == raises_.end() ? rule.raises : it->second;
            if (!exception.empty()) hint(out_[i], rules::rejection_note(model, exception));
        }
    raises_.clear();
    return std::move(out_);
}

void RuleContext::note_field(Diagnostic& d, FieldName field, std::string message) const {
    const Value& v = model[field];
    if (v.prov().range.valid()) {
        d.notes.push_back(Note{v.prov().range, std::move(message)});
        for (const auto& step : v.prov().chain) d.notes.push_back(Note{step.range, step.message});
    } else if (v.prov().origin == Origin::Default && model.revision) {
        d.notes.push_back(Note{SourceRange{}, fmt::format("{} is {} by default (Megatron Core {})", field, v.display(),
                                                          model.revision->name)});
    } else {
        d.notes.push_back(Note{SourceRange{}, std::move(message)});
    }
}

}  // namespace mbl
