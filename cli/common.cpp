#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "core/schema.hpp"

namespace mbl::cli {

const Revision* resolve_revision(const std::string& name) {
    const Schema& schema = Schema::instance();
    const std::string wanted = name.empty() ? schema.default_revision() : name;
    if (const Revision* r = schema.revision(wanted)) return r;
    std::cerr << "mbridge-lint: " << schema.revision_error(wanted, "--mcore") << '\n';
    return nullptr;
}

std::ostream* report_stream(const std::string& path, std::ofstream& file) {
    if (path.empty()) return &std::cout;
    file.open(path, std::ios::binary | std::ios::trunc);
    if (file) return &file;
    std::cerr << fmt::format("mbridge-lint: cannot write {}\n", path);
    return nullptr;
}

bool finish_report(const std::string& path, std::ofstream& file) {
    if (path.empty()) return true;  // standard output: main checks it once the command is done
    file.close();
    if (!file) {
        std::cerr << fmt::format("mbridge-lint: cannot write {}: {}\n", path, std::strerror(errno));
        return false;
    }
    return true;
}

bool use_color(const std::string& mode) {
    if (mode == "always") return true;
    if (mode == "never") return false;
    // no-color.org and force-color.org: set and not empty; NO_COLOR wins when both are, as the safer reading.
    auto set = [](const char* name) {
        const char* v = std::getenv(name);
        return v && *v;
    };
    if (set("NO_COLOR")) return false;
    if (set("FORCE_COLOR")) return true;
    return isatty(STDOUT_FILENO) != 0;
}

}  // namespace mbl::cli
