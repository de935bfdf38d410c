// Main of the GPU test binaries: without a usable GPU it prints why and exits 77, which ctest reports as skipped
// (SKIP_RETURN_CODE); listing tests works anywhere.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstring>
#include <iostream>

#include "tools/gpu_harness/harness.hpp"

int main(int argc, char** argv) {
    bool listing = false;
    for (int i = 1; i < argc; ++i) listing |= std::strncmp(argv[i], "--list", 6) == 0;
    if (!listing) {
        const auto info = mbl::gpu::cuda_device_info();
        if (!info.usable()) {
            std::cout << "SKIPPED: these tests need a GPU: " << info.error << "\n";
            return 77;
        }
        std::cout << "GPU: " << info.name << "\n";
    }
    return Catch::Session().run(argc, argv);
}
