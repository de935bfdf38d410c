// jemalloc's settings for the mbridge-lint binary, compiled in only where jemalloc is its allocator
// (MBRIDGE_LINT_JEMALLOC). jemalloc reads this symbol when it starts; MALLOC_CONF in the environment still overrides
// it (MALLOC_CONF=thp:never turns the huge pages off again).
//
// Transparent huge pages for jemalloc's memory: a whole-tree check allocates 180 MB, and with 4 KiB pages each first
// touch is a page fault. On Megatron Bridge 067f987's tree (`check -j 1 .`, the 2-core VM of docs/benchmarks.md)
// that was 44,000 faults and about 8 % of the CPU time (perf record -e cpu-clock: exc_page_fault); with huge pages
// 3,200 faults, peak memory 190 MB. Where the system's transparent huge pages are off ("never"), nothing changes.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:auto";
}
