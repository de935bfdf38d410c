#include "core/file_text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace mbl {

namespace {

struct Descriptor {
    int fd;
    ~Descriptor() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

FileText read_file_text(const std::string& path, std::uintmax_t max_bytes, bool regular_only) {
    FileText out;
    // O_NONBLOCK: opening a FIFO would wait for a writer; a regular file's reads ignore the flag.
    Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | (regular_only ? O_NONBLOCK : 0))};
    if (file.fd < 0) {
        out.failure = FileText::Failure::CannotOpen;
        out.error_number = errno;
        return out;
    }
    struct stat st {};
    if (::fstat(file.fd, &st) != 0) {
        out.failure = FileText::Failure::ReadError;
        out.error_number = errno;
        return out;
    }
    if (S_ISDIR(st.st_mode)) {
        out.failure = FileText::Failure::Directory;
        out.error_number = EISDIR;
        return out;
    }
    if (regular_only && !S_ISREG(st.st_mode)) {
        out.failure = FileText::Failure::NotRegular;
        return out;
    }
    out.size = static_cast<std::uintmax_t>(st.st_size);
    if (out.size > max_bytes) {
        out.failure = FileText::Failure::TooLarge;
        return out;
    }
    // The size is a hint (a pipe or a file being written may hold more or less): read until the end, or past the
    // limit. One byte more than the size lets the read that finds the end land without growing the string.
    std::string text(static_cast<std::size_t>(S_ISREG(st.st_mode) ? out.size + 1 : 0), '\0');
    std::size_t used = 0;
    for (;;) {
        if (used == text.size()) {
            if (text.size() > max_bytes) {
                out.failure = FileText::Failure::TooLarge;
                out.size = text.size();
                return out;
            }
            text.resize(text.size() + 65536);
        }
        const ssize_t n = ::read(file.fd, text.data() + used, text.size() - used);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            out.failure = FileText::Failure::ReadError;
            out.error_number = errno;
            return out;
        }
        if (n == 0) break;
        used += static_cast<std::size_t>(n);
    }
    text.resize(used);
    if (used > max_bytes) {
        out.failure = FileText::Failure::TooLarge;
        out.size = used;
        return out;
    }
    out.text = std::move(text);
    return out;
}

}  // namespace mbl
