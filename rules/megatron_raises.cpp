#include "rules/megatron_raises.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "rules/registry.hpp"
#include "rules/rule_helpers.hpp"

namespace mbl {

bool explains(std::string_view raise_text, const post_init::Site& site) {
    std::string_view text = raise_text;
    while (!text.empty()) {
        const auto bar = text.find('|');
        const std::string_view fragment = text.substr(0, bar);
        if (!fragment.empty() && site.text.find(fragment) != std::string::npos) return true;
        if (bar == std::string_view::npos) break;
        text.remove_prefix(bar + 1);
    }
    return false;
}

bool explains(const RuleInfo& rule, const post_init::Site& site) { return explains(rule.raise_text, site); }

bool enforced_at(const RuleInfo& rule, const Revision& rev) {
    const post_init::Program* program = rev.classes ? rev.classes->check_program() : nullptr;
    if (!program) return false;
    // Programs live as long as their revisions: the answer per program and rule is kept.
    static std::mutex mutex;
    static std::map<std::pair<const post_init::Program*, std::string_view>, bool> memo;
    std::lock_guard<std::mutex> lock(mutex);
    auto [it, added] = memo.try_emplace({program, rule.code}, false);
    if (added)
        it->second = std::any_of(program->sites.begin(), program->sites.end(), [&](const post_init::Site& site) {
            return site.kind == post_init::Site::Kind::Raise && (rule.raise_text.empty() || explains(rule, site));
        });
    return it->second;
}

namespace {

std::string site_place(const post_init::Site& s) { return fmt::format("{}:{}", s.file, s.line); }

// Facts that stand in for a commit nobody read (Revision::approximate) prove a raise only where the revision on the
// commit's other side states the same check too: a check one of them lacks may have come or gone in between.
std::shared_ptr<const post_init::Outcome> confirmed(std::shared_ptr<const post_init::Outcome> outcome,
                                                    const Revision& rev) {
    if (!rev.approximate || !rev.confirm || rev.confirm == &rev || !rev.confirm->classes ||
        !rev.confirm->classes->check_program())
        return outcome;
    const post_init::Program& other = *rev.confirm->classes->check_program();
    auto stated = [&](const post_init::Site& site) {
        return std::any_of(other.sites.begin(), other.sites.end(), [&](const post_init::Site& s) {
            return s.kind == site.kind && s.exception == site.exception && s.text == site.text;
        });
    };
    auto copy = std::make_shared<post_init::Outcome>(*outcome);
    for (auto& e : copy->events)
        if (e.certain && e.site->kind == post_init::Site::Kind::Raise && !stated(*e.site)) {
            e.certain = false;
            e.why_uncertain = fmt::format("the pinned commit has this check: {}'s source states it, {}'s does not",
                                          rev.name, rev.confirm->name);
        }
    return copy;
}

// The value of a field a guard reads, by the name in the compiled check; null when no field has that name.
const Value* read_field(const EffectiveModel& m, std::string_view name) {
    // A section's attribute Bridge's start-up read ("dataset.enable_offline_packing"), where it raised for certain.
    if (const auto dot = name.find('.'); dot != std::string_view::npos && m.bridge_sections) {
        const Value* v = m.bridge_sections->find(std::string(name.substr(0, dot)));
        return v && v->is_map() ? v->find(std::string(name.substr(dot + 1))) : nullptr;
    }
    const auto field = FieldName::find(name);
    return field ? m.find(*field) : nullptr;
}

// Where to point for a raise: the innermost field its guard reads (an assert's own subject comes last) that the
// config sets on a line.
SourceRange raise_location(const EffectiveModel& m, const post_init::Site& site) {
    for (auto it = site.reads.rbegin(); it != site.reads.rend(); ++it)
        if (const Value* v = read_field(m, *it); v && v->prov().range.valid()) return v->prov().range;
    return m.anchor;
}

}  // namespace

namespace {

// One event of the start-up, with who raised it: Megatron Bridge's comm-overlap setup runs before Megatron Core's
// __post_init__, so its events come first.
struct Raised {
    const post_init::Event* event;
    std::string who;     // "Megatron Core 0.20.dev", "Megatron Bridge 067f987"
    std::string source;  // " (Megatron-LM 2a75ac12c54b)", " (Megatron Bridge 067f987df03b)"
    // Reached by Bridge's validation of the whole config (ConfigContainer.validate), which runs after start-up steps
    // the linter does not compile yet (the model's finalize): outside a whole dump they may change what it reads.
    bool whole_config = false;
};

bool whole_config_step(const post_init::Event& e) {
    return e.step && std::find(e.step->args.begin(), e.step->args.end(), post_init::kContainer) != e.step->args.end();
}

std::vector<Raised> raised_events(const EffectiveModel& model, const post_init::Outcome* bridge,
                                  const post_init::Outcome* core) {
    std::vector<Raised> out;
    if (bridge && model.bridge_program) {
        const std::string& commit = model.bridge_program->commit;
        // A program without a commit is the linted checkout's own (engine/mcore_trees.hpp bridge_checks_for_file).
        const std::string who = commit.empty() ? "Megatron Bridge (this checkout's source)"
                                               : fmt::format("Megatron Bridge {}", commit.substr(0, 7));
        const std::string source = commit.empty() ? "" : fmt::format(" (Megatron Bridge {})", commit.substr(0, 12));
        for (const auto& e : bridge->events) out.push_back({&e, who, source, whole_config_step(e)});
    }
    if (core) {
        const std::string rev = model.revision ? model.revision->name : "";
        const post_init::Program* program = model.revision ? model.revision->classes->check_program() : nullptr;
        const std::string source = program && !program->commit.empty()
                                       ? fmt::format(" (Megatron-LM {})", program->commit.substr(0, 12))
                                       : std::string();
        for (const auto& e : core->events) out.push_back({&e, fmt::format("Megatron Core {}", rev), source, false});
    }
    return out;
}

// Whether the site's guard reads a field the config sets on the line `at` points at.
bool reads_at(const EffectiveModel& m, const post_init::Site& site, const SourceRange& at) {
    return std::any_of(site.reads.begin(), site.reads.end(), [&](const std::string& f) {
        const Value* v = read_field(m, f);
        return v && v->prov().range.valid() && v->prov().range.file == at.file && v->prov().range.line == at.line;
    });
}

// The value of a section's attribute a Bridge guard reads ("comm_overlap.user_comm_overlap_cfg.flag"): not a field of
// the model, and the section's own (set by the config, or its class's default when absent).
bool section_read(const std::string& name) { return name.find('.') != std::string::npos; }

// On an overlay a raise whose guard reads a model field the overlay leaves at Megatron Core's default is possible, not
// certain: the recipe the overlay is applied to may set that field (a provider turning moe_grouped_gemm on).
std::shared_ptr<const post_init::Outcome> on_overlay(const std::shared_ptr<const post_init::Outcome>& outcome,
                                                     const EffectiveModel& m) {
    auto copy = std::make_shared<post_init::Outcome>(*outcome);
    for (auto& e : copy->events) {
        if (!e.certain || e.site->kind != post_init::Site::Kind::Raise) continue;
        for (const auto& f : e.site->reads) {
            const Value* v = read_field(m, f);
            if (section_read(f) || (v && v->prov().origin != Origin::Default)) continue;
            e.certain = false;
            e.why_uncertain =
                v ? fmt::format("the recipe this overlay is applied to leaves {} at Megatron Core's default ({})", f,
                                v->display())
                  : fmt::format("the recipe this overlay is applied to leaves {} unset", f);
            break;
        }
    }
    return copy;
}

}  // namespace

void apply_megatron_verdict(const EffectiveModel& model, const RuleOptions& options, std::vector<Diagnostic>& diags) {
    std::shared_ptr<const post_init::Outcome> outcome = model.post_init;
    std::shared_ptr<const post_init::Outcome> bridge = model.bridge_setup;
    if (!outcome && !bridge) return;
    if (options.te_version) {  // the user stated the Transformer Engine: the checks on it are decided
        post_init::JobFacts facts;
        facts.te_version = fmt::format("{}", fmt::join(options.te_version->parts, "."));
        if (outcome)
            if (auto o = run_post_init(model, facts))
                outcome = std::make_shared<const post_init::Outcome>(std::move(*o));
        if (bridge && model.rerun_bridge_setup)
            if (auto o = model.rerun_bridge_setup(facts))
                bridge = std::make_shared<const post_init::Outcome>(std::move(*o));
    }
    if (outcome && model.revision) outcome = confirmed(outcome, *model.revision);
    if (outcome && options.overlay) outcome = on_overlay(outcome, model);
    const std::vector<Raised> events = raised_events(model, bridge.get(), outcome.get());
    std::set<const post_init::Site*> explained;
    std::vector<Diagnostic> kept;
    for (auto& d : diags) {
        const Rule* rule = find_rule(d.code);
        if (!rule || !rule->info().is_rejection() || rule->info().raise_text.empty()) {
            kept.push_back(std::move(d));
            continue;
        }
        const std::string_view tie = d.raise_text.empty() ? rule->info().raise_text : d.raise_text;
        // The first raise the rule explains, one whose guard reads the field the diagnostic points at before others.
        const Raised* certain = nullptr;
        const Raised* possible = nullptr;
        bool certain_points = false;
        for (const auto& r : events) {
            if (r.event->site->kind != post_init::Site::Kind::Raise || !explains(tie, *r.event->site)) continue;
            const bool points = reads_at(model, *r.event->site, d.range);
            if (r.event->certain && (!certain || (points && !certain_points))) {
                certain = &r;
                certain_points = points;
            }
            if (!r.event->certain && !possible) possible = &r;
        }
        const std::string generic = rules::rejection_note(model, "");
        auto generic_note = std::find_if(d.notes.begin(), d.notes.end(), [&](const Note& n) {
            return n.message.rfind(generic.substr(0, generic.find('(')), 0) == 0;
        });
        if (generic_note == d.notes.end()) {
            // Not a start-up rejection (RuleContext::raises with no exception: the rule's own hint says who rejects it).
            kept.push_back(std::move(d));
            continue;
        }
        if (certain) {
            for (const auto& r : events)
                if (r.event->certain && r.event->site->kind == post_init::Site::Kind::Raise &&
                    explains(tie, *r.event->site))
                    explained.insert(r.event->site);
            generic_note->message = fmt::format("{} rejects this config at start-up ({} at {})", certain->who,
                                                certain->event->site->exception, site_place(*certain->event->site));
            kept.push_back(std::move(d));
        } else if (possible) {
            // The check depends on what the linter does not know: no promise of a failure.
            d.severity = Severity::Warning;
            generic_note->message = fmt::format("{} rejects this config at start-up ({} at {}) only if {}",
                                                possible->who, possible->event->site->exception,
                                                site_place(*possible->event->site), possible->event->why_uncertain);
            kept.push_back(std::move(d));
        } else if (!outcome && d.raise_text.empty()) {
            kept.push_back(std::move(d));  // Megatron Core's checks did not run (which class runs is unknown)
        }
        // No site of the rule raises here: the source says the config passes that check.
    }
    const Rule* rc000 = find_rule("RC000");
    std::set<const post_init::Site*> reported;
    std::set<std::string, std::less<>> read_by_earlier;  // the fields the guards of earlier certain raises read
    for (const auto& r : events) {
        const post_init::Event& e = *r.event;
        if (!rc000 || !e.certain || e.site->kind != post_init::Site::Kind::Raise) continue;
        // The start-up stops at its first raise; the executor goes on to report every rejection at once. A later
        // raise whose guard reads a field an earlier reported raise's guard read may only follow from that one (an
        // invalid recompute_granularity fails the recompute_method check too; Megatron Core restates Bridge's
        // overlap checks): it is not reported on its own. A raise left unreported (on defaults, below) hides nothing
        // after it.
        auto mark_read = [&] {
            for (const auto& f : e.site->reads) read_by_earlier.insert(f);
        };
        if (explained.count(e.site) || reported.count(e.site)) {
            mark_read();
            continue;
        }
        if (std::any_of(e.site->reads.begin(), e.site->reads.end(),
                        [&](const std::string& f) { return read_by_earlier.count(f) > 0; }))
            continue;
        // A raise a named rule is tied to, which the rule's own reading of the config missed: reported under that
        // rule's code, with the raiser's message (the named rules read unset fields as Megatron Core's defaults).
        const Rule* named = nullptr;
        for (const auto& rule : all_rules())
            if (rule->info().is_rejection() && !rule->info().raise_text.empty() && explains(rule->info(), *e.site)) {
                named = rule.get();
                break;
            }
        // A guard that reads a field the config leaves at Megatron Core's default is no promise for a partial config
        // (an overlay, a recipe whose base sets it elsewhere, what Bridge fills in at launch such as pipeline_dtype).
        bool on_defaults = false;
        for (const auto& f : e.site->reads)
            if (const Value* v = read_field(model, f); !section_read(f) && (!v || v->prov().origin == Origin::Default))
                on_defaults = true;
        if (!named && on_defaults) continue;
        reported.insert(e.site);
        mark_read();
        Diagnostic d;
        const RuleInfo& info = named ? named->info() : rc000->info();
        d.code = std::string(info.code);
        d.name = std::string(info.name);
        // Outside a whole dump, Bridge's own start-up (its TransformerConfig.finalize, which is not compiled yet) runs
        // before these checks and may change what they read: no promise of a failure for a check no rule names, nor
        // for Bridge's whole-config validation, which runs after more of that start-up, named or not.
        d.severity = model.full_dump || (named && !r.whole_config) ? Severity::Error : Severity::Warning;
        d.range = raise_location(model, *e.site);
        d.message = fmt::format("{} rejects this config: {}", r.who, e.message.empty() ? e.site->text : e.message);
        d.notes.push_back(Note{SourceRange{}, fmt::format("raised as {} at {} in {}{}", e.site->exception,
                                                          site_place(*e.site), e.site->function, r.source)});
        for (const auto& f : e.site->reads)
            if (const Value* v = read_field(model, f);
                v && v->prov().range.valid() &&
                !(v->prov().range.file == d.range.file && v->prov().range.line == d.range.line))
                d.notes.push_back(Note{v->prov().range, fmt::format("{} is set here", f)});
        kept.push_back(std::move(d));
    }
    diags = std::move(kept);
}

}  // namespace mbl
