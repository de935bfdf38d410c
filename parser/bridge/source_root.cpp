#include "parser/bridge/source_root.hpp"

#include <filesystem>

#include "pyeval/module_index.hpp"

namespace mbl::py {

std::string default_root(const std::string& file) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path abs = resolved_path(file, ec);
    fs::path dir = fs::is_directory(abs, ec) ? abs : abs.parent_path();
    for (fs::path d = dir; !d.empty(); d = d.parent_path()) {
        if (fs::is_directory(d / "src" / "megatron" / "bridge", ec)) return d.string();
        if (d == d.parent_path()) break;
    }
    return package_root(file);
}

}  // namespace mbl::py
