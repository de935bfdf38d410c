// jemalloc's settings for the mbridge-lint binary (MBRIDGE_LINT_JEMALLOC; without it, nothing here does anything).
// jemalloc reads `malloc_conf` when it starts; MALLOC_CONF in the environment still overrides it.
//
// A lint is a short batch run whose memory grows to its peak (190 MB on a whole tree) and is all returned at exit.
// jemalloc's default gives freed pages back to the system ten seconds after they are freed, a little at a time
// (`dirty_decay_ms` 10000), and every page given back is zeroed again by the kernel when it is reused; so a batch run
// keeps them (-1), and takes them as transparent huge pages (fewer faults, each zeroing 2 MiB). On Megatron Bridge
// 067f987's tree (`check -j 1 .`, the 2-core VM of docs/benchmarks.md, 7 interleaved runs each, user + system time,
// best): 2.55 s, against 2.96 s with huge pages alone and 3.07 s with jemalloc's defaults; system time 0.34 s
// against 0.54 s. The editor server, which lives for hours, gives memory back again (allocator_for_long_run).
#include "cli/allocator_settings.hpp"

#include <sys/types.h>
#include <cstddef>

#if defined(MBRIDGE_LINT_JEMALLOC)
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:auto,dirty_decay_ms:-1";
int mallctl(const char* name, void* oldp, std::size_t* oldlenp, void* newp, std::size_t newlen);
}
#endif

namespace mbl::cli {

void allocator_for_long_run() {
#if defined(MBRIDGE_LINT_JEMALLOC)
    ssize_t decay_ms = 10000;  // jemalloc 5.3's own default (opt.dirty_decay_ms)
    // Arenas made from now on, and every arena already made (MALLCTL_ARENAS_ALL is 4096).
    (void)mallctl("arenas.dirty_decay_ms", nullptr, nullptr, &decay_ms, sizeof decay_ms);
    (void)mallctl("arena.4096.dirty_decay_ms", nullptr, nullptr, &decay_ms, sizeof decay_ms);
#endif
}

}  // namespace mbl::cli
