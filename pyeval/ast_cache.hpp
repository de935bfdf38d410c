#pragma once
// Syntax trees kept on disk between runs, by the content of the module they were parsed from. Parsing imported
// modules is most of the time a first lint takes (an editor's server starting, a pre-commit run); a tree read back is
// checked against the text it is for, byte for byte, and against the linter build that wrote it, so a stale or
// damaged entry is parsed again, never used.
//
// Off until the program names a folder (set_ast_cache_dir); the trees go to a subfolder per tree format. Deleting the
// folder is always safe.
#include <optional>
#include <string>

#include "pyeval/ast.hpp"

namespace mbl::py {

// The folder this build's trees go to: a subfolder of the one named last ("" when the cache is off).
std::string ast_cache_dir();
// Keeps trees under `dir` from now on ("" turns the cache off).
void set_ast_cache_dir(const std::string& dir);

// The tree kept for `parsed` (the text tree-sitter read), if there is a sound one.
std::optional<Ast> load_cached_ast(const std::string& parsed);
// Keeps `ast` (the tree of `parsed`); a failure to write only means it is parsed again next time.
void store_cached_ast(const std::string& parsed, const Ast& ast);

}  // namespace mbl::py
