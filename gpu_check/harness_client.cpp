// The product's side of the CUDA harness: finds the tool, writes its request, runs it and reads its JSON lines
// (gpu_check/harness_protocol.hpp). No CUDA here: a machine without the tool gets a message saying how to build it.
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

#include "gpu_check/harness.hpp"
#include "gpu_check/harness_protocol.hpp"
#include "gpu_check/runner.hpp"

namespace mbl::gpu {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kHarnessName = "mbridge-lint-gpu-harness";

const std::string kNotBuilt = fmt::format(
    "the CUDA harness ({}) is not built: it is a tool of its own; build it where nvcc is installed with `cmake -B "
    "build -DMBRIDGE_LINT_CUDA=ON && cmake --build build --target {}` and keep it beside mbridge-lint or on PATH, or "
    "name it with MBRIDGE_LINT_GPU_HARNESS (tools/gpu_harness/README.md); or use --reference mcore, which needs "
    "PyTorch and Megatron Core instead",
    kHarnessName, kHarnessName);

bool executable(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

struct Outcome {
    std::optional<DeviceInfo> device;
    std::optional<Measurement> measurement;
    std::optional<std::pair<std::string, std::string>> error;  // kind, message
    int exit_code = 0;
};

// Runs `command` (its standard output read line by line); `step` sees the progress lines as they come.
Outcome run_tool(const std::string& command, const std::function<void(int, int)>& step) {
    Outcome out;
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) {
        out.exit_code = -1;
        return out;
    }
    auto take = [&](const std::string& line) {
        const json j = json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("event")) return;
        const std::string event = j["event"].is_string() ? j["event"].get<std::string>() : "";
        try {
            if (event == "device") out.device = parse_device(j);
            else if (event == "step" && step) step(j.at("done").get<int>(), j.at("total").get<int>());
            else if (event == "measurement") out.measurement = parse_measurement(j);
            else if (event == "error")
                out.error = {j.value("kind", std::string("crash")), j.value("message", std::string("no message"))};
        } catch (const std::exception& e) {
            out.error = {"bad_output", fmt::format("the harness's \"{}\" line is not what this mbridge-lint reads "
                                                   "({}): {}",
                                                   event, e.what(), line.substr(0, 300))};
        }
    };
    std::string line;
    for (int c; (c = std::fgetc(pipe)) != EOF;) {
        if (c != '\n') {
            line += static_cast<char>(c);
            continue;
        }
        take(line);
        line.clear();
    }
    if (!line.empty()) take(line);
    const int status = pclose(pipe);
    out.exit_code = status == -1 ? -1 : (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return out;
}

std::string temp_file(const std::string& stem) {
    std::string path = (fs::temp_directory_path() / (stem + "-XXXXXX")).string();
    const int fd = mkstemp(path.data());
    if (fd < 0) throw std::runtime_error("cannot create a temporary file for the harness");
    close(fd);
    return path;
}

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

std::string harness_path() {
    if (const char* named = std::getenv("MBRIDGE_LINT_GPU_HARNESS"); named && *named) return named;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec && executable(exe.parent_path() / kHarnessName)) return (exe.parent_path() / kHarnessName).string();
    const char* path = std::getenv("PATH");
    for (std::string_view dirs = path ? path : ""; !dirs.empty();) {
        const std::size_t colon = dirs.find(':');
        const std::string dir(dirs.substr(0, colon));
        dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
        if (!dir.empty() && executable(fs::path(dir) / kHarnessName)) return (fs::path(dir) / kHarnessName).string();
    }
    return "";
}

DeviceInfo device_info() {
    DeviceInfo info;
    const std::string harness = harness_path();
    if (harness.empty()) {
        info.error = kNotBuilt;
        return info;
    }
    if (!executable(harness)) {
        info.error = fmt::format("MBRIDGE_LINT_GPU_HARNESS names {}, which is not an executable file", harness);
        return info;
    }
    const Outcome out = run_tool(fmt::format("{} --device 2>/dev/null", shell_quote(harness)), nullptr);
    if (out.device) return *out.device;
    info.harness_found = true;
    info.error = out.error ? out.error->second
                           : fmt::format("the harness {} answered no device line (exit {})", harness, out.exit_code);
    return info;
}

Measurement measure(const StackConfig& config, const Recompute& recompute, const RunOptions& options) {
    const std::string harness = harness_path();
    if (harness.empty()) throw NoGpu(kNotBuilt);
    const std::string request = temp_file("mbridge-lint-harness-request");
    const std::string log = temp_file("mbridge-lint-harness-log");
    std::ofstream(request) << request_json(config, recompute, options).dump() << '\n';
    const Outcome out = run_tool(
        fmt::format("{} {} 2> {}", shell_quote(harness), shell_quote(request), shell_quote(log)), options.progress);
    const std::string stderr_text = read_text(log);
    std::error_code ec;
    fs::remove(request, ec);
    fs::remove(log, ec);
    if (out.error) {
        const auto& [kind, message] = *out.error;
        if (kind == "no_gpu") throw NoGpu(message);
        if (kind == "out_of_memory") throw OutOfMemory(message);
        throw std::runtime_error(fmt::format("the CUDA harness failed ({}): {}", kind, message));
    }
    if (!out.measurement || out.exit_code != 0)
        throw std::runtime_error(fmt::format("the CUDA harness {} stopped (exit {}) without a result{}", harness,
                                             out.exit_code, stderr_text.empty() ? "" : ": " + stderr_text));
    return *out.measurement;
}

}  // namespace mbl::gpu
