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
#include <vector>

#include "config/project_config.hpp"
#include "core/diagnostic.hpp"
#include "core/effective_model.hpp"
#include "core/paths.hpp"
#include "core/source_manager.hpp"
#include "engine/linter.hpp"
#include "parser/front_end.hpp"

namespace mbl {

struct SessionOptions {
    std::string mcore;        // --mcore: wins over the configuration file
    std::string te_version;   // --te-version: likewise
    std::string config_file;  // --config: this file for every input instead of discovery
    std::optional<double> gpu_memory_bytes;  // a command-line budget (--gpu-memory): wins over `gpu-memory`
    std::optional<int> data_parallel_size;   // --data-parallel-size, for the memory advice rules
};

struct FileResult {
    std::string path;
    bool skipped = false;                   // not a config (allow_skip)
    std::vector<Diagnostic> diagnostics;    // final; fixes carry their text edits
    std::shared_ptr<const ConfigLoadResult> config;
    const Revision* revision = nullptr;
    RuleOptions rule_options;
    std::vector<ParsedConfig> configs;      // the trees the front end read, before linting (hover, fixes)
    bool config_unusable = false;           // the configuration file has errors: nothing was linted
    bool cancelled = false;                 // stopped early (a newer edit arrived); the diagnostics are incomplete
};

class LintSession {
public:
    LintSession(SessionOptions options, SourceManager& sources);
    // Shares discovered configurations with other sessions (the LSP server lints each edit in a fresh session).
    LintSession(SessionOptions options, SourceManager& sources, std::shared_ptr<ConfigResolver> resolver);

    // Lints `path`; its text comes from the SourceManager (an editor buffer when one was added) or from disk.
    // `allow_skip`: files that are plainly not configs are reported as skipped (directory walks, pre-commit).
    FileResult lint(const std::string& path, bool allow_skip = false);

    // The effective model of one config of a linted file (for hover).
    std::optional<EffectiveModel> effective_model(const FileResult& file, std::size_t config_index) const;

    // Asked between the configs of a file (a recipe module defines many): true stops the lint early. The LSP server
    // cancels a lint whose document was edited meanwhile.
    void set_cancellation(std::function<bool()> cancelled) { cancelled_ = std::move(cancelled); }

    // Every file `path` is built from besides itself: what its front end reports it imports, and what those import,
    // as absolute normalized paths (see normalized_path).
    std::set<std::string> dependencies(const std::string& path);

    ConfigResolver& configs() { return *resolver_; }
    SourceManager& sources() { return sources_; }
    const SessionOptions& options() const { return options_; }

private:
    SessionOptions options_;
    SourceManager& sources_;
    std::shared_ptr<ConfigResolver> resolver_;
    std::function<bool()> cancelled_;
    std::map<std::string, std::vector<std::string>> direct_dependencies_;  // memo, by normalized path
};

// The same problem reported twice (two recipes sharing a helper; one broken configuration governing many files).
bool is_duplicate(const Diagnostic& a, const Diagnostic& b);

// --fix / --diff: applies fixes to one file until none is left (at most a few passes, since one fix can make
// another possible or overlap it), re-linting between passes. Nothing is written here: the new texts are returned.
struct FixOptions {
    bool unsafe = false;  // also apply fixes that change what the run does
    int max_passes = 8;
};
struct FixOutcome {
    std::map<std::string, std::string> original;  // file -> text before, for every changed file
    std::map<std::string, std::string> fixed;     // file -> text after
    int applied = 0;                              // fixes applied
    FileResult after;                             // the file linted once more, after the fixes
};
FixOutcome fix_file(LintSession& session, const std::string& path, const FixOptions& options, bool allow_skip = false);

}  // namespace mbl
