#pragma once
// A whole file's bytes, as every reader of the linter takes them (configs, recipes, imported modules, git's files):
// one open, one fstat, reads straight into the string, and a size limit checked before anything is read.
#include <cstdint>
#include <optional>
#include <string>

namespace mbl {

struct FileText {
    enum class Failure { None, CannotOpen, Directory, NotRegular, TooLarge, ReadError };
    std::optional<std::string> text;  // set when failure is None
    Failure failure = Failure::None;
    int error_number = 0;     // errno of a failed open or read
    std::uintmax_t size = 0;  // the file's size, when it could be asked
};

// Reads `path` whole unless it is larger than `max_bytes` (a file that grows while read stops at the limit too).
// With `regular_only`, anything but a regular file (a FIFO, a device) is refused without waiting on it; otherwise a
// pipe named on the command line is read to its end.
FileText read_file_text(const std::string& path, std::uintmax_t max_bytes, bool regular_only = true);

}  // namespace mbl
