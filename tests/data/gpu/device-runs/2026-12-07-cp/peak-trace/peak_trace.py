"""What is alive at the backward peak of one fake-group sweep run (issue 37, CP): PyTorch's allocator history over the
second measured step, replayed to its highest point; the blocks alive there with the Python frames that made them.

Usage: peak_trace.py SHAPE RUN_INDEX   (stdout: JSON lines, one per alive block at the peak, then a summary line)
"""
import json
import os
import sys

HERE = os.path.join(os.getcwd(), "gpu_check", "reference")
sys.path.insert(0, HERE)
import fake_group_sweep as fgs  # noqa: E402
import mbridge_lint_memory  # noqa: E402

MiB = 1024 * 1024


def frames_of(event):
    out = []
    for f in event.get("frames", []):
        name = f.get("filename", "")
        if any(k in name for k in ("megatron", "te_cp_attention", "fake_group", "mbridge_lint_memory", "torch/autograd",
                                   "torch/utils/checkpoint", "tensor_parallel")):
            out.append("{}:{}:{}".format(name.split("/")[-1], f.get("line"), f.get("name")))
    return out[:6]


def analyse(torch, snap, out):
    events = [e for dev in snap["device_traces"] for e in dev]
    live, cur, peak, peak_at, pre_freed = {}, 0, -1, None, 0
    backward_from = None
    for i, e in enumerate(events):
        act = e["action"]
        if act == "alloc":
            live[e["addr"]] = (e["size"], i)
            cur += e["size"]
        elif act == "free_completed":
            if e["addr"] in live:
                cur -= live.pop(e["addr"])[0]
            else:
                pre_freed += e["size"]
                cur -= e["size"]
        else:
            continue
        if cur > peak:
            peak, peak_at, peak_live = cur, i, dict(live)
    for addr, (size, i) in sorted(peak_live.items(), key=lambda kv: -kv[1][0]):
        out.write(json.dumps({"MiB": round(size / MiB, 3), "event": i, "frames": frames_of(events[i])}) + "\n")
    out.write(json.dumps({"summary": True, "peak_MiB": round(peak / MiB, 3), "peak_event": peak_at,
                          "events": len(events), "pre_existing_freed_MiB": round(pre_freed / MiB, 3),
                          "peak_alloc_frames": frames_of(events[peak_at])}) + "\n")


def main():
    shape, index = sys.argv[1], int(sys.argv[2])
    sh = fgs.SHAPES[shape]
    sh["runs"] = [sh["runs"][index]]
    import torch

    calls = {"n": 0}
    original = mbridge_lint_memory.measure_step

    def traced(forward, backward=None, device=None, sync=True):
        calls["n"] += 1
        if calls["n"] != 6:  # the unmeasured first run (3 steps), then this run: 1 warm-up, 2 measured; the last
            return original(forward, backward, device, sync)
        torch.cuda.memory._record_memory_history(max_entries=1000000, stacks="python")
        figures = original(forward, backward, device, sync)
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        sys.stdout.write(json.dumps({"figures_MiB": {k: round(v / MiB, 3) for k, v in figures.items()
                                                     if k.endswith("bytes")}}) + "\n")
        analyse(torch, snap, sys.stdout)
        return figures

    mbridge_lint_memory.measure_step = traced
    fgs.SHAPES[shape] = sh
    fgs.emit = lambda *a, **k: None
    fgs.run_shape(shape)


if __name__ == "__main__":
    main()
