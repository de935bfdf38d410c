#pragma once
// What the engine, the LSP server and --fix need from a source language. A front end turns a file's text into
// config trees (with provenance), lists its comments (suppressions live there), turns a FieldEdit into text edits
// that keep the rest of the file as written, and names the files a document depends on (imports).
// YAML implements it in parser/yaml_front_end.cpp; Python recipes plug in the same way.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/effective_model.hpp"
#include "core/line_index.hpp"
#include "core/schema.hpp"
#include "core/source_manager.hpp"
#include "core/value.hpp"

namespace mbl {

// A `#` comment. Lines and columns are 1-based; `column` is the byte column of the `#`.
struct SourceComment {
    int line = 0;
    int column = 0;
    std::string text;       // after the `#`, without the line ending
    bool own_line = false;  // nothing but whitespace before it on its line
};

// The comment whose `#` is at byte `hash` of `text` and which ends at byte `end` (its line ending).
SourceComment comment_at(std::string_view text, const LineIndex& lines, std::size_t hash, std::size_t end);

// One config a document defines: a YAML file defines one; a Python recipe module one per recipe function.
struct ParsedConfig {
    std::string label;   // "" for a YAML file; the recipe function ("pretrain_config") for Python
    Value root;          // sections model, mixed_precision, comm_overlap, ...
    SourceRange anchor;  // where facts without a line of their own point (the `model:` key, the function name)
    std::vector<Diagnostic> findings;  // the front end's own findings about this config (unknown architecture, ...)
    // The linted tree's lookup of mixed_precision names (core/effective_model.hpp), for the name in the config or
    // one that an overlay or override puts there; null when the file is in no Python source root.
    std::shared_ptr<const PrecisionLookup> precision;
};

struct ParseResult {
    std::vector<ParsedConfig> configs;
    std::vector<Diagnostic> errors;  // IN0xx: the document (or part of it) cannot be used
    bool skipped = false;            // not a config at all; only when the caller allowed skipping
};

// State front ends keep between the documents of one run (parsed modules), one slot per language. Documents may be
// parsed on several threads at once: taking a slot is thread-safe, and what a front end keeps there must be too.
class FrontEndState {
public:
    // The slot of `language`, made (a T) the first time.
    template <class T>
    std::shared_ptr<T> slot(const std::string& language) {
        std::lock_guard<std::mutex> lock(mutex_);
        std::shared_ptr<void>& s = slots_[language];
        if (!s) s = std::make_shared<T>();
        return std::static_pointer_cast<T>(s);
    }

private:
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<void>> slots_;
};

struct ParseContext {
    // Texts of other files (imported modules), and where a front end registers the texts it read so that output
    // can quote them.
    SourceManager& sources;
    // Hugging Face config.json files or directories (--hf-config, then the configuration file's hf-config-paths).
    std::vector<std::string> hf_config_paths{};
    // Source root where Python imports resolve from (--root, then the configuration file). Empty: found per file.
    std::string root{};
    // The Megatron Core revision whose defaults fill fields nobody set (null: the default revision).
    const Revision* revision = nullptr;
    // Only this recipe function of the file (`file.py::function`); empty: every recipe.
    std::string function{};
    // Worker threads a front end may use for one document (0: one per core).
    int jobs = 0;
    // State front ends keep between the documents of one run; owned by the caller. Null: nothing is shared.
    FrontEndState* state = nullptr;
    // Files may have changed since the state was built (the editor server keeps it for its session; --fix edits
    // files as it goes): the front end checks the files it read before reusing what it made of them.
    bool revalidate_state = false;
};

// Where a FieldEdit lands, worked out by the engine from the config tree (see engine/fixes.hpp).
struct EditSite {
    std::string field;             // the field's own name: "recompute_method"
    const Value* value = nullptr;  // its current value, when the file sets it; null when the edit must insert it
    // value != null: the range of the entry that set the value (its provenance).
    // value == null: a sibling entry (the diagnostic's own line); the new entry goes right after it.
    SourceRange entry;
    int siblings = 0;  // entries in the mapping (or call) that holds the field
};

class FrontEnd {
public:
    virtual ~FrontEnd() = default;
    virtual std::string_view language() const = 0;  // "yaml", "python"
    // By file name (extension); the registry asks each front end in turn.
    virtual bool handles(std::string_view path) const = 0;
    // `allow_skip`: a file that is plainly not a config (unrelated YAML, a Python module without recipes) is
    // reported as skipped instead of being linted (directory walks, pre-commit).
    virtual ParseResult parse(const std::string& name, std::string_view text, bool allow_skip,
                              ParseContext& ctx) const = 0;
    // Called for each document of a run, on one thread, before the documents are parsed on several threads at once: a
    // front end whose state names what it reads (a module another document imports) names the documents here, as
    // the caller writes them, so that the name does not depend on which thread reads a file first.
    virtual void name_document(const std::string& /*name*/, ParseContext& /*ctx*/) const {}
    virtual std::vector<SourceComment> comments(std::string_view text) const = 0;
    // The text edits for one FieldEdit on `text` (the file holding site.entry). Empty when the edit cannot be made
    // without guessing at the layout; the fix is then offered without edits (shown, never applied).
    // `lines` indexes `text` (built once per file, not per edit: a file may hold thousands of fixable findings).
    virtual std::vector<TextEdit> field_edit(const FieldEdit& edit, const EditSite& site, std::string_view text,
                                             const LineIndex& lines) const = 0;
    // Files whose contents this document's configs are built from, besides itself, at any depth (the imports of its
    // imports), as absolute normalized paths (core/paths.hpp).
    virtual std::vector<std::string> dependencies(const std::string& /*path*/, std::string_view /*text*/,
                                                  ParseContext& /*ctx*/) const {
        return {};
    }
    // The reverse: files whose configs are built from `path` (which need not exist any more), at any depth, among
    // the files the front end finds from it (Python: the modules of its source root); absolute normalized paths.
    virtual std::vector<std::string> dependents(const std::string& /*path*/, ParseContext& /*ctx*/) const { return {}; }
    // The dependents to lint along with `path` when it is named on its own (a helper staged for a commit): those
    // that are part of the same project as it (Python: the modules of its top-level package, tests left out).
    virtual std::vector<std::string> brought_by(const std::string& path, ParseContext& ctx) const {
        return dependents(path, ctx);
    }
};

// What to delete to remove the element [begin, end) of a comma-separated list (flow mapping entry, keyword argument,
// code in a suppression comment): the element, the comma after it and the blanks after that comma; for the last
// element, the comma before it instead.
std::pair<std::size_t, std::size_t> list_element_removal(std::string_view text, std::size_t begin, std::size_t end);

// The mixed_precision lookup of the Python source root the config file `file` belongs to (the one --root or the
// configuration names, else the root found from the file), reading names as the ConfigContainer class of `root`
// (a dump's `_target_`; otherwise Bridge's megatron.bridge.training.config.ConfigContainer) resolves them. The tree is
// read only when a name is looked up (now, for the name `root` holds); a root that defines no lookup answers "does
// not apply", and the bundled catalog decides. (parser/python_front_end.cpp)
std::shared_ptr<const PrecisionLookup> tree_precision_lookup(const std::string& file, const Value& root,
                                                             ParseContext& ctx);

// The front end for a file, by name; nullptr when no language claims it.
const FrontEnd* front_end_for(std::string_view path);
// The front end the linter reads a file with: a file no language claims is read as YAML, so `check notes.txt` still
// says why it fails.
const FrontEnd& front_end_or_yaml(std::string_view path);
// Every registered front end (YAML, Python, and any a test registered).
const std::vector<std::unique_ptr<FrontEnd>>& front_ends();
// Adds a front end ahead of the built-in ones (tests; a language added at start-up).
void register_front_end(std::unique_ptr<FrontEnd> front_end);

}  // namespace mbl
