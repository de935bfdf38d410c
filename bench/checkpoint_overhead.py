#!/usr/bin/env python3
"""Benchmark (GPU): the host-side cost of one activation checkpoint in Megatron Core.

Usage: bench/checkpoint_overhead.py --megatron NAME=PATH [--megatron NAME=PATH ...] [--python PYTHON] [--layers N]
                                    [--hidden H] [--seq S]
                                    [--steps N] [--machinery] [--out FILE.json]

Builds a stack of small dense layers (h=256, s=256, b=1: almost no GPU work per layer) with each given Megatron Core
(PATH holds `megatron/core`) through the GPU check's reference helper (gpu_check/reference/mcore_reference.py), and
times one training step with selective recompute of nothing (the control), of `core_attn`, `mlp`, both, and
`layernorm` (an output-discarding checkpoint). The step-time difference divided by the number of checkpoints the
step runs is what each checkpoint costs beyond the work it replays: Python autograd functions, saved and restored
random-number states, hooks. On a large, compute-bound step this cost hides behind the GPU; on a step whose GPU work
comes in many small pieces (MoE with expert parallelism) the host is on the critical path and it shows up in full.

--machinery separates the two parts of that cost. It chains --layers stages of (a few elementwise ops, then a small
matmul that saves their result) and wraps the elementwise ops of every stage in Megatron Core's reentrant checkpoint
(`tensor_parallel.checkpoint`, what `core_attn`, `mlp` and `moe` use) or in its output-discarding one
(`CheckpointWithoutOutput`, what `layernorm`, `mla_up_proj` and `moe_act` use), with 1 and with 8 ops inside. The
1-op difference to the control is the checkpoint's own host cost; the 8-op minus the 1-op, over 7, is the host cost of
each further replayed op: what `checkpoint_host_us` in schemas/gpus.json stands for.

Prints a table and, with --out, the figures as JSON.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HELPER = os.path.join(HERE, "..", "gpu_check", "reference", "mcore_reference.py")

OPTIONS = [  # (label list, checkpoints per layer)
    ([], 0),
    (["core_attn"], 1),
    (["mlp"], 1),
    (["core_attn", "mlp"], 2),
    (["layernorm"], 2),  # the input and the pre-MLP norm
]


def request(layers, steps, modules, hidden=256, seq=256):
    """Dense layers of width `hidden` (64-wide heads, FFN 4x), `seq` tokens."""
    return {
        "protocol": 1, "seed": 1234, "seq_length": seq, "micro_batch": 1, "warmup": 5, "steps": steps,
        "transformer_impl": "local",
        "transformer_config": {
            "num_layers": layers, "hidden_size": hidden, "num_attention_heads": hidden // 64,
            "num_query_groups": hidden // 64, "kv_channels": 64, "ffn_hidden_size": 4 * hidden,
            "gated_linear_unit": True, "add_bias_linear": False,
            "normalization": "RMSNorm", "hidden_dropout": 0.0, "attention_dropout": 0.0, "seq_length": seq,
            "tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1, "context_parallel_size": 1,
            "expert_model_parallel_size": 1, "expert_tensor_parallel_size": 1, "sequence_parallel": False,
            "virtual_pipeline_model_parallel_size": None,
        },
        "runs": [{"role": "candidate", "describe": f"selective {modules}",
                  "recompute": {"recompute_granularity": "selective", "recompute_method": None,
                                "recompute_num_layers": None, "recompute_modules": modules}}],
    }


def ms_per_step(torch, step, steps):
    """Milliseconds per call of `step` over `steps` calls, after 10 warm-up calls, the GPU drained at both ends."""
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    return 1000.0 * (time.perf_counter() - start) / steps


def worker(layers, steps, hidden, seq):
    """Runs in a process whose PYTHONPATH holds one Megatron Core: prints {modules: ms per step} as JSON."""
    sys.path.insert(0, os.path.dirname(HELPER))
    import mcore_reference as ref
    import torch

    req = request(layers, steps, [], hidden, seq)
    cls, kwargs, _, _ = ref.prepare_config(torch, req, te_present=False)
    ref.init_single_process(torch, req["seed"])
    s, hidden = req["seq_length"], kwargs["hidden_size"]
    mask = torch.triu(torch.ones(s, s, dtype=torch.bool, device="cuda"), diagonal=1).view(1, 1, s, s)
    out, spread = {}, {}
    # Three passes over the options, the fastest kept: a drift of the host's speed shows as the spread.
    for _ in range(3):
        for modules, _ in OPTIONS:
            key = ",".join(modules)
            recompute = {"recompute_granularity": "selective", "recompute_method": None,
                         "recompute_num_layers": None, "recompute_modules": modules}
            block = None
            try:
                _, block = ref.build_block(torch, cls, ref.with_recompute(kwargs, recompute), False, req["seed"])
                x = torch.randn(s, 1, hidden, dtype=torch.bfloat16, device="cuda", requires_grad=True)

                def step():
                    y = block(x, attention_mask=mask)
                    y.backward(torch.ones_like(y))

                ms = ms_per_step(torch, step, steps)
                spread.setdefault(key, []).append(ms)
                out[key] = {"ms": min(spread[key])}
            except Exception as e:  # a Megatron Core that cannot run this option
                out[key] = {"error": "{}: {}".format(type(e).__name__, e)[:200]}
            del block
    for key, times in spread.items():
        out[key]["spread_ms"] = max(times) - min(times)
    print(json.dumps(out))


MACHINERY = [("control", 1), ("control", 8), ("reentrant", 1), ("reentrant", 8), ("discarding", 1),
             ("discarding", 8)]


def machinery_worker(layers, steps):
    """Prints {"kind/ops": ms per step} for the chained stages described in the module doc."""
    sys.path.insert(0, os.path.dirname(HELPER))
    import mcore_reference as ref
    import torch
    from megatron.core import tensor_parallel

    ref.init_single_process(torch, 1234)
    width = 256
    weights = [(torch.randn(width, width, dtype=torch.bfloat16, device="cuda") / 16).requires_grad_()
               for _ in range(layers)]

    def body(n):
        def run(x):
            for _ in range(n):
                x = x * 1.0009765625  # one kernel launch, next to no GPU work
            return x
        return run

    out, errors = {}, {}
    # The order repeats, so a drift of the host's speed during the run shows as a spread between the repeats.
    for repeat in range(3):
        for kind, n in MACHINERY:
            f = body(n)

            def step():
                x = torch.randn(256, width, dtype=torch.bfloat16, device="cuda", requires_grad=True)
                for w in weights:
                    if kind == "control":
                        h = f(x)
                        x = h @ w
                    elif kind == "reentrant":
                        h = tensor_parallel.checkpoint(f, False, x)
                        x = h @ w
                    else:
                        ckpt = tensor_parallel.CheckpointWithoutOutput()
                        h = ckpt.checkpoint(f, x)
                        x = h @ w
                        ckpt.discard_output_and_register_recompute(x)
                x.sum().backward()

            try:
                ms = ms_per_step(torch, step, steps)
                out.setdefault(f"{kind}/{n}", []).append(ms)
            except Exception as e:  # a Megatron Core whose checkpoint of this kind cannot run (RC107's crash)
                errors[f"{kind}/{n}"] = "{}: {}".format(type(e).__name__, e)[:200]
    print(json.dumps({k: min(v) for k, v in out.items()} | {"spread": {k: max(v) - min(v) for k, v in out.items()},
                                                           "errors": errors}))


def machinery_rows(times, layers):
    """Per checkpoint and per further replayed op, in microseconds, for each checkpoint kind."""
    rows = {}
    for kind in ("reentrant", "discarding"):
        if f"{kind}/1" not in times or f"{kind}/8" not in times:
            rows[kind] = {"error": times.get("errors", {}).get(f"{kind}/1", "did not run")}
            continue
        one = 1000.0 * (times[f"{kind}/1"] - times["control/1"]) / layers
        eight = 1000.0 * (times[f"{kind}/8"] - times["control/8"]) / layers
        rows[kind] = {"us_per_checkpoint": one, "us_per_replayed_op": (eight - one) / 7}
    return rows


def step_times(python, megatron_path, layers, steps, machinery=False, shape=(256, 256)):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(megatron_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([python, os.path.abspath(__file__), "--worker", "--layers", str(layers), "--steps",
                           str(steps), "--hidden", str(shape[0]), "--seq", str(shape[1])] + (["--machinery"] if machinery else []),
                          capture_output=True, text=True,
                          env=env)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit("worker failed: " + (proc.stderr or proc.stdout)[-500:])
    return json.loads(lines[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megatron", action="append", default=[], help="NAME=PATH of a Megatron-LM source tree")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--layers", type=int, default=16)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--machinery", action="store_true",
                        help="time the checkpoint machinery around trivial ops instead of real layers")
    parser.add_argument("--hidden", type=int, default=256, help="layer width of the real-layer stack")
    parser.add_argument("--seq", type=int, default=256, help="tokens of the real-layer stack")
    parser.add_argument("--out")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        if args.machinery:
            machinery_worker(args.layers, args.steps)
        else:
            worker(args.layers, args.steps, args.hidden, args.seq)
        return 0
    results = {}
    for spec in args.megatron:
        name, path = spec.split("=", 1)
        if args.machinery:
            times = step_times(args.python, path, args.layers, args.steps, machinery=True)
            rows = machinery_rows(times, args.layers)
            for kind, row in rows.items():
                if "error" in row:
                    print(f"{name:10} {kind:10} cannot run: {row['error']}", flush=True)
                    continue
                print(f"{name:10} {kind:10} {row['us_per_checkpoint']:7.1f} us/checkpoint "
                      f"{row['us_per_replayed_op']:6.1f} us/further replayed op", flush=True)
            results[name] = {"step_ms": times, "per_kind": rows}
            continue
        times = step_times(args.python, path, args.layers, args.steps, shape=(args.hidden, args.seq))
        base = times.get("", {}).get("ms")
        rows = []
        for modules, per_layer in OPTIONS:
            t = times.get(",".join(modules), {})
            row = {"modules": modules, "checkpoints": per_layer * args.layers, "step_ms": t.get("ms"),
                   "error": t.get("error", "")}
            if row["step_ms"] is not None and base is not None and row["checkpoints"]:
                row["us_per_checkpoint"] = 1000.0 * (row["step_ms"] - base) / row["checkpoints"]
            rows.append(row)
            label = ", ".join(modules) or "(none)"
            ms = row["step_ms"]
            extra = f"{row['us_per_checkpoint']:7.1f} us/checkpoint" if "us_per_checkpoint" in row else row["error"]
            print(f"{name:10} {label:18} step {ms if ms is None else round(ms, 3)} ms  {extra}", flush=True)
        results[name] = rows
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"layers": args.layers, "hidden": args.hidden, "seq": args.seq, "results": results}, f,
                      indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
