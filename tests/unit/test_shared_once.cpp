// core/shared_once: every item done once, by whichever threads arrive; `finish` once, before any caller returns.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "core/shared_once.hpp"

TEST_CASE("threads that arrive share the items, and all return after finish", "[shared_once]") {
    mbl::SharedOnce once;
    constexpr std::size_t kItems = 2000;
    std::vector<std::atomic<int>> done(kItems);
    std::atomic<int> plans{0}, finishes{0};
    std::atomic<std::size_t> seen_after_finish{0};
    auto call = [&] {
        once.run([&] { return ++plans, kItems; }, [&](std::size_t i) { ++done[i]; }, [&] { ++finishes; });
        // Returned only once every item is done and finish has run.
        if (finishes == 1) ++seen_after_finish;
        for (const auto& d : done) CHECK(d.load() == 1);
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back(call);
    for (auto& t : threads) t.join();
    call();  // a late caller returns at once
    CHECK(plans == 1);
    CHECK(finishes == 1);
    CHECK(seen_after_finish == 5);
}

TEST_CASE("no items: finish still runs once", "[shared_once]") {
    mbl::SharedOnce once;
    int finishes = 0, works = 0;
    for (int i = 0; i < 3; ++i)
        once.run([] { return std::size_t{0}; }, [&](std::size_t) { ++works; }, [&] { ++finishes; });
    CHECK(finishes == 1);
    CHECK(works == 0);
}
