#include "engine/fixes.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/line_index.hpp"
#include "parser/front_end.hpp"

namespace mbl {
namespace {

// The mapping that holds `field` in the model section: `model`, or `model.transformer` in builder configs.
struct FieldLookup {
    const Value* parent = nullptr;
    const Value* value = nullptr;
};

FieldLookup find_field(const Value& root, const std::string& section, const std::string& field) {
    FieldLookup out;
    const Value* sec = root.find(section);
    if (!sec || !sec->is_map()) return out;
    if (const Value* v = sec->find(field)) return {sec, v};
    if (const Value* inner = sec->find("transformer"); inner && inner->is_map())
        if (const Value* v = inner->find(field)) return {inner, v};
    return {sec, nullptr};
}

// The mapping of `section` (or its transformer mapping) holding an entry set at `at`.
const Value* mapping_with_entry_at(const Value& root, const std::string& section, const SourceRange& at) {
    const Value* sec = root.find(section);
    if (!sec || !sec->is_map()) return nullptr;
    auto holds = [&](const Value& m) {
        for (const auto& e : m.entries()) {
            const SourceRange& r = e.value.prov().range;
            if (r.file == at.file && r.line == at.line && r.column == at.column) return true;
        }
        return false;
    };
    if (holds(*sec)) return sec;
    if (const Value* inner = sec->find("transformer"); inner && inner->is_map() && holds(*inner)) return inner;
    return nullptr;
}

bool editable(const Value& v) {
    const Origin o = v.prov().origin;
    return (o == Origin::File || o == Origin::Recipe) && v.prov().range.valid();
}

bool same_place(const SourceRange& a, const SourceRange& b) {
    return a.file == b.file && a.line == b.line && a.column == b.column;
}

// The text edits of one field edit and the entry they are made at (`anchor`), or none.
std::vector<TextEdit> edits_for(const FieldEdit& edit, const Diagnostic& d, const Value& root,
                                const SourceManager& sources, SourceRange& anchor) {
    const std::string section = "model", field(edit.field.str());
    FieldLookup found = find_field(root, section, field);
    EditSite site;
    site.field = field;
    if (found.value) {
        if (!editable(*found.value)) return {};
        site.value = found.value;
        site.entry = found.value->prov().range;
        site.siblings = static_cast<int>(found.parent->entries().size());
    } else {
        // Not written anywhere: it goes next to the entry the diagnostic points at, in the same mapping; when the
        // diagnostic points at no entry (a fact of the section as a whole, RC203's "predicted peak over budget"), after
        // the section's last written entry.
        if (edit.op != FieldEdit::Op::Set) return {};
        const Value* parent = mapping_with_entry_at(root, section, d.range);
        site.entry = d.range;
        if (!parent) {
            parent = root.find(section);
            const Value::Entry* last = nullptr;
            if (parent && parent->is_map())
                for (const auto& e : parent->entries())
                    if (editable(e.value)) last = &e;
            if (!last) return {};
            site.entry = last->value.prov().range;
        }
        site.siblings = static_cast<int>(parent->entries().size());
    }
    const std::string* text = sources.text(site.entry.file);
    // Read as the session read it (standard input, `-`, as YAML); command-line overrides are no file to edit.
    const FrontEnd* fe = site.entry.file.rfind('<', 0) == 0 ? nullptr : &front_end_or_yaml(site.entry.file);
    if (!text || !fe) return {};
    anchor = site.entry;
    return fe->field_edit(edit, site, *text, *sources.lines(site.entry.file));
}

// Each model entry of `root` (the transformer mapping's of builder configs too).
template <typename Visit>
void for_each_model_entry(const Value& root, Visit visit) {
    const Value* model = root.find("model");
    if (!model || !model->is_map()) return;
    for (const auto& e : model->entries()) visit(e);
    if (const Value* inner = model->find("transformer"); inner && inner->is_map())
        for (const auto& e : inner->entries()) visit(e);
}

bool same_chain(const CallChain& a, const CallChain& b) {
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(), [](const ChainStep& x, const ChainStep& y) {
               return same_place(x.range, y.range) && x.message == y.message;
           });
}

// Whether any model entry of `root` was set at one of `places`.
bool sets_model_at(const Value& root, const std::vector<SourceRange>& places) {
    bool found = false;
    for_each_model_entry(root, [&](const Value::Entry& e) {
        for (const auto& p : places) found = found || same_place(e.value.prov().range, p);
    });
    return found;
}

}  // namespace

void resolve_fix_edits(std::vector<Diagnostic>& diags, const Value& root, const SourceManager& sources) {
    for (auto& d : diags) {
        if (!d.fix || d.fix->field_edits.empty() || !d.fix->edits.empty()) continue;
        std::vector<TextEdit> all;
        std::vector<SourceRange> anchors;
        bool complete = true;
        for (const auto& fe : d.fix->field_edits) {
            SourceRange anchor;
            auto edits = edits_for(fe, d, root, sources, anchor);
            if (edits.empty()) {
                complete = false;
                break;
            }
            all.insert(all.end(), edits.begin(), edits.end());
            anchors.push_back(std::move(anchor));
        }
        if (complete) {
            d.fix->edits = std::move(all);
            d.fix->anchors = std::move(anchors);
        }
    }
}

std::vector<SourceRange> lines_run_with(const Value& root, const SourceRange& anchor) {
    const CallChain* call = nullptr;
    for_each_model_entry(root, [&](const Value::Entry& e) {
        if (!call && same_place(e.value.prov().range, anchor)) call = &e.value.prov().chain;
    });
    std::vector<SourceRange> out{anchor};
    if (!call) return out;
    for_each_model_entry(root, [&](const Value::Entry& e) {
        const Provenance& p = e.value.prov();
        if (p.range.valid() && p.range.file == anchor.file && !same_place(p.range, anchor) &&
            same_chain(p.chain, *call))
            out.push_back(p.range);
    });
    return out;
}

const SourceRange* fix_changes(const Fix& fix, const Value& own, const Value& other) {
    for (std::size_t k = 0; k < fix.anchors.size() && k < fix.field_edits.size(); ++k) {
        const SourceRange& at = fix.anchors[k];
        const std::string field(fix.field_edits[k].field.str());
        const Value* mine = find_field(own, "model", field).value;
        const Value* theirs = find_field(other, "model", field).value;
        if (mine && same_place(mine->prov().range, at)) {
            // The edit replaces or removes the entry: it matters where the other config's value still comes from it.
            if (theirs && same_place(theirs->prov().range, at)) return &at;
        } else if ((!theirs || !theirs->prov().range.valid()) && sets_model_at(other, lines_run_with(own, at))) {
            // The edit adds the field after the entry: it matters where the other config ran that code and does not
            // write the field itself.
            return &at;
        }
    }
    return nullptr;
}

void withdraw_shared_fixes(std::vector<std::vector<Diagnostic>*> per_config, const std::vector<const Value*>& roots,
                           const std::vector<std::string>& labels) {
    // Past this many other configs running a line, a fix there is left without comparing them one by one (a file
    // of generated recipes that share a helper must not cost configs squared).
    constexpr std::size_t kMostCompared = 256;
    const bool any_fix = std::any_of(per_config.begin(), per_config.end(), [](const std::vector<Diagnostic>* ds) {
        return std::any_of(ds->begin(), ds->end(), [](const Diagnostic& d) { return d.fix && !d.fix->edits.empty(); });
    });
    if (!any_fix) return;
    // The configs that set a model entry at each (line, column): the only ones a fix made there can change.
    std::map<std::pair<int, int>, std::vector<std::size_t>> setters;
    for (std::size_t j = 0; j < roots.size(); ++j)
        for_each_model_entry(*roots[j], [&](const Value::Entry& e) {
            const SourceRange& r = e.value.prov().range;
            if (!r.valid()) return;
            auto& who = setters[{r.line, r.column}];
            if (who.empty() || who.back() != j) who.push_back(j);
        });
    auto withdraw = [](Diagnostic& d, std::string why) {
        d.notes.push_back(Note{SourceRange{}, std::move(why)});
        d.fix->edits.clear();
        d.fix->anchors.clear();
    };
    for (std::size_t i = 0; i < per_config.size(); ++i) {
        for (auto& d : *per_config[i]) {
            if (!d.fix || d.fix->edits.empty()) continue;
            std::set<std::size_t> others;
            for (const auto& a : d.fix->anchors)
                for (const auto& place : lines_run_with(*roots[i], a))
                    if (auto it = setters.find({place.line, place.column}); it != setters.end())
                        for (std::size_t j : it->second) {
                            if (j != i) others.insert(j);
                            if (others.size() > kMostCompared) break;
                        }
            if (others.size() > kMostCompared) {
                withdraw(d, fmt::format("no automatic fix: more than {} other configs of this file run the code it "
                                        "would edit",
                                        kMostCompared));
                continue;
            }
            for (std::size_t j : others) {
                const SourceRange* shared = fix_changes(*d.fix, *roots[i], *roots[j]);
                if (!shared) continue;
                // The other config makes the same edit for a diagnostic of its own: one fix serves both.
                const bool same = std::any_of(per_config[j]->begin(), per_config[j]->end(), [&](const Diagnostic& o) {
                    return o.code == d.code && o.fix && same_edits(*o.fix, *d.fix);
                });
                if (same) continue;
                withdraw(d, fmt::format("no automatic fix: {}:{} also sets the config of {}, which this fix was not "
                                        "worked out for",
                                        shared->file, shared->line,
                                        labels[j].empty() ? "another config" : "recipe " + labels[j]));
                break;
            }
        }
    }
}

bool same_edits(const Fix& a, const Fix& b) {
    return a.edits.size() == b.edits.size() &&
           std::equal(a.edits.begin(), a.edits.end(), b.edits.begin(), [](const TextEdit& x, const TextEdit& y) {
               return same_place(x.range, y.range) && x.range.end_line == y.range.end_line &&
                      x.range.end_column == y.range.end_column && x.replacement == y.replacement;
           });
}

std::vector<TextEdit> edits_in(const Fix& fix, const std::string& file) {
    std::vector<TextEdit> out;
    for (const auto& e : fix.edits)
        if (e.range.file == file) out.push_back(e);
    std::sort(out.begin(), out.end(), [](const TextEdit& a, const TextEdit& b) {
        return std::tie(a.range.line, a.range.column) < std::tie(b.range.line, b.range.column);
    });
    return out;
}

std::optional<EditOutcome> apply_edits(std::string_view text, std::vector<TextEdit> edits) {
    LineIndex lines(text);
    struct Span {
        std::size_t b, e;
        std::string replacement;
    };
    std::vector<Span> spans;
    for (auto& ed : edits) {
        std::size_t b = lines.offset(ed.range.line, ed.range.column),
                    e = lines.offset(ed.range.end_line, ed.range.end_column);
        if (e < b) return std::nullopt;
        spans.push_back({b, e, std::move(ed.replacement)});
    }
    std::stable_sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.b < b.b; });
    EditOutcome out;
    std::size_t pos = 0;
    for (std::size_t i = 0; i < spans.size(); ++i) {
        const Span& s = spans[i];
        if (i > 0 && s.b == spans[i - 1].b && s.e == spans[i - 1].e && s.replacement == spans[i - 1].replacement)
            continue;  // the same edit twice (two fixes that both delete one comment)
        if (s.b < pos) return std::nullopt;
        out.text.append(text.substr(pos, s.b - pos));
        out.text += s.replacement;
        pos = s.e;
        ++out.applied;
    }
    out.text.append(text.substr(pos));
    return out;
}

}  // namespace mbl
