#pragma once
// The whole pipeline for one file, as the CLI, --fix and the LSP server run it: find the configuration that governs
// the file, pick the front end by file name, parse, lint every config the file defines, turn fixes into text
// edits, apply suppression comments, then the configuration's rule selection and severity overrides.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "config/project_config.hpp"
#include "config/rule_selection.hpp"
#include "core/diagnostic.hpp"
#include "core/effective_model.hpp"
#include "core/paths.hpp"
#include "core/revision_detection.hpp"
#include "core/source_manager.hpp"
#include "parser/front_end.hpp"
#include "rules/rule.hpp"

namespace mbl {

// Runs on every config tree before it is checked (--config-file and command-line overrides, see
// cli/recipe_options.cpp); must be thread-safe. Problems it finds go to `diagnostics`.
using ConfigPreparer = std::function<void(Value& root, const Revision& revision, std::vector<Diagnostic>& diagnostics)>;

struct SessionOptions {
    std::string mcore{};                       // --mcore: wins over the configuration file
    std::string mcore_path{};                  // --mcore-path: a Megatron Core tree whose config classes are read
    std::string te_version{};                  // --te-version: likewise
    std::string config_file{};                 // --config: this file for every input instead of discovery
    std::optional<double> gpu_memory_bytes{};  // a command-line budget (--gpu-memory): wins over `gpu-memory`
    std::optional<int> data_parallel_size{};   // --data-parallel-size, for the memory advice rules
    std::optional<int> gpus{};                 // --gpus, for the memory advice rules
    std::optional<double> reserve_bytes{};     // --reserve, for the memory advice rules
    // Python recipes: --root and --hf-config win over the configuration file's root and hf-config-paths.
    std::string root{};
    std::vector<std::string> hf_configs{};
    int jobs = 0;                // threads for evaluating the recipes of one file (0: one per core)
    bool show_unknowns = false;  // IN012 infos for model fields a recipe computes in ways the linter cannot follow
    // --config-file trees and command-line overrides, applied to every config tree before it is checked.
    ConfigPreparer prepare{};
    // Identical diagnostics of several recipes are merged into one (merge_config_diagnostics); the upgrade check
    // (--mcore A,B) compares recipe by recipe and turns that off.
    bool merge_recipes = true;
    // --select, --extend-select, --ignore, --exclude, --extend-exclude: a layer over the configuration file's.
    CommandLineSelection selection{};
};

struct FileResult {
    std::string path;
    bool skipped = false;                 // not a config (allow_skip)
    std::vector<Diagnostic> diagnostics;  // final; fixes carry their text edits
    std::shared_ptr<const ConfigLoadResult> config;
    const Revision* revision = nullptr;
    RevisionChoice revision_choice;  // where `revision` came from, and why
    RuleOptions rule_options;
    std::vector<ParsedConfig> configs;  // the trees the front end read, before linting (hover, fixes, show)
    int recipes = 0;                    // configs that came from recipe functions
    std::vector<std::pair<std::string, SourceRange>> unresolved;  // recipes with a recompute field not known
    int architecture_known = 0;    // recipes whose layers, hidden size and heads are known
    bool config_unusable = false;  // the configuration file has errors: nothing was linted
    bool cancelled = false;        // stopped early (a newer edit arrived); the diagnostics are incomplete
};

// One document to lint (see LintSession::lint).
struct LintTarget {
    std::string path;
    bool allow_skip = false;
    std::string function{};
};

class LintSession {
public:
    LintSession(SessionOptions options, SourceManager& sources);
    // Shares discovered configurations with other sessions (the LSP server lints each edit in a fresh session).
    LintSession(SessionOptions options, SourceManager& sources, std::shared_ptr<ConfigResolver> resolver);

    // Lints `path`; its text comes from the SourceManager (an editor buffer when one was added) or from disk.
    // `allow_skip`: files that are plainly not configs are reported as skipped (directory walks, pre-commit).
    // `function`: only that recipe of a Python file (`file.py::function`).
    FileResult lint(const std::string& path, bool allow_skip = false, const std::string& function = {});

    // Lints the targets on up to options().jobs threads, several documents at once (the recipes of each on one
    // thread), and hands each result to `take` on the calling thread in the order of `targets`, as soon as it and
    // those before it are done: what `take` sees is what linting them one after another gives. The results come
    // without FileResult::configs, which for a whole tree would hold every recipe's config at once.
    void lint_all(const std::vector<LintTarget>& targets, const std::function<void(FileResult)>& take);

    // Whether directory walks leave `path` out (exclude / extend-exclude of the configuration that governs it, and
    // the command line's). A configuration with errors excludes nothing: linting the file reports them.
    bool excluded(const std::string& path);

    // One config of a linted file as the lint read it: the front end's tree with the session's --config-file trees
    // and overrides applied at `revision` (what they get wrong goes to `problems`).
    Value prepared_tree(const ParsedConfig& config, const Revision& revision, std::vector<Diagnostic>& problems) const;
    // The effective model of `tree`, a prepared tree of `config`, at `revision` (show, estimate); the problems
    // validation finds go to `problems`.
    EffectiveModel effective_model(Value tree, const ParsedConfig& config, const Revision& revision,
                                   std::vector<Diagnostic>& problems) const;
    // The effective model of one config of a linted file, as the lint saw it (hover); nullopt when there is none.
    std::optional<EffectiveModel> effective_model(const FileResult& file, std::size_t config_index) const;

    // Asked between the configs of a file (a recipe module defines many): true stops the lint early. The LSP server
    // cancels a lint whose document was edited meanwhile.
    void set_cancellation(std::function<bool()> cancelled) { cancelled_ = std::move(cancelled); }

    // Every file `path` is built from besides itself: what its front end reports it imports, at any depth, as
    // absolute normalized paths (see normalized_path).
    std::set<std::string> dependencies(const std::string& path);
    // The reverse: every file built from `path` (a module that recipes import), at any depth; `path` may have been
    // deleted. Absolute normalized paths.
    std::set<std::string> dependents(const std::string& path);
    // The dependents to lint along with `path` when it is named on its own (FrontEnd::brought_by).
    std::set<std::string> brought_by(const std::string& path);

    // Front-end state (parsed modules, import graphs) that outlives this session: the editor server lints each edit
    // in a fresh session but keeps what did not change. The front ends check files for changes before reusing it.
    using FrontEndState = ::mbl::FrontEndState;
    void keep_front_end_state(std::shared_ptr<FrontEndState> state) {
        front_end_state_ = std::move(state);
        revalidate_state_ = true;
    }
    // Files changed during the run (fix_file edited them): the front ends check what they read before reusing it.
    void files_changed() { revalidate_state_ = true; }

    ConfigResolver& configs() { return *resolver_; }
    SourceManager& sources() { return sources_; }
    const SessionOptions& options() const { return options_; }

private:
    FileResult lint_target(const LintTarget& target, int jobs);
    // lint_target once the file's text is read; `kept`: the SourceManager holds it (else it is added unless the
    // file is skipped).
    FileResult lint_text(const LintTarget& target, int jobs, const std::string& text, bool kept);
    RuleOptions rule_options(const ProjectConfig& config) const;  // the command line's over the configuration's
    // Lints each config the front end read; the diagnostics go to `diags` (merged across recipes unless the options
    // say otherwise), the counts to `out`. false when cancelled.
    bool lint_configs(const std::vector<ParsedConfig>& configs, FileResult& out, std::vector<Diagnostic>& diags);
    void suppress(std::vector<Diagnostic>& diags, const std::string& path, const std::string& text, bool usable);
    // FrontEnd::name_document for each target, before they are linted.
    void name_documents(const std::vector<LintTarget>& targets);
    ParseContext parse_context(const ProjectConfig& config);
    RevisionChoice choose_revision(const std::string& path, const ProjectConfig& config);
    std::set<std::string> reverse_dependencies(const std::string& path,
                                               std::map<std::string, std::set<std::string>>& memo,
                                               std::vector<std::string> (FrontEnd::*ask)(const std::string&,
                                                                                         ParseContext&) const);

    SessionOptions options_;
    SourceManager& sources_;
    std::shared_ptr<ConfigResolver> resolver_;
    // The revision a Bridge checkout pins, read once per checkout; shared so that a session can be moved.
    std::shared_ptr<RevisionDetector> revisions_ = std::make_shared<RevisionDetector>();
    std::function<bool()> cancelled_;
    std::map<std::string, std::set<std::string>> dependencies_, dependents_, brought_by_;  // memos, by normalized path
    std::shared_ptr<FrontEndState> front_end_state_ = std::make_shared<FrontEndState>();   // shared between files
    bool revalidate_state_ = false;
};

// Merges diagnostics that are identical across configs (same code, location and message: recipes inheriting one
// helper line) into one whose last note names the other recipes, then sorts. Each element: recipe name (may be
// empty) and its diagnostics.
std::vector<Diagnostic> merge_config_diagnostics(
    std::vector<std::pair<std::string, std::vector<Diagnostic>>> per_config);

// Diagnostics about a subject rather than a place, reported once per subject: IN010, once per unknown model id.
// merge_config_diagnostics keeps the one at the first place and adds a located note ("also in recipe X") for each
// other place; merge_subjects_across_files does the same across files (check) and writes the other places as one note.
bool reported_once_per_subject(const Diagnostic& d);
void merge_subjects_across_files(std::vector<Diagnostic>& diags);

// The same problem reported twice (recipes in two files sharing a helper; one broken configuration governing many
// files) has the same code, message and position.
using DiagnosticIdentity = std::tuple<std::string, std::string, std::string, int, int>;
DiagnosticIdentity diagnostic_identity(const Diagnostic& d);

// The recipe a diagnostic was reported for (its first note, "in recipe NAME"); "" for YAML configs and overrides.
std::string recipe_of(const Diagnostic& d);

// Recipes of other files that run code a fix edits (a base recipe the performance recipes call, perhaps under another
// name; a helper many recipes share): the fix would change their runs as well, unless each of them has that same fix.
// Found by linting the files of the source root that import the file an anchor lies in, at any depth (scripts outside
// the package included: Bridge's scripts/performance recipes call the package's), and that file, once per file, when a
// fix is first asked about there; the configs of the linted file itself by withdraw_shared_fixes. fix_file and the
// editor's quick fixes ask the same question.
class ImporterFixCheck {
public:
    ImporterFixCheck(LintSession& session, const std::string& linted_path);
    // Why `d`'s fix, made for the config `own` of the linted file, must be left ("the fix at F:L was left: recipe R
    // (file) runs that line too"), or nullopt.
    std::optional<std::string> held_by(const Diagnostic& d, const Value& own);

private:
    using Runner = std::pair<std::string, std::string>;  // (file, recipe)
    const std::vector<FileResult>& linted_importers(const std::string& file);
    bool has_same_fix(const Runner& runner, const Diagnostic& d);
    LintSession& session_;
    std::string self_;
    std::map<std::string, std::vector<FileResult>> importers_;
    std::map<Runner, std::vector<Diagnostic>> own_diagnostics_;  // each such recipe linted on its own
};

// --fix / --diff: applies fixes to one file until none is left (at most a few passes, since one fix can make
// another possible or overlap it), re-linting between passes. Nothing is written here: the new texts are returned.
struct FixOptions {
    bool unsafe = false;  // also apply fixes that change what the run does
    int max_passes = 8;
    // Files a fix may edit (null: any). A recipe linted because it imports a named helper may fix the helper only.
    std::function<bool(const std::string& file)> may_edit = {};
};
struct FixOutcome {
    std::map<std::string, std::string> original;  // file -> text before, for every changed file
    std::map<std::string, std::string> fixed;     // file -> text after
    int applied = 0;                              // fixes applied
    FileResult after;                             // the file linted once more, after the fixes
    // Why fixes that could apply were left unapplied ("" when none was): the pass limit, or a fix that would make a
    // file unreadable.
    std::string stopped;
};
FixOutcome fix_file(LintSession& session, const std::string& path, const FixOptions& options, bool allow_skip = false,
                    const std::string& function = {});

}  // namespace mbl
