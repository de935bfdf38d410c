// mbridge-lint-gpu-harness: the GPU check's CUDA harness as a tool of its own (mbridge-lint links no CUDA code).
//   mbridge-lint-gpu-harness REQUEST.json   measure one run; JSON lines on standard output
//   mbridge-lint-gpu-harness --device       say which GPU it would use
// The request and the lines are gpu_check/harness_protocol.hpp's (tools/gpu_harness/README.md lists the fields).
// Exit codes: 0 measured (or a usable device); 2 an `error` line says why not.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <stdexcept>

#include "gpu_check/harness_protocol.hpp"
#include "tools/gpu_harness/harness.hpp"
#include "version.hpp"

namespace {

using mbl::gpu::error_line;
using nlohmann::json;

void emit(const json& line) { std::cout << line.dump() << '\n' << std::flush; }

int fail(const std::string& kind, const std::string& message) {
    emit(error_line(kind, message));
    return 2;
}

json read_request(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::invalid_argument(fmt::format("cannot read the request {}", path));
    json request = json::parse(in, nullptr, false);
    if (request.is_discarded()) throw std::invalid_argument(fmt::format("the request {} is not JSON", path));
    return request;
}

int measure(const std::string& path) {
    try {
        const mbl::gpu::HarnessRequest request = mbl::gpu::parse_request(read_request(path));
        mbl::gpu::RunOptions options = request.options;
        options.progress = [](int done, int total) { emit(mbl::gpu::step_line(done, total)); };
        emit(mbl::gpu::measurement_line(mbl::gpu::cuda_measure(request.stack, request.recompute, options)));
        return 0;
    } catch (const mbl::gpu::NoGpu& e) {
        return fail("no_gpu", e.what());
    } catch (const mbl::gpu::OutOfMemory& e) {
        return fail("out_of_memory", e.what());
    } catch (const std::invalid_argument& e) {
        return fail("bad_request", e.what());
    } catch (const std::exception& e) {
        return fail("crash", e.what());
    }
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"The CUDA harness of `mbridge-lint gpu-check --reference harness`: runs one request's layer stack on "
                 "this machine's GPU and prints its measurements as JSON lines."};
    app.set_version_flag("--version", MBRIDGE_LINT_VERSION);
    std::string request;
    bool device = false;
    app.add_option("request", request, "The request (JSON), as `gpu-check` writes it");
    app.add_flag("--device", device, "Print the GPU this harness would use (a `device` line) and exit");
    CLI11_PARSE(app, argc, argv);
    if (device) {
        const mbl::gpu::DeviceInfo info = mbl::gpu::cuda_device_info();
        emit(mbl::gpu::device_line(info));
        return info.usable() ? 0 : 2;
    }
    if (request.empty()) {
        std::cerr << app.help();
        return 2;
    }
    return measure(request);
}
