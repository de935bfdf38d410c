// LintSession::lint_all: the documents of a run on several threads at once. A whole tree is hundreds of recipe files
// of a few recipes each, so threads inside one document (the recipes of a file) leave cores idle while a file is
// parsed and its configs are checked; threads across documents keep them busy. What the threads share is
// thread-safe: the SourceManager, the configuration and revision caches, and the front ends' state (parsed and
// initialized Python modules).
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include "engine/lint_session.hpp"

namespace mbl {
namespace {

// The order to start the targets in: largest file first, so that no large file is left to run alone at the end.
std::vector<std::size_t> largest_first(const std::vector<LintTarget>& targets) {
    std::vector<std::uintmax_t> size(targets.size(), 0);
    for (std::size_t i = 0; i < targets.size(); ++i) {
        std::error_code ec;
        const auto bytes = std::filesystem::file_size(targets[i].path, ec);
        if (!ec) size[i] = bytes;
    }
    std::vector<std::size_t> order(targets.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return size[a] > size[b]; });
    return order;
}

// Results that finish in any order, handed on in target order.
class InOrder {
public:
    explicit InOrder(std::size_t count) : results_(count) {}

    void put(std::size_t index, FileResult result) {
        std::lock_guard<std::mutex> lock(mutex_);
        results_[index] = std::move(result);
        ready_.notify_one();
    }
    void fail(std::size_t index, std::exception_ptr error) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_ || index < failed_at_) error_ = error, failed_at_ = index;  // the first in order is rethrown
        ready_.notify_one();
    }

    // Hands on every result that is next in order; with `wait`, until all are handed on. Rethrows a failure when
    // its turn comes.
    void hand_on(const std::function<void(FileResult)>& take, bool wait) {
        std::unique_lock<std::mutex> lock(mutex_);
        while (next_ < results_.size()) {
            if (!results_[next_]) {
                if (error_ && failed_at_ == next_) std::rethrow_exception(error_);
                if (!wait) return;
                ready_.wait(lock);
                continue;
            }
            FileResult r = std::move(*results_[next_]);
            results_[next_++].reset();
            lock.unlock();
            take(std::move(r));
            lock.lock();
        }
    }

private:
    std::mutex mutex_;
    std::condition_variable ready_;
    std::vector<std::optional<FileResult>> results_;
    std::size_t next_ = 0;
    std::exception_ptr error_;
    std::size_t failed_at_ = 0;
};

}  // namespace

void LintSession::lint_all(const std::vector<LintTarget>& targets, const std::function<void(FileResult)>& take) {
    std::size_t threads =
        options_.jobs > 0 ? static_cast<std::size_t>(options_.jobs) : std::thread::hardware_concurrency();
    threads = std::min(std::max<std::size_t>(threads, 1), targets.size());
    // Named first, one thread or many, so that a file's name never depends on which thread read it first.
    name_documents(targets);
    if (threads <= 1) {
        for (const auto& t : targets) {
            FileResult r = lint_target(t, options_.jobs);
            r.configs.clear();
            take(std::move(r));
        }
        return;
    }
    const std::vector<std::size_t> order = largest_first(targets);
    std::atomic<std::size_t> next{0};
    InOrder results(targets.size());
    // One document per thread at a time; its recipes on that thread (jobs 1), since the other threads are busy too.
    auto work = [&](bool hands_on) {
        for (std::size_t k; (k = next.fetch_add(1)) < order.size();) {
            const std::size_t i = order[k];
            try {
                FileResult r = lint_target(targets[i], 1);
                r.configs.clear();
                results.put(i, std::move(r));
            } catch (...) {
                results.fail(i, std::current_exception());
            }
            if (hands_on) results.hand_on(take, false);
        }
    };
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, false);
    try {
        work(true);
        results.hand_on(take, true);
    } catch (...) {
        next = order.size();  // the others stop after their current document
        for (auto& t : pool) t.join();
        throw;
    }
    for (auto& t : pool) t.join();
}

}  // namespace mbl
