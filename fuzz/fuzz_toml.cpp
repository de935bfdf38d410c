// Fuzz target: the configuration file reader (.mbridge-lint.toml and pyproject.toml's [tool.mbridge-lint]).
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/project_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    (void)mbl::load_config_file("/nonexistent/fuzz/.mbridge-lint.toml", &text);
    (void)mbl::load_config_file("/nonexistent/fuzz/pyproject.toml", &text);
    (void)mbl::parse_memory_size(text);
    return 0;
}
