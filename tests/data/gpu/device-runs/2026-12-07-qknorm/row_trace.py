"""What one fake-group sweep row keeps and what is alive at its backward peak (issue 37, MLA): PyTorch's allocator
history over the run's last measured step, with a snapshot at the end of the forward.

Usage: row_trace.py SHAPE RUN_INDEX   (stdout: JSON lines: the step's figures; the blocks allocated by the forward and
alive at its end, grouped by size and the frames that made them; the same for the blocks alive at the backward peak)
"""
import collections
import json
import os
import sys

HERE = os.path.join(os.getcwd(), "gpu_check", "reference")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.getcwd(), "integrations", "bridge"))
import fake_group_sweep as fgs  # noqa: E402
import mbridge_lint_memory  # noqa: E402

MiB = 1024 * 1024
KEEP = ("megatron", "mla_local_attention", "fake_group", "torch/nn/functional", "torch/autograd", "tensor_parallel")


def frames_of(event):
    out = []
    for f in event.get("frames", []):
        name = f.get("filename", "")
        if any(k in name for k in KEEP):
            out.append("{}:{}:{}".format(name.split("/")[-1], f.get("line"), f.get("name")))
    return out[:5]


def replay(events, stop=None):
    """Blocks alive at the end (or at the highest point when stop is 'peak'), each (size, event index)."""
    live, cur, peak, peak_live, pre_freed = {}, 0, -1, {}, 0
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
        if stop == "peak" and cur > peak:
            peak, peak_live = cur, dict(live)
    return (peak_live if stop == "peak" else live), (peak if stop == "peak" else cur), pre_freed


def grouped(events, live):
    groups = collections.OrderedDict()
    for addr, (size, i) in sorted(live.items(), key=lambda kv: kv[1][1]):
        key = (size, tuple(frames_of(events[i])))
        groups.setdefault(key, 0)
        groups[key] += 1
    rows = [{"KiB": round(size / 1024, 1), "count": n, "total_MiB": round(size * n / MiB, 3), "frames": list(fr)}
            for (size, fr), n in groups.items()]
    return sorted(rows, key=lambda r: -r["total_MiB"])


def main():
    shape, index = sys.argv[1], int(sys.argv[2])
    sh = dict(fgs.SHAPES[shape])
    sh["runs"] = [sh["runs"][index]]
    fgs.SHAPES[shape] = sh
    import torch

    calls = {"n": 0}
    original = mbridge_lint_memory.measure_step

    def traced(forward, backward=None, device=None, sync=True):
        calls["n"] += 1
        if calls["n"] != 6:  # the unmeasured first run (3 steps), then this run: 1 warm-up, 2 measured; the last
            return original(forward, backward, device, sync)
        snaps = {}

        def fwd():
            out = forward()
            torch.cuda.synchronize()
            snaps["forward"] = torch.cuda.memory._snapshot()
            return out

        torch.cuda.memory._record_memory_history(max_entries=1000000, stacks="python")
        figures = original(fwd, backward, device, sync)
        snaps["step"] = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        out = sys.stdout
        out.write(json.dumps({"figures_MiB": {k: round(v / MiB, 3) for k, v in figures.items()
                                              if k.endswith("bytes")}}) + "\n")
        events = [e for dev in snaps["forward"]["device_traces"] for e in dev]
        live, cur, pre = replay(events)
        out.write(json.dumps({"forward_end_MiB": round(cur / MiB, 3), "pre_existing_freed_MiB": round(pre / MiB, 3),
                              "blocks": len(live)}) + "\n")
        for row in grouped(events, live):
            out.write(json.dumps(dict(row, at="forward_end")) + "\n")
        events = [e for dev in snaps["step"]["device_traces"] for e in dev]
        live, peak, pre = replay(events, "peak")
        out.write(json.dumps({"peak_MiB": round(peak / MiB, 3), "pre_existing_freed_MiB": round(pre / MiB, 3),
                              "blocks": len(live)}) + "\n")
        for row in grouped(events, live):
            out.write(json.dumps(dict(row, at="peak")) + "\n")
        return figures

    mbridge_lint_memory.measure_step = traced
    fgs.emit = lambda *a, **k: None
    fgs.run_shape(shape)


if __name__ == "__main__":
    main()
