#include "engine/lint_session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <tuple>

#include "config/rule_selection.hpp"
#include "core/file_text.hpp"
#include "core/input_errors.hpp"
#include "core/paths.hpp"
#include "core/schema.hpp"
#include "engine/fixes.hpp"
#include "engine/linter.hpp"
#include "engine/mcore_trees.hpp"
#include "engine/suppressions.hpp"

namespace mbl {
namespace {

constexpr std::string_view kInRecipe = "in recipe ";           // the note naming a diagnostic's recipe
constexpr std::string_view kAlsoInRecipe = "also in recipe ";  // a place a once-per-subject diagnostic also has

bool located_before(const SourceRange& a, const SourceRange& b) {
    return std::tie(a.file, a.line, a.column) < std::tie(b.file, b.line, b.column);
}

bool is_also_note(const Note& n) { return n.range.valid() && n.message.rfind(kAlsoInRecipe, 0) == 0; }

// One diagnostic for a group reported once per subject: the one at the first place keeps its notes, every other
// member adds a located note naming its recipe.
Diagnostic merge_subject_group(std::vector<std::pair<std::string, Diagnostic>> members) {
    std::stable_sort(members.begin(), members.end(),
                     [](const auto& a, const auto& b) { return located_before(a.second.range, b.second.range); });
    Diagnostic first = std::move(members.front().second);
    auto own_end =
        std::stable_partition(first.notes.begin(), first.notes.end(), [](const Note& n) { return !is_also_note(n); });
    std::vector<Note> also(std::make_move_iterator(own_end), std::make_move_iterator(first.notes.end()));
    first.notes.erase(own_end, first.notes.end());
    for (size_t i = 1; i < members.size(); ++i) {
        auto& [recipe, d] = members[i];
        also.push_back(Note{d.range, fmt::format("{}{}", kAlsoInRecipe, recipe)});
        for (auto& n : d.notes)
            if (is_also_note(n)) also.push_back(std::move(n));
    }
    std::stable_sort(also.begin(), also.end(),
                     [](const Note& a, const Note& b) { return located_before(a.range, b.range); });
    for (auto& n : also) first.notes.push_back(std::move(n));
    return first;
}

}  // namespace

bool reported_once_per_subject(const Diagnostic& d) { return d.code == input_error_code(InputError::UnknownModel); }

void merge_subjects_across_files(std::vector<Diagnostic>& diags) {
    std::map<std::pair<std::string, std::string>, std::vector<std::pair<std::string, Diagnostic>>> groups;
    std::vector<Diagnostic> kept;
    for (auto& d : diags) {
        if (!reported_once_per_subject(d)) {
            kept.push_back(std::move(d));
            continue;
        }
        std::string recipe = recipe_of(d);
        groups[{d.code, d.message}].emplace_back(std::move(recipe), std::move(d));
    }
    for (auto& [key, members] : groups) {
        Diagnostic d = merge_subject_group(std::move(members));
        // The other places as one note: the editor server keeps them as separate located notes instead.
        std::vector<std::string> places;
        for (const auto& n : d.notes)
            if (is_also_note(n))
                places.push_back(fmt::format("{} ({}:{}:{})", n.message.substr(kAlsoInRecipe.size()), n.range.file,
                                             n.range.line, n.range.column));
        d.notes.erase(std::remove_if(d.notes.begin(), d.notes.end(), is_also_note), d.notes.end());
        if (!places.empty()) {
            constexpr size_t kListed = 8;
            std::string list;
            for (size_t k = 0; k < places.size() && k < kListed; ++k) list += (k ? ", " : "") + places[k];
            if (places.size() > kListed) list += fmt::format(" and {} more", places.size() - kListed);
            d.notes.push_back(
                Note{SourceRange{}, fmt::format("reported once: {} other recipe{} load{} it too: {}", places.size(),
                                                places.size() == 1 ? "" : "s", places.size() == 1 ? "s" : "", list)});
        }
        kept.push_back(std::move(d));
    }
    diags = std::move(kept);
    sort_diagnostics(diags);
}

ParseContext LintSession::parse_context(const ProjectConfig& config) {
    // The import root: --root, else a `root` the configuration file sets, else the front end finds one per file
    // (the configuration's default root, its own directory, is about path patterns, not imports).
    std::string root = options_.root;
    if (root.empty() && config.root.source.kind != SettingSource::Kind::Default) root = config.root.value;
    ParseContext ctx{.sources = sources_, .hf_config_paths = options_.hf_configs, .root = root};
    for (const auto& p : config.hf_config_paths.value) ctx.hf_config_paths.push_back(p);
    ctx.jobs = options_.jobs;
    ctx.state = front_end_state_.get();
    ctx.revalidate_state = revalidate_state_;
    return ctx;
}

std::vector<Diagnostic> merge_config_diagnostics(
    std::vector<std::pair<std::string, std::vector<Diagnostic>>> per_config) {
    std::vector<Diagnostic> out;
    std::vector<std::vector<std::string>> others;  // per merged diagnostic: the other recipes it stands for
    std::map<std::tuple<std::string, std::string, int, int, int, int, std::string>, std::size_t> index;
    std::map<std::pair<std::string, std::string>, std::vector<std::pair<std::string, Diagnostic>>> subjects;
    for (auto& [recipe, diags] : per_config) {
        for (auto& d : diags) {
            if (reported_once_per_subject(d)) {
                subjects[{d.code, d.message}].emplace_back(recipe, std::move(d));
                continue;
            }
            auto key = std::make_tuple(d.code, d.range.file, d.range.line, d.range.column, d.range.end_line,
                                       d.range.end_column, d.message);
            auto [it, inserted] = index.emplace(key, out.size());
            if (inserted) {
                out.push_back(std::move(d));
                others.push_back({recipe});
                continue;
            }
            auto& names = others[it->second];
            if (!recipe.empty() && std::find(names.begin(), names.end(), recipe) == names.end())
                names.push_back(recipe);
        }
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
        // The first recipe is named by the diagnostic's own "in recipe" note.
        std::vector<std::string> names(others[i].begin() + 1, others[i].end());
        if (names.empty()) continue;
        std::string list;
        for (std::size_t k = 0; k < names.size() && k < 5; ++k) list += (k ? ", " : "") + names[k];
        if (names.size() > 5) list += fmt::format(" and {} more", names.size() - 5);
        out[i].notes.push_back(Note{SourceRange{}, fmt::format("the same line also affects {} other recipe{}: {}",
                                                               names.size(), names.size() == 1 ? "" : "s", list)});
    }
    for (auto& [key, members] : subjects) out.push_back(merge_subject_group(std::move(members)));
    sort_diagnostics(out);
    return out;
}

std::string recipe_of(const Diagnostic& d) {
    if (d.notes.empty() || d.notes.front().message.rfind(kInRecipe, 0) != 0) return {};
    return d.notes.front().message.substr(kInRecipe.size());
}

RevisionChoice LintSession::choose_revision(const std::string& path, const ProjectConfig& config) {
    const Schema& schema = Schema::instance();
    RevisionChoice choice;
    std::string name;
    if (!options_.mcore.empty()) {
        choice.source = RevisionChoice::Source::CommandLine;
        name = options_.mcore;
    } else if (config.mcore) {
        choice.source = RevisionChoice::Source::ConfigFile;
        name = config.mcore->value;
    } else if (!options_.mcore_path.empty()) {
        return choice_for_mcore_path(options_.mcore_path, nullptr, {});
    } else if (auto detected = revisions_->detect(path)) {
        return with_facts(*detected);
    } else {
        name = schema.default_revision();
    }
    choice.revision = schema.revision(name);
    if (!choice.revision && choice.source != RevisionChoice::Source::Default)
        if (auto place = schema.locate_commit(name); place && place->nearest) {
            // A Megatron-LM commit with no facts of its own: the nearest revision's stand in, as for a pinned one.
            choice.commit = place->hash;
            choice.approximate = true;
            choice.confirm = place->other;
            choice.revision = place->nearest;
            choice.reason = fmt::format(
                "{} {}: {}", choice.source == RevisionChoice::Source::CommandLine ? "--mcore" : "mcore =", name,
                commit_place_sentence(*place));
            if (!options_.mcore_path.empty())
                return choice_for_mcore_path(options_.mcore_path, choice.revision, choice.reason);
            return with_facts(choice);
        }
    if (!choice.revision) {
        choice.reason =
            schema.revision_error(name, choice.source == RevisionChoice::Source::CommandLine ? "--mcore" : "mcore");
        return choice;
    }
    choice.reason = choice.source == RevisionChoice::Source::CommandLine ? fmt::format("--mcore {}", name)
                    : choice.source == RevisionChoice::Source::ConfigFile
                        ? fmt::format("mcore = \"{}\" ({})", name, config.mcore->source.describe())
                        : fmt::format("nothing pins the revision, so the default {} is assumed; pin it with "
                                      "--mcore REVISION or mcore = \"REVISION\" in .mbridge-lint.toml",
                                      choice.revision->name);
    // A named revision's checks over the config classes of the tree --mcore-path names.
    if (!options_.mcore_path.empty()) return choice_for_mcore_path(options_.mcore_path, choice.revision, choice.reason);
    return choice;
}

DiagnosticIdentity diagnostic_identity(const Diagnostic& d) {
    return {d.code, d.message, d.range.file, d.range.line, d.range.column};
}

LintSession::LintSession(SessionOptions options, SourceManager& sources)
    : options_(std::move(options)),
      sources_(sources),
      resolver_(std::make_shared<ConfigResolver>(options_.config_file)) {}

LintSession::LintSession(SessionOptions options, SourceManager& sources, std::shared_ptr<ConfigResolver> resolver)
    : options_(std::move(options)), sources_(sources), resolver_(std::move(resolver)) {}

FileResult LintSession::lint(const std::string& path, bool allow_skip, const std::string& function) {
    return lint_target(LintTarget{path, allow_skip, function}, options_.jobs);
}

void LintSession::name_documents(const std::vector<LintTarget>& targets) {
    for (const auto& t : targets) {
        auto config = resolver_->for_path(t.path);
        if (!config->ok()) continue;  // the lint says why
        const Revision* revision = choose_revision(t.path, config->config).revision;
        if (!revision) continue;
        ParseContext ctx = parse_context(config->config);
        ctx.revision = revision;
        front_end_or_yaml(t.path).name_document(t.path, ctx);
    }
}

namespace {

// A file's text as SourceManager::load reads it, without keeping it; nullopt when load would refuse it (load then
// says why).
std::optional<std::string> read_unkept(const std::string& path) {
    return read_file_text(path, SourceManager::max_file_bytes(), /*regular_only=*/false).text;
}

}  // namespace

FileResult LintSession::lint_target(const LintTarget& target, int jobs) {
    // A directory walk reads many files that are not configs (at a repository root, most of them): the text of a
    // file it skips is not kept for the rest of the run.
    if (target.allow_skip && !sources_.text(target.path))
        if (std::optional<std::string> text = read_unkept(target.path)) return lint_text(target, jobs, *text, false);
    std::string why;
    const std::string* text = sources_.load(target.path, &why);
    if (!text) {
        FileResult out;
        out.path = target.path;
        out.diagnostics.push_back(unreadable_file(target.path, why));
        return out;
    }
    return lint_text(target, jobs, *text, true);
}

FileResult LintSession::lint_text(const LintTarget& target, int jobs, const std::string& source, bool kept) {
    const std::string& path = target.path;
    const std::string* text = &source;
    // Output quotes the file's lines and fixes edit its text: every outcome but a skip keeps it.
    auto keep = [&] {
        if (kept) return;
        sources_.add_new(path, source);
        text = sources_.text(path);
        kept = true;
    };
    FileResult out;
    out.path = path;
    out.config = resolver_->for_path(path);
    if (!out.config->ok()) {
        keep();
        out.config_unusable = true;
        out.diagnostics = out.config->errors;
        for (const auto& d : out.diagnostics) sources_.load(d.range.file);  // for the excerpt under each message
        return out;
    }
    const ProjectConfig& config = out.config->config;

    // Options: the command line wins over the configuration file, which wins over the revision a Bridge checkout
    // pins, which wins over the default.
    out.revision_choice = choose_revision(path, config);
    out.revision = out.revision_choice.revision;
    if (!out.revision) {
        keep();
        out.diagnostics.push_back(
            input_error(InputError::UnknownValue, SourceRange::whole_file(path), out.revision_choice.reason));
        return out;
    }
    out.rule_options = rule_options(config);

    const FrontEnd& fe = front_end_or_yaml(path);
    ParseContext ctx = parse_context(config);
    ctx.revision = out.revision;
    ctx.function = target.function;
    ctx.jobs = jobs;
    ParseResult parsed = fe.parse(path, *text, target.allow_skip, ctx);
    if (parsed.skipped) {
        out.skipped = true;
        return out;
    }
    keep();
    std::vector<Diagnostic> diags = std::move(parsed.errors);
    const bool usable = diags.empty();
    if (!lint_configs(parsed.configs, out, diags)) return out;
    out.configs = std::move(parsed.configs);
    suppress(diags, path, *text, usable);
    apply_rule_selection(diags, config, path, options_.selection);
    sort_diagnostics(diags);
    out.diagnostics = std::move(diags);
    return out;
}

RuleOptions LintSession::rule_options(const ProjectConfig& config) const {
    RuleOptions options;
    const std::string te =
        options_.te_version.empty() && config.te_version ? config.te_version->value : options_.te_version;
    if (!te.empty()) options.te_version = Version::parse(te);
    if (options_.gpu_memory_bytes) options.gpu_memory_bytes = options_.gpu_memory_bytes;
    else if (config.gpu_memory) options.gpu_memory_bytes = static_cast<double>(config.gpu_memory->value.bytes);
    options.data_parallel_size = options_.data_parallel_size;
    options.gpus = options_.gpus;
    options.reserve_bytes = options_.reserve_bytes;
    return options;
}

bool LintSession::lint_configs(const std::vector<ParsedConfig>& configs, FileResult& out,
                               std::vector<Diagnostic>& diags) {
    const LintOptions lint_options{out.revision, out.rule_options, options_.prepare, options_.show_unknowns};
    std::vector<std::pair<std::string, std::vector<Diagnostic>>> per_config;
    for (const auto& config_tree : configs) {
        if (cancelled_ && cancelled_()) {
            out.cancelled = true;
            return false;
        }
        LintResult r = lint_tree(lint_options, config_tree.root, config_tree.anchor, config_tree.precision.get(),
                                 config_tree.label);
        resolve_fix_edits(r.diagnostics, config_tree.root, sources_);
        std::vector<Diagnostic> found = config_tree.findings;
        for (auto& d : r.diagnostics) found.push_back(std::move(d));
        if (!config_tree.label.empty()) {
            ++out.recipes;
            if (!r.resolved) out.unresolved.emplace_back(config_tree.label, config_tree.anchor);
            out.architecture_known += r.architecture_known ? 1 : 0;
            for (auto& d : found)
                // An override is the same for every recipe; a recipe's own problems say which recipe they are in.
                if (d.range.file.rfind('<', 0) != 0)
                    d.notes.insert(d.notes.begin(),
                                   Note{config_tree.anchor, fmt::format("{}{}", kInRecipe, config_tree.label)});
        }
        per_config.emplace_back(config_tree.label, std::move(found));
    }
    if (configs.size() > 1) {
        std::vector<std::vector<Diagnostic>*> found;
        std::vector<const Value*> roots;
        std::vector<std::string> labels;
        for (std::size_t k = 0; k < configs.size(); ++k) {
            found.push_back(&per_config[k].second);
            roots.push_back(&configs[k].root);
            labels.push_back(configs[k].label);
        }
        withdraw_shared_fixes(std::move(found), roots, labels);
    }
    if (options_.merge_recipes) {
        for (auto& d : merge_config_diagnostics(std::move(per_config))) diags.push_back(std::move(d));
    } else {
        for (auto& [recipe, found] : per_config)
            for (auto& d : found) diags.push_back(std::move(d));
    }
    return true;
}

// Suppression comments of every file a diagnostic points into; only this file's unused ones are reported (a helper's
// suppression may serve recipes that are not linted in this run). `usable`: the file parsed without errors.
void LintSession::suppress(std::vector<Diagnostic>& diags, const std::string& path, const std::string& text,
                           bool usable) {
    std::set<std::string> files{path};
    for (const auto& d : diags)
        if (!d.range.file.empty()) files.insert(d.range.file);
    for (const auto& file : files) {
        const std::string* t = file == path ? &text : sources_.load(file);
        if (!t) continue;
        SuppressionSet set = find_suppressions(file, *t, front_end_or_yaml(file).comments(*t));
        apply_suppressions(diags, set);
        if (file != path) continue;
        for (auto& e : set.errors) diags.push_back(std::move(e));
        if (usable)
            for (auto& d : unused_suppressions(set, *t)) diags.push_back(std::move(d));
    }
}

bool LintSession::excluded(const std::string& path) {
    const auto loaded = resolver_->for_path(path);
    return loaded->ok() && path_excluded(path, loaded->config, options_.selection);
}

Value LintSession::prepared_tree(const ParsedConfig& config, const Revision& revision,
                                 std::vector<Diagnostic>& problems) const {
    Value tree = config.root;
    if (options_.prepare) options_.prepare(tree, revision, problems);
    return tree;
}

EffectiveModel LintSession::effective_model(Value tree, const ParsedConfig& config, const Revision& revision,
                                            std::vector<Diagnostic>& problems) const {
    return model_of_tree(std::move(tree), revision, config.anchor, problems, config.precision.get(), config.label);
}

std::optional<EffectiveModel> LintSession::effective_model(const FileResult& file, std::size_t index) const {
    if (index >= file.configs.size() || !file.revision) return std::nullopt;
    std::vector<Diagnostic> ignored;  // the lint reported them
    const ParsedConfig& config = file.configs[index];
    return effective_model(prepared_tree(config, *file.revision, ignored), config, *file.revision, ignored);
}

std::set<std::string> LintSession::dependencies(const std::string& path) {
    const std::string file = normalized_path(path);
    if (auto it = dependencies_.find(file); it != dependencies_.end()) return it->second;
    std::set<std::string> found;
    if (const std::string* text = sources_.load(path)) {
        ParseContext ctx = parse_context(resolver_->for_path(path)->config);
        for (auto& d : front_end_or_yaml(path).dependencies(path, *text, ctx))
            if (d != file) found.insert(std::move(d));
    }
    return dependencies_[file] = std::move(found);
}

std::set<std::string> LintSession::dependents(const std::string& path) {
    return reverse_dependencies(path, dependents_, &FrontEnd::dependents);
}

std::set<std::string> LintSession::brought_by(const std::string& path) {
    return reverse_dependencies(path, brought_by_, &FrontEnd::brought_by);
}

std::set<std::string> LintSession::reverse_dependencies(
    const std::string& path, std::map<std::string, std::set<std::string>>& memo,
    std::vector<std::string> (FrontEnd::*ask)(const std::string&, ParseContext&) const) {
    const std::string file = normalized_path(path);
    if (auto it = memo.find(file); it != memo.end()) return it->second;
    std::set<std::string> found;
    if (const FrontEnd* fe = front_end_for(path)) {
        ParseContext ctx = parse_context(resolver_->for_path(path)->config);
        for (auto& d : (fe->*ask)(path, ctx))
            if (d != file) found.insert(std::move(d));
    }
    return memo[file] = std::move(found);
}

ImporterFixCheck::ImporterFixCheck(LintSession& session, const std::string& linted_path)
    : session_(session), self_(normalized_path(linted_path)) {}

const std::vector<FileResult>& ImporterFixCheck::linted_importers(const std::string& file) {
    auto [it, first] = importers_.try_emplace(normalized_path(file));
    if (first) {
        std::set<std::string> others = session_.dependents(it->first);
        others.insert(it->first);
        others.erase(self_);
        for (const auto& other_file : others) it->second.push_back(session_.lint(other_file, /*allow_skip=*/true));
    }
    return it->second;
}

// Whether `runner`'s own lint finds the problem `d` with the same fix.
bool ImporterFixCheck::has_same_fix(const Runner& runner, const Diagnostic& d) {
    auto [it, first] = own_diagnostics_.try_emplace(runner);
    if (first) it->second = session_.lint(runner.first, /*allow_skip=*/true, runner.second).diagnostics;
    return std::any_of(it->second.begin(), it->second.end(),
                       [&](const Diagnostic& o) { return o.code == d.code && o.fix && same_edits(*o.fix, *d.fix); });
}

std::optional<std::string> ImporterFixCheck::held_by(const Diagnostic& d, const Value& own) {
    if (!d.fix) return std::nullopt;
    // fix_changes looks at every anchor: each file the anchors lie in is looked at once.
    std::set<std::string> anchor_files;
    for (const auto& at : d.fix->anchors) anchor_files.insert(normalized_path(at.file));
    for (const auto& file : anchor_files)
        for (const auto& other : linted_importers(file))
            for (const auto& config : other.configs) {
                const SourceRange* at = fix_changes(*d.fix, own, config.root);
                if (at && !has_same_fix({other.path, config.label}, d))
                    return fmt::format("the fix at {}:{} was left: recipe {} ({}) runs that line too",
                                       display_path(at->file), at->line, config.label, display_path(other.path));
            }
    return std::nullopt;
}

FixOutcome fix_file(LintSession& session, const std::string& path, const FixOptions& options, bool allow_skip,
                    const std::string& function) {
    FixOutcome out;
    SourceManager& sources = session.sources();
    ImporterFixCheck importers(session, path);
    std::set<std::string> held;
    const std::string self = normalized_path(path);
    // Modules this run changed other than the linted file: the evaluator re-reads a module when its file changes on
    // disk, and these are written only at the end, so a later pass would work out edits on their old text.
    std::set<std::string> changed_elsewhere;
    std::map<std::string, const ParsedConfig*> configs_by_label;  // out.after's, made when first needed after a lint
    auto applicable = [&](const Diagnostic& d) {
        if (!d.fix || d.fix->edits.empty() || (!d.fix->is_safe && !options.unsafe)) return false;
        if (options.may_edit && !std::all_of(d.fix->edits.begin(), d.fix->edits.end(),
                                             [&](const TextEdit& e) { return options.may_edit(e.range.file); }))
            return false;
        for (const auto& e : d.fix->edits)
            if (changed_elsewhere.count(normalized_path(e.range.file))) {
                held.insert(fmt::format("the fixes left in {} wait for another run: it changed in this one",
                                        display_path(e.range.file)));
                return false;
            }
        if (configs_by_label.empty())
            for (const auto& c : out.after.configs) configs_by_label.emplace(c.label, &c);
        const auto own_it = configs_by_label.find(recipe_of(d));
        if (own_it == configs_by_label.end()) return true;
        if (auto why = importers.held_by(d, own_it->second->root)) {
            held.insert(std::move(*why));
            return false;
        }
        return true;
    };
    // One file may be named two ways (as given on the command line, and as the module index found it): its edits
    // are gathered under the first name seen, and a fixed text replaces it under every name (replace_everywhere), or
    // edits worked out on one name's text would be applied to another's.
    std::map<std::string, std::string> first_name;  // normalized path -> the name edits are gathered under
    auto name_of = [&](const std::string& file) -> const std::string& {
        return first_name.try_emplace(normalized_path(file), file).first->second;
    };
    out.after = session.lint(path, allow_skip, function);
    int pass = 0;
    for (; pass < options.max_passes && !out.after.skipped && !out.after.config_unusable; ++pass) {
        // Each fix applies whole or not at all; one that overlaps a fix taken earlier in this pass waits for the next.
        std::map<std::string, std::vector<TextEdit>> by_file;
        int taken = 0;
        for (const auto& d : out.after.diagnostics) {
            if (!applicable(d)) continue;
            std::map<std::string, std::vector<TextEdit>> trial = by_file;
            bool fits = true;
            for (const auto& e : d.fix->edits) trial[name_of(e.range.file)].push_back(e);
            for (const auto& [file, edits] : trial) {
                const std::string* text = sources.text(file);
                if (!text || !apply_edits(*text, edits)) fits = false;
            }
            if (!fits) continue;
            by_file = std::move(trial);
            ++taken;
        }
        if (taken == 0) break;
        // Apply, and make sure every changed file still reads: a fix must never make a file unusable.
        std::map<std::string, std::string> before;
        bool broke = false;
        for (const auto& [file, edits] : by_file) {
            const std::string old = *sources.text(file);
            auto applied = apply_edits(old, edits);
            before[file] = old;
            if (!out.original.count(file)) out.original[file] = old;
            sources.replace_everywhere(file, applied->text);
            const FrontEnd* fe = file.rfind('<', 0) == 0 ? nullptr : &front_end_or_yaml(file);
            ParseContext ctx{.sources = sources};
            if (fe && fe->parse(file, applied->text, false, ctx).errors.size() >
                          fe->parse(file, old, false, ctx).errors.size())
                broke = true;
        }
        if (broke) {
            for (const auto& [file, old] : before) sources.replace_everywhere(file, old);
            out.stopped = "applying them would make a file unreadable";
            break;
        }
        out.applied += taken;
        for (const auto& [file, edits] : by_file)
            if (normalized_path(file) != self) changed_elsewhere.insert(normalized_path(file));
        session.files_changed();
        out.after = session.lint(path, allow_skip, function);
        configs_by_label.clear();
    }
    if (pass == options.max_passes &&
        std::any_of(out.after.diagnostics.begin(), out.after.diagnostics.end(), applicable))
        out.stopped = fmt::format("stopped after {} passes, each making a new fix possible", options.max_passes);
    for (const auto& why : held) out.stopped += (out.stopped.empty() ? "" : "; ") + why;
    for (const auto& [file, old] : out.original) {
        const std::string* now = sources.text(file);
        if (now && *now != old) out.fixed[file] = *now;
    }
    for (auto it = out.original.begin(); it != out.original.end();)
        it = out.fixed.count(it->first) ? std::next(it) : out.original.erase(it);
    return out;
}

}  // namespace mbl
