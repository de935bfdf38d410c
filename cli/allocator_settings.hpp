#pragma once
// The allocator's settings for the batch commands and for the editor server (cli/allocator_settings.cpp).

namespace mbl::cli {

// Makes the allocator give freed memory back to the system again over time, as a long-running process should (the
// batch commands keep it until they exit).
void allocator_for_long_run();

}  // namespace mbl::cli
