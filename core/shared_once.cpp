#include "core/shared_once.hpp"

namespace mbl {

void SharedOnce::mark_ready() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ready_.store(true, std::memory_order_release);
    }
    finished_.notify_all();
}

void SharedOnce::run(const std::function<std::size_t()>& plan, const std::function<void(std::size_t)>& work,
                     const std::function<void()>& finish) {
    if (ready_.load(std::memory_order_acquire)) return;
    std::call_once(planned_, [&] {
        count_ = plan();
        if (count_ == 0) {
            finish();
            mark_ready();
        }
    });
    for (std::size_t i; (i = next_.fetch_add(1)) < count_;) {
        work(i);
        if (done_.fetch_add(1) + 1 == count_) {
            finish();
            mark_ready();
        }
    }
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return ready_.load(std::memory_order_acquire); });
}

}  // namespace mbl
