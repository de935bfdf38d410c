#include "rules/megatron_raises.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "rules/registry.hpp"
#include "rules/rule_helpers.hpp"

namespace mbl {

bool explains(const RuleInfo& rule, const post_init::Site& site) {
    std::string_view text = rule.raise_text;
    while (!text.empty()) {
        const auto bar = text.find('|');
        const std::string_view fragment = text.substr(0, bar);
        if (!fragment.empty() && site.text.find(fragment) != std::string::npos) return true;
        if (bar == std::string_view::npos) break;
        text.remove_prefix(bar + 1);
    }
    return false;
}

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

void apply_megatron_verdict(const EffectiveModel& model, const RuleOptions& options, std::vector<Diagnostic>& diags) {
    std::shared_ptr<const post_init::Outcome> outcome = model.post_init;
    if (!outcome) return;
    if (options.te_version) {  // the user stated the Transformer Engine: the checks on it are decided
        post_init::JobFacts facts;
        facts.te_version = fmt::format("{}", fmt::join(options.te_version->parts, "."));
        if (auto o = run_post_init(model, facts)) outcome = std::make_shared<const post_init::Outcome>(std::move(*o));
    }
    if (model.revision) outcome = confirmed(outcome, *model.revision);
    const std::string rev = model.revision ? model.revision->name : "";
    std::set<const post_init::Site*> explained;
    std::vector<Diagnostic> kept;
    for (auto& d : diags) {
        const Rule* rule = find_rule(d.code);
        if (!rule || !rule->info().is_rejection() || rule->info().raise_text.empty()) {
            kept.push_back(std::move(d));
            continue;
        }
        const post_init::Event* certain = nullptr;
        const post_init::Event* possible = nullptr;
        for (const auto& e : outcome->events) {
            if (e.site->kind != post_init::Site::Kind::Raise || !explains(rule->info(), *e.site)) continue;
            if (e.certain && !certain) certain = &e;
            if (!e.certain && !possible) possible = &e;
        }
        const std::string generic = rules::rejection_note(model, "");
        auto generic_note = std::find_if(d.notes.begin(), d.notes.end(), [&](const Note& n) {
            return n.message.rfind(generic.substr(0, generic.find('(')), 0) == 0;
        });
        if (generic_note == d.notes.end()) {
            // Not a Megatron Core rejection (RuleContext::raises with no exception: Bridge's own start-up checks).
            kept.push_back(std::move(d));
            continue;
        }
        if (certain) {
            for (const auto& e : outcome->events)
                if (e.certain && e.site->kind == post_init::Site::Kind::Raise && explains(rule->info(), *e.site))
                    explained.insert(e.site);
            const std::string note = fmt::format("Megatron Core {} rejects this config at start-up ({} at {})", rev,
                                                 certain->site->exception, site_place(*certain->site));
            if (generic_note != d.notes.end()) generic_note->message = note;
            else d.notes.push_back(Note{SourceRange{}, note});
            kept.push_back(std::move(d));
        } else if (possible) {
            // Megatron Core's check depends on what the linter does not know: no promise of a failure.
            d.severity = Severity::Warning;
            const std::string note =
                fmt::format("Megatron Core {} rejects this config at start-up ({} at {}) only if {}", rev,
                            possible->site->exception, site_place(*possible->site), possible->why_uncertain);
            if (generic_note != d.notes.end()) generic_note->message = note;
            else d.notes.push_back(Note{SourceRange{}, note});
            kept.push_back(std::move(d));
        }
        // No site of the rule raises here: Megatron Core's source at this revision says the config passes that check.
    }
    const Rule* rc000 = find_rule("RC000");
    std::set<const post_init::Site*> reported;
    std::set<std::string, std::less<>> read_by_earlier;  // the fields the guards of earlier certain raises read
    for (const auto& e : outcome->events) {
        if (!rc000 || !e.certain || e.site->kind != post_init::Site::Kind::Raise) continue;
        // Megatron Core stops at its first raise; the executor goes on to report every rejection at once. A later
        // raise whose guard reads a field an earlier reported raise's guard read may only follow from that one (an
        // invalid recompute_granularity fails the recompute_method check too): it is not reported on its own. A raise
        // left unreported (on defaults, below) hides nothing after it.
        auto mark_read = [&] { read_by_earlier.insert(e.site->reads.begin(), e.site->reads.end()); };
        if (explained.count(e.site) || reported.count(e.site)) {
            mark_read();
            continue;
        }
        if (std::any_of(e.site->reads.begin(), e.site->reads.end(),
                        [&](const std::string& f) { return read_by_earlier.count(f) > 0; }))
            continue;
        // A raise a named rule is tied to, which the rule's own reading of the config missed: reported under that
        // rule's code, with Megatron Core's message (the named rules read unset fields as Megatron Core's defaults).
        const Rule* named = nullptr;
        for (const auto& r : all_rules())
            if (r->info().is_rejection() && !r->info().raise_text.empty() && explains(r->info(), *e.site)) {
                named = r.get();
                break;
            }
        // A guard that reads a field the config leaves at Megatron Core's default is no promise for a partial config
        // (an overlay, a recipe whose base sets it elsewhere, what Bridge fills in at launch such as pipeline_dtype).
        bool on_defaults = false;
        for (const auto& f : e.site->reads)
            if (const Value* v = read_field(model, f); !v || v->prov().origin == Origin::Default) on_defaults = true;
        if (!named && on_defaults) continue;
        reported.insert(e.site);
        mark_read();
        Diagnostic d;
        const RuleInfo& info = named ? named->info() : rc000->info();
        d.code = std::string(info.code);
        d.name = std::string(info.name);
        // Outside a whole dump, Bridge's own start-up (its TransformerConfig.finalize, which is not compiled yet) runs
        // before these checks and may change what they read: no promise of a failure for a check no rule names.
        d.severity = named || model.full_dump ? Severity::Error : Severity::Warning;
        d.range = raise_location(model, *e.site);
        d.message =
            fmt::format("Megatron Core {} rejects this config: {}", rev, e.message.empty() ? e.site->text : e.message);
        d.notes.push_back(Note{
            SourceRange{},
            fmt::format(
                "raised as {} at {} in {}{}", e.site->exception, site_place(*e.site), e.site->function,
                model.revision && !model.revision->classes->check_program()->commit.empty()
                    ? fmt::format(" (Megatron-LM {})", model.revision->classes->check_program()->commit.substr(0, 12))
                    : std::string())});
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
