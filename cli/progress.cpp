#include "cli/progress.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace mbl::cli {

namespace {

// How long a run goes before it shows progress: a second, so quick runs print nothing.
// MBRIDGE_LINT_PROGRESS_DELAY_MS changes it (the tests show progress on short runs with 0).
std::chrono::milliseconds progress_delay() {
    if (const char* ms = std::getenv("MBRIDGE_LINT_PROGRESS_DELAY_MS")) return std::chrono::milliseconds(std::atoi(ms));
    return std::chrono::milliseconds(1000);
}

std::size_t terminal_width() {
    winsize w{};
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 10) return w.ws_col;
    return 80;
}

}  // namespace

Progress::Progress(bool enabled, std::size_t total) : total_(total) {
    if (enabled && isatty(STDERR_FILENO)) thread_ = std::thread([this] { run(); });
}

Progress::~Progress() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard lock(mutex_);
        done_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void Progress::at(std::size_t index, const std::string& what) {
    if (!thread_.joinable()) return;
    std::lock_guard lock(mutex_);
    index_ = index;
    what_ = what;
}

void Progress::run() {
    std::unique_lock lock(mutex_);
    if (wake_.wait_for(lock, progress_delay(), [this] { return done_; })) return;
    const std::size_t width = terminal_width();
    do {
        std::string line = fmt::format("checking {}/{}: {}", index_ + 1, total_, what_);
        if (line.size() >= width) line = line.substr(0, width - 4) + "...";
        std::fprintf(stderr, "\r\x1b[K%s", line.c_str());  // carriage return, erase the line, write
        std::fflush(stderr);
        shown_ = true;
    } while (!wake_.wait_for(lock, std::chrono::milliseconds(100), [this] { return done_; }));
    if (shown_) std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
}

}  // namespace mbl::cli
