#include "gpu_check/runner.hpp"

#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace mbl::gpu {

namespace fs = std::filesystem;

std::vector<std::string> recompute_overrides(const Recompute& rc) {
    switch (rc.granularity) {
        case Recompute::Granularity::None:
            return {"model.recompute_granularity=null", "model.recompute_method=null",
                    "model.recompute_num_layers=null"};
        case Recompute::Granularity::Selective:
            return {"model.recompute_granularity=selective",
                    fmt::format("model.recompute_modules=[{}]", fmt::join(rc.modules, ",")),
                    "model.recompute_method=null", "model.recompute_num_layers=null"};
        case Recompute::Granularity::Full:
            return {
                "model.recompute_granularity=full",
                fmt::format("model.recompute_method={}", rc.method == Recompute::Method::Uniform ? "uniform" : "block"),
                fmt::format("model.recompute_num_layers={}", rc.num_layers)};
    }
    return {};
}

std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::vector<RankFigure> read_rank_reports(const std::string& dir, std::string& error) {
    std::vector<RankFigure> ranks;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind("rank", 0) != 0 || it->path().extension() != ".json") continue;
        try {
            std::ifstream in(it->path());
            const auto j = nlohmann::json::parse(in);
            ranks.push_back({j.at("rank").get<int>(), j.at("peak_allocated_bytes").get<double>()});
        } catch (const std::exception& e) {
            error = fmt::format("{}: {}", it->path().string(), e.what());
        }
    }
    std::sort(ranks.begin(), ranks.end(), [](const RankFigure& a, const RankFigure& b) { return a.rank < b.rank; });
    if (ranks.empty() && error.empty())
        error = fmt::format("no rank*.json in {}: the job wrote no memory report (does it run Python with PYTHONPATH "
                            "passed through, and did it touch CUDA?)",
                            dir);
    return ranks;
}

RunnerRun run_job(const RunnerOptions& o, const std::string& role, const Recompute& rc) {
    RunnerRun run;
    run.role = role;
    run.recompute = rc;
    const fs::path dir = fs::path(o.work_dir) / role;
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir, ec);
    std::string overrides;
    for (const auto& ov : recompute_overrides(rc)) overrides += fmt::format(" {}", shell_quote(ov));
    overrides += fmt::format(" {}", shell_quote(fmt::format("train.train_iters={}", o.iterations)));
    run.command = o.command + overrides;
    run.log_path = (dir / "job.log").string();
    const std::string line = fmt::format(
        "MBRIDGE_LINT_MEMORY_JSON={} PYTHONPATH={}${{PYTHONPATH:+:$PYTHONPATH}} sh -c {} > {} 2>&1",
        shell_quote(dir.string()), shell_quote(o.helper_dir), shell_quote(run.command), shell_quote(run.log_path));
    const int status = std::system(line.c_str());
    run.exit_code = status == -1 ? -1 : (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    run.ranks = read_rank_reports(dir.string(), run.error);
    if (run.exit_code != 0) run.error = fmt::format("the job exited with {} (log: {})", run.exit_code, run.log_path);
    for (const auto& r : run.ranks) run.peak_bytes = std::max(run.peak_bytes, r.peak_allocated_bytes);
    return run;
}

}  // namespace mbl::gpu
