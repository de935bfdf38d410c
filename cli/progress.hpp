#pragma once
// Progress of a long run on a terminal: after a second, a line on standard error that says how far the run is
// ("checking 120/741: src/.../llama3.py"), rewritten in place and erased at the end. Nothing when standard error is
// not a terminal (CI logs, pipes), so output that tools read never holds it.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace mbl::cli {

class Progress {
public:
    // `enabled`: the caller allows it (not --quiet); it shows only when standard error is a terminal.
    Progress(bool enabled, std::size_t total);
    ~Progress();
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    // The run starts on item `index` (0-based), named `what`.
    void at(std::size_t index, const std::string& what);

private:
    void run();

    std::size_t total_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::size_t index_ = 0;
    std::string what_;
    bool done_ = false;
    bool shown_ = false;
    std::thread thread_;
};

}  // namespace mbl::cli
