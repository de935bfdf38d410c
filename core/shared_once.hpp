#pragma once
// Work done once before anyone goes on, shared by the threads that arrive while it is under way: instead of one
// thread doing it all while the others wait (std::call_once), each arriving thread takes items until none is left,
// and all go on once the last item is done.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>

namespace mbl {

class SharedOnce {
public:
    // The first caller runs `plan`, which says how many items there are (and may prepare them); every caller then does
    // `work(i)` for items nobody has taken; `finish` runs once, after the last item, before any caller returns.
    // Later callers return at once. `work` and `finish` must not throw.
    void run(const std::function<std::size_t()>& plan, const std::function<void(std::size_t)>& work,
             const std::function<void()>& finish);

private:
    void mark_ready();

    std::once_flag planned_;
    std::size_t count_ = 0;  // written by the plan, read after call_once
    std::atomic<std::size_t> next_{0};
    std::atomic<std::size_t> done_{0};
    std::atomic<bool> ready_{false};
    std::mutex mutex_;
    std::condition_variable finished_;
};

}  // namespace mbl
