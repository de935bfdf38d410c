#pragma once
#include <string>

namespace mbl {

// A span in a source file. Lines and columns are 1-based; columns count bytes; end_column is exclusive.
// line == 0 means "no location" (a default value, or a fact about the whole file).
struct SourceRange {
    std::string file;
    int line = 0;
    int column = 0;
    int end_line = 0;
    int end_column = 0;

    bool valid() const { return line > 0; }
    static SourceRange point(std::string file, int line, int column) {
        return {std::move(file), line, column, line, column + 1};
    }
    static SourceRange whole_file(std::string file) { return {std::move(file), 0, 0, 0, 0}; }
};

}  // namespace mbl
