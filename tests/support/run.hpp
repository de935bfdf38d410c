#pragma once
// Runs a shell command line and collects its output (stdout and stderr together) and exit code.
#include <sys/wait.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace mbl::test {

struct RunResult {
    int code = -1;
    std::string out;
};

inline RunResult run_shell(const std::string& command) {
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (!pipe) throw std::runtime_error("popen failed: " + command);
    RunResult r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
    const int status = pclose(pipe);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

inline std::string lint_binary() { return MBRIDGE_LINT_BINARY; }

// The linter with `args` (a shell command line's words), its output and exit code.
inline RunResult run(const std::string& args) { return run_shell(lint_binary() + " " + args); }

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The test data's folders, each with a trailing slash.
inline const std::string fixtures = std::string(MBRIDGE_LINT_TEST_DATA) + "/fixtures/yaml/";
inline const std::string examples = std::string(MBRIDGE_LINT_TEST_DATA) + "/../examples/";

}  // namespace mbl::test
