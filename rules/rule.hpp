#pragma once
// A rule is one class with a stable code and name. Its documentation string IS the user documentation:
// `mbridge-lint explain CODE` prints it and docs/rules.md is generated from it. Every doc has the sections
// "## What it does", "## Why is this bad?", "## Example" and "## Use instead" (a test enforces this).
#include <any>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/effective_model.hpp"
#include "core/revision_keys.hpp"
#include "core/version.hpp"

namespace mbl {

struct RuleInfo {
    std::string_view code;  // RC004
    std::string_view name;  // full-recompute-without-method
    Severity severity;
    std::string_view summary;  // one line, for `mbridge-lint rules`
    std::string_view doc;      // markdown, see above
    // Error rules: the exception Megatron Core raises. The rule runner closes each of the rule's diagnostics with
    // "Megatron Core <revision> rejects this config at start-up (<raises> in TransformerConfig.__post_init__)".
    std::string_view raises = "ValueError";
    // Error rules: the Megatron Core raise sites the rule explains, as fragments of their messages ('|' between
    // them). Where the revision's __post_init__ is compiled (core/post_init.hpp), a diagnostic stands only when such a
    // site certainly raises for the config (rules/megatron_raises.cpp); every other certain raise is RC000.
    std::string_view raise_text = {};
    // The rules whose report covers this one's: where one of them reports on the same model, the rule runner drops
    // this rule's diagnostics (one problem, one report), so no rule restates another's condition.
    std::array<std::string_view, 2> yields_to = {};
    // Error rules mirror a Megatron Core rejection and run only at revisions whose schema lists the code.
    constexpr bool is_rejection() const { return severity == Severity::Error; }
};

struct RuleOptions {
    std::optional<Version> te_version;       // installed Transformer Engine, when the user states it
    std::optional<double> gpu_memory_bytes;  // per-GPU memory budget; the memory advice rules (RC2xx) need it
    std::optional<int> data_parallel_size;   // not in the config; shards the distributed optimizer
    std::optional<int> gpus;                 // the job's GPU count (--gpus): data parallel = GPUs / (TP x PP x CP)
    std::optional<double> reserve_bytes;     // --reserve: kept free beside the predicted peak
    // The config is an overlay applied to a recipe the linter is not told: a field it leaves alone is the recipe's, so
    // a Megatron Core raise whose guard reads one is possible, not certain (rules/megatron_raises.cpp).
    bool overlay = false;
};

// What one rule computes about a model and the other rules of the same run reuse (the memory estimate the RC2xx
// rules share), by key.
using RuleMemo = std::map<std::string, std::any, std::less<>>;

class RuleContext {
public:
    RuleContext(const EffectiveModel& effective, const RuleOptions& rule_options, RuleMemo* memo = nullptr)
        : model(effective), options(rule_options), memo_(memo) {}

    const EffectiveModel& model;
    const RuleOptions& options;
    const Revision& revision() const { return *model.revision; }

    // Where a field was set, or the model section when it holds a default.
    SourceRange where(FieldName field) const;
    // Reports a problem located at the line that set `field`; the value's provenance chain becomes notes.
    Diagnostic& report(const RuleInfo& rule, FieldName field, std::string message);
    Diagnostic& report_at(const RuleInfo& rule, const Value& value, std::string message);
    // A note about another field involved: located when that field was set somewhere, plain for defaults.
    void note_field(Diagnostic& d, FieldName field, std::string message) const;
    static void hint(Diagnostic& d, std::string message) { d.notes.push_back(Note{SourceRange{}, std::move(message)}); }

    // An error rule's diagnostic that Megatron Core rejects with another exception than the rule's `raises`; empty
    // when something else rejects it (the rule's own hint says what), so no Megatron Core note is added.
    void raises(const Diagnostic& d, std::string_view exception);

    // The rule's diagnostics; an error rule's each end with the Megatron Core rejection note.
    std::vector<Diagnostic> take(const RuleInfo& rule);

    // The run's shared result under `key` (empty until a rule stores one); a context without a memo has its own.
    std::any& memo(std::string_view key) const;

private:
    RuleMemo* memo_ = nullptr;
    mutable RuleMemo own_memo_;
    void attach_provenance(Diagnostic& d, const Value& v) const;
    std::vector<Diagnostic> out_;
    std::map<std::size_t, std::string_view> raises_;  // index in out_ -> exception, where not the rule's
};

class Rule {
public:
    virtual ~Rule() = default;
    virtual const RuleInfo& info() const = 0;
    virtual void check(RuleContext& ctx) const = 0;
};

// A named rule tied to Megatron Core's raise sites alone, restating no condition: the rule runner reports it where the
// compiled __post_init__ certainly raises at a site its raise_text names (rules/megatron_raises.cpp).
template <const RuleInfo& Info>
class RaiseSiteRule final : public Rule {
public:
    const RuleInfo& info() const override { return Info; }
    void check(RuleContext&) const override {}
};

}  // namespace mbl

// Defines the factory the registry (rules/rules.def) calls for a rule class, whose RuleInfo is `kRule`. Which revisions
// enforce an error rule follows from the raise sites it names (raise_text); a test fails when no revision has one.
#define MBL_DEFINE_RULE(CODE, CLASS)                                                               \
    static_assert(kRule.code == #CODE, "MBL_DEFINE_RULE(" #CODE ", ...): kRule has another code"); \
    std::unique_ptr<::mbl::Rule> make_rule_##CODE() { return std::make_unique<CLASS>(); }
