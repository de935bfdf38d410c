#pragma once
// `gpu-check --runner CMD`: runs the user's own Megatron Bridge launch command twice (the config's recompute setting
// and a matched no-recompute control, as Hydra-style overrides), with integrations/bridge on PYTHONPATH so that every
// rank writes its peak allocated device memory on exit, and compares the per-rank peak saving with the memory
// estimate of the whole job. Plain C++: no GPU is needed where mbridge-lint runs (the command may submit anywhere
// that shares the file system).
#include <optional>
#include <string>
#include <vector>

#include "gpu_check/harness.hpp"

namespace mbl::gpu {

// Hydra-style overrides that select `rc` (recompute fields only).
std::vector<std::string> recompute_overrides(const Recompute& rc);
std::string shell_quote(const std::string& s);

struct RankFigure {
    int rank = 0;
    double peak_allocated_bytes = 0;
};

struct RunnerRun {
    std::string role;
    Recompute recompute;
    std::string command;  // as run
    int exit_code = 0;
    std::string log_path;
    std::vector<RankFigure> ranks;
    double peak_bytes = 0;  // the largest rank peak
    std::string error;      // why no figure came back
};

struct RunnerOptions {
    std::string command;     // the user's launch command
    std::string helper_dir;  // integrations/bridge
    std::string work_dir;    // where the per-run folders go
    int iterations = 4;      // train.train_iters
};

RunnerRun run_job(const RunnerOptions& options, const std::string& role, const Recompute& rc);

// Reads rank*.json files written by integrations/bridge/mbridge_lint_memory; error text when none are usable.
std::vector<RankFigure> read_rank_reports(const std::string& dir, std::string& error);

}  // namespace mbl::gpu
