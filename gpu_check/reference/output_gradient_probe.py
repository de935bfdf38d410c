#!/usr/bin/env python3
"""Issue 37 probe: a block's backward working set (backward peak - retained) by where its output gradient comes from,
to isolate the tensor a pipeline stage's backward holds beyond the block model when its gradient was received
(gpu_check/DEVICE_RUNS.md, 2026-12-07 stage trace; memory::stage_figures). Its H100 output is in
tests/data/gpu/device-runs/2026-12-07-stage-trace/second-call/probe.jsonl.

One process, one GPU, Megatron Core's local-spec block built by mcore_reference.build_block from a gpu-check stage
request's TransformerConfig (4 layers, pipeline 1). Modes:
  held      the gradient is a tensor the caller keeps through the backward (as the schedule keeps a received one)
  engine    the gradient is made inside the backward by an autograd node (as the last stage's loss makes it)
each with and without the final norm (post_process), for the request's first four recompute runs. One JSON line per
block: MiB figures of each mode's second step (the first warms the allocator).

Usage: python3 output_gradient_probe.py REQUEST.json (a request.json gpu-check wrote into its --work-dir)."""
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "..", "integrations", "bridge"))
import mcore_reference as mr  # noqa: E402
from mbridge_lint_memory import measure_step  # noqa: E402

request = json.load(open(sys.argv[1]))
for key in ("parallel", "schedule"):
    request.pop(key, None)
torch, megatron = mr.import_stack()
request["input_rows"] = int(request["seq_length"])
cls, kwargs, changes, dropped = mr.prepare_config(torch, request, False)
kwargs.update(pipeline_model_parallel_size=1, num_layers=4)
kwargs.pop("virtual_pipeline_model_parallel_size", None)
mr.init_single_process(torch, 1234)
s, b = int(request["seq_length"]), int(request["micro_batch"])
mask = torch.triu(torch.ones(s, s, dtype=torch.bool, device="cuda"), diagonal=1).view(1, 1, s, s)


# The last stage's loss as the schedule runs it: its backward makes the block output's gradient.
last_stage_loss = mr.output_gradient_loss(torch)


def held(out):
    g = torch.randn_like(out)
    torch.cuda.reset_peak_memory_stats()  # the gradient exists before the backward, as a received one does
    out.backward(g)


def engine(out):
    loss, _ = last_stage_loss(out)
    loss.backward()


for run in request["runs"][:4]:
    for post in (False, True):
        cfg, block = mr.build_block(torch, cls, mr.with_recompute(kwargs, run["recompute"]), False, 1234,
                                    post_process=post)
        hidden = cfg.hidden_size
        res = {}
        for name, fn in (("held", held), ("engine", engine), ("held", held), ("engine", engine)):
            x = torch.randn(s, b, hidden, dtype=torch.bfloat16, device="cuda", requires_grad=True)
            f = measure_step(lambda: block(x, attention_mask=mask), fn)
            del x
            res[name] = {k: round(v / 2**20, 1) for k, v in f.items() if k.endswith("bytes")}
        print(json.dumps({"recompute": run["recompute"], "final_norm": post, **res}), flush=True)
        del block, cfg
        torch.cuda.empty_cache()
