#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
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

bool use_color(const std::string& mode) {
    if (mode == "always") return true;
    if (mode == "never") return false;
    if (std::getenv("NO_COLOR")) return false;
    return isatty(STDOUT_FILENO) != 0;
}

}  // namespace mbl::cli
