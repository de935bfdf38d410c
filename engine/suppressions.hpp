#pragma once
// Suppression comments, the same in YAML configs and Python recipes:
//   value: x  # mbridge-lint: disable=RC104,RC105     this line
//   # mbridge-lint: disable=RC104                    on a line of its own: the next line holding code
//   # mbridge-lint: disable-next-line=RC104          the next line holding code
//   # mbridge-lint: disable-file=RC104               the whole file
//   value: x  # noqa: RC104, RC105                    this line (ruff's and flake8's spelling)
// Codes are rule codes or rule names, separated by commas; text after them must start with "--" (a reason) or "#".
// `noqa` takes rule codes only; other linters' codes beside ours (`# noqa: E501, RC104`) are theirs and left alone,
// and a bare `# noqa` names nothing of ours.
// A code that suppressed nothing is reported as RC900 unused-suppression (info), with a fix that removes it.
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"
#include "parser/front_end.hpp"

namespace mbl {

struct Suppression {
    enum class Scope { Line, File };
    struct Code {
        std::string code;       // as written
        SourceRange where;      // the code in the comment
        std::size_t begin = 0;  // byte offsets of the code in the file
        std::size_t end = 0;
        bool used = false;
    };
    Scope scope = Scope::Line;
    int line = 0;  // the line it applies to (Scope::Line)
    std::vector<Code> codes;
    SourceComment comment;
    std::size_t comment_begin = 0, comment_end = 0;  // the whole `# ...` comment, byte offsets
    bool ours_alone = true;  // the comment holds nothing but this directive, so RC900 may delete all of it
};

struct SuppressionSet {
    std::string file;
    std::vector<Suppression> suppressions;
    std::vector<Diagnostic> errors;  // malformed directives, unknown codes: IN011
};

SuppressionSet find_suppressions(const std::string& file, std::string_view text,
                                 const std::vector<SourceComment>& comments);

// Removes the diagnostics in set.file that a suppression covers, and marks those suppressions used.
void apply_suppressions(std::vector<Diagnostic>& diags, SuppressionSet& set);

// RC900 for every code that suppressed nothing; each with a safe fix that deletes it (or the whole comment).
std::vector<Diagnostic> unused_suppressions(const SuppressionSet& set, std::string_view text);

inline constexpr std::string_view kUnusedSuppressionCode = "RC900";

}  // namespace mbl
