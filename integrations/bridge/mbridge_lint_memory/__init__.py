"""Per-rank device-memory figures of a training job, for `mbridge-lint gpu-check --runner`.

Two ways in:

* Nothing to change in the job: put ``integrations/bridge`` on ``PYTHONPATH`` and set ``MBRIDGE_LINT_MEMORY_JSON``
  to a directory. The ``sitecustomize`` module there calls :func:`install_exit_report`, so every Python process of the
  launch (one per rank) writes ``rank<RANK>.json`` with its peak allocated memory when it exits.
  ``mbridge-lint gpu-check --runner CMD`` does exactly this.
* From Python: :func:`measure_step` measures one forward/backward the way the memory estimator predicts it (retained
  bytes after forward including the output, forward peak, backward peak; all relative to a base taken after the
  inputs exist).
"""

from __future__ import annotations

import atexit
import json
import os
import time

ENV_DIR = "MBRIDGE_LINT_MEMORY_JSON"

__all__ = ["ENV_DIR", "measure_step", "rank_report", "write_rank_report", "install_exit_report"]


def _torch():
    import torch  # imported lazily: sitecustomize must not import torch into every Python process

    return torch


def measure_step(forward, backward=None, device=None, sync=True):
    """Measures one step. ``forward()`` returns the output (a tensor); ``backward(output)`` runs the backward pass
    (default: ``output.backward(torch.randn_like(output))``). Tensors that must not count (the input, parameters)
    have to exist before the call. Returns a dict of byte counts and milliseconds."""
    torch = _torch()
    if sync:
        torch.cuda.synchronize(device)
    base = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    start = time.perf_counter()
    out = forward()
    retained = torch.cuda.memory_allocated(device) - base
    forward_peak = torch.cuda.max_memory_allocated(device) - base
    torch.cuda.reset_peak_memory_stats(device)
    if backward is None:
        out.backward(torch.randn_like(out))
    else:
        backward(out)
    if sync:
        torch.cuda.synchronize(device)
    step_ms = (time.perf_counter() - start) * 1000.0
    backward_peak = torch.cuda.max_memory_allocated(device) - base
    # The allocator's slack at the backward peak (reserved beside allocated), for the estimate's reserve.
    peak_allocated_total = torch.cuda.max_memory_allocated(device)
    peak_reserved_total = torch.cuda.max_memory_reserved(device)
    del out
    return {
        "retained_bytes": int(retained),
        "forward_peak_bytes": int(forward_peak),
        "backward_peak_bytes": int(backward_peak),
        "step_ms": step_ms,
        "peak_allocated_total_bytes": int(peak_allocated_total),
        "peak_reserved_total_bytes": int(peak_reserved_total),
    }


def rank_report(device=None):
    """This process's figures: peak and current allocated bytes, reserved bytes, rank and device name."""
    torch = _torch()
    rank = int(os.environ.get("RANK", os.environ.get("SLURM_PROCID", "0")))
    report = {"version": 1, "rank": rank, "pid": os.getpid()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        report.update(
            {
                "device": torch.cuda.get_device_name(device),
                "peak_allocated_bytes": int(torch.cuda.max_memory_allocated(device)),
                "allocated_bytes": int(torch.cuda.memory_allocated(device)),
                "peak_reserved_bytes": int(torch.cuda.max_memory_reserved(device)),
            }
        )
    return report


def write_rank_report(directory, device=None):
    """Writes ``rank<RANK>.json`` into ``directory`` (atomically); returns the path, or None without CUDA use."""
    report = rank_report(device)
    if "peak_allocated_bytes" not in report:
        return None
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "rank{}.json".format(report["rank"]))
    tmp = path + ".tmp{}".format(os.getpid())
    with open(tmp, "w") as f:
        json.dump(report, f)
    os.replace(tmp, path)
    return path


def install_exit_report(directory=None):
    """Registers an exit hook that writes this rank's report to ``directory`` (default: $MBRIDGE_LINT_MEMORY_JSON)."""
    directory = directory or os.environ.get(ENV_DIR)
    if not directory:
        return False

    def _report():
        import sys

        if "torch" not in sys.modules:  # a helper process of the launcher that never touched CUDA
            return
        try:
            write_rank_report(directory)
        except Exception as e:  # never turn a finished job into a failed one
            print("mbridge_lint_memory: could not write the memory report: {}".format(e), file=sys.stderr)

    atexit.register(_report)
    return True
