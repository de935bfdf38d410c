#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "core/limits.hpp"
#include "core/schema.hpp"

namespace mbl::cli {

const Revision* resolve_revision(const std::string& name) {
    const Schema& schema = Schema::instance();
    const std::string wanted = name.empty() ? schema.default_revision() : name;
    if (const Revision* r = schema.revision(wanted)) return r;
    // A Megatron-LM commit of the bundled table: the session checks it with the nearest revision's facts.
    if (auto place = schema.locate_commit(wanted); place && place->nearest) return place->nearest;
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

void add_limit_option(CLI::App& cmd, std::vector<std::string>& limits) {
    cmd.add_option("--limit", limits,
                   "Set limits that bound the run on hostile input, NAME=VALUE, comma-separated, repeatable (e.g. "
                   "python-steps=2000000,file-size=32MiB); docs/limits.md lists them")
        ->type_name("NAME=VALUE")
        ->delimiter(',')
        ->allow_extra_args(false);
}

bool apply_limit_options(const std::vector<std::string>& limits) {
    LimitValues values = default_limits();
    for (const std::string& one : limits) {
        if (auto problem = apply_limit(values, one)) {
            std::cerr << fmt::format("mbridge-lint: --limit {}: {}\n", one, *problem);
            return false;
        }
    }
    set_limits(values);
    return true;
}

}  // namespace mbl::cli
