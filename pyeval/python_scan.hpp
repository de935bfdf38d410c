#pragma once
// One pass over Python source before tree-sitter parses it. It bounds what tree-sitter is asked to do: tree-sitter's
// time and memory grow with the tokens of a file (about 200 bytes each), and bracket nesting deeper than Python's own
// limit is refused as Python refuses it. It also blanks comments in a copy for tree-sitter: tree-sitter-python's
// scanner re-reads every following comment line at each one inside a block (quadratic: 8,000 comment lines in a
// function took 4 s), and tree-sitter 0.20 crashes on more than 65,535 comment lines in a row at the top level.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mbl::py {

// CPython's tokenizer refuses deeper bracket nesting ("too many nested parentheses", MAXLEVEL) and f-strings nested
// deeper ("f-string: expressions nested too deeply", 3.12's MAXFSTRINGLEVEL).
inline constexpr int kPythonMaxBrackets = 200;
inline constexpr int kPythonMaxFstringNesting = 150;
// CPython's tokenizer holds at most MAXINDENT (100) indentation levels, the module's own included, so a statement 100
// levels in is "too many levels of indentation" (IndentationError; 99 compile, measured with CPython 3.11).
inline constexpr int kPythonMaxIndentLevels = 99;
// Lines in a row that hold only a line continuation (a backslash): Python reads any number, but tree-sitter-python's
// scanner re-reads the rest of such a run at each one (4,000 took 0.5 s) and tree-sitter 0.20 crashes past 65,535.
// Unlike comments they cannot be blanked (the backslash joins lines), so a longer run is refused.
inline constexpr int kPythonMaxBareContinuations = 1000;

struct PythonScan {
    enum class Problem {
        None,
        TooManyTokens,
        TooManyBrackets,
        FstringTooNested,
        TooManyBareContinuations,
        TooManyIndentLevels
    };
    Problem problem = Problem::None;
    std::size_t at = 0;        // byte offset of the token, bracket or f-string where the problem is
    std::uint64_t tokens = 0;  // names, numbers, strings (one each), operators and brackets; comments are not counted
    bool has_comments = false;
};

// Whether `word` is a Python string prefix (r, b, u, f, t and their two-letter mixes, any case); `formatted` is set for
// f- and t-strings (t-strings, 3.14, nest as f-strings do).
bool python_string_prefix(std::string_view word, bool& formatted);

// Scans `text`, stopping at the first problem. With `blanked` given and a comment found, `*blanked` is `text` with
// every comment outside f-strings replaced by spaces (byte offsets, and so every location, unchanged).
PythonScan scan_python(std::string_view text, std::uint64_t max_tokens, std::string* blanked);

}  // namespace mbl::py
