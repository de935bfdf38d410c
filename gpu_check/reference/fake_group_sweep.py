#!/usr/bin/env python3
"""One rank of an N-rank Megatron Core job on one GPU: the memory of every job shape (issue 37).

Megatron Core's parallel state is initialised over PyTorch's ``fake`` process-group backend
(``torch.distributed.init_process_group("fake", store=FakeStore(), rank=r, world_size=N)``, then
``initialize_model_parallel(..., create_gloo_process_groups=False)``): every collective is a no-op that leaves its
output as allocated, so Megatron Core's own tensor-, sequence- and expert-parallel layers allocate exactly the shapes
rank r of N allocates, on one GPU. The layers are the local spec's (the GPU machine has no Transformer Engine) and are
measured as ``mcore_reference.py`` measures a block (its ``prepare_config``, ``build_block``'s conversion to bf16, the
shared ``measure_step``; a pipeline stage through its ``schedule_order``).

What the fake group cannot give, and what this script supplies instead (each shape's ``environment`` line says so):

* Values. A fake collective returns no data. Where a received value decides a shape -- the MoE token dispatchers
  exchange per-expert token counts before their all-to-all -- the peers' values are needed. Every all-gather's output
  is filled with copies of this rank's input ("every peer sends what this rank sends"), so the counts the all-to-all
  dispatcher gathers are this rank's, repeated. Routing is made exactly balanced: Megatron Core's own
  ``moe_router_force_load_balancing`` path (router.py ``apply_random_logits`` -> ``moe_utils.RandomSTE``), with the
  random logits it draws (``logits.clone().normal_()``) replaced by a round-robin pattern of the same tensor: token i
  prefers experts i*k, ..., i*k+k-1 (mod E). Each expert then receives T*k/E tokens from every rank, whatever the
  expert-parallel size. ``RandomSTE``'s backward is unchanged (the gradient passes through).
* The norm under sequence parallelism. The local spec's ``WrappedTorchNorm`` asserts that sequence parallelism is off
  (``transformer/torch_norm.py`` line 52 at d98e8a64). Under SP a norm normalises this rank's sequence shard, exactly
  as without SP; only its weight's gradient is all-reduced by the optimizer. The stand-in builds the same torch norm
  (``torch.nn.RMSNorm`` / ``LayerNorm``, which save their input and fp32 statistics) with the assertion's field read
  as false.
* Communication buffers (NCCL's, per peer and channel) are not allocated by a fake group: not measured here.

Not measurable here: context parallelism (the local spec's ``DotProductAttention`` refuses it; CP needs Transformer
Engine's attention, ``attention.py`` line 382 at d98e8a64), ``layernorm`` recompute at d98e8a64 (its
``CheckpointWithoutOutput`` reaches Transformer Engine's ``FP8GlobalStateManager``, ``tensor_parallel/random.py``
lines 767-768 with ``self.fp8 = fp8 is not None`` at line 883: RC107), ``moe_act`` (the local spec's
``SequentialMLP`` has no such checkpoint).

Usage:
    fake_group_sweep.py --list
    fake_group_sweep.py [--shapes A,B,...] [--jobs N] [-o OUT.jsonl]      # every shape, one process each
    fake_group_sweep.py --shape NAME                                       # one shape in this process

One JSON object per line: ``environment`` (per shape: versions, world size, rank, the parallel ranks Megatron Core
reports, what was supplied), ``run`` (per recompute option: the shape, the option and the figures of
``mcore_reference.measure_run`` or ``measure_schedule``), ``error`` (a shape that could not run, with why).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import subprocess
import sys
import time
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mcore_reference as ref  # noqa: E402

SEED = 1234

LLAMA = {  # the measured local rows' "llama" block (tests/data/memory/measured-mcore-local.jsonl)
    "activation": "silu", "add_bias_linear": False, "attention_dropout": 0.0, "ffn_hidden_size": 14336,
    "gated_linear_unit": True, "hidden_dropout": 0.0, "hidden_size": 4096, "normalization": "RMSNorm",
    "num_attention_heads": 32, "num_layers": 4, "num_query_groups": 8,
}
MOE16 = {  # the held-back MoE rows' block (16 experts, top-4), all-to-all dispatcher, balanced routing
    "activation": "silu", "add_bias_linear": False, "attention_dropout": 0.0, "ffn_hidden_size": 5632,
    "gated_linear_unit": True, "hidden_dropout": 0.0, "hidden_size": 2048, "moe_aux_loss_coeff": 0.0,
    "moe_ffn_hidden_size": 1408, "moe_router_topk": 4, "normalization": "RMSNorm", "num_attention_heads": 16,
    "num_layers": 4, "num_moe_experts": 16, "num_query_groups": 4, "moe_token_dispatcher_type": "alltoall",
    "moe_router_force_load_balancing": True,
}

NONE = {}
SEL = lambda *labels: {"recompute_granularity": "selective", "recompute_modules": list(labels)}  # noqa: E731
FULL_U1 = {"recompute_granularity": "full", "recompute_method": "uniform", "recompute_num_layers": 1}
FULL_B2 = {"recompute_granularity": "full", "recompute_method": "block", "recompute_num_layers": 2}

DENSE_RUNS = [NONE, SEL("core_attn"), SEL("mlp"), SEL("core_attn", "mlp"), FULL_U1, FULL_B2]
MOE_RUNS = [NONE, SEL("moe"), SEL("core_attn"), SEL("core_attn", "moe"), FULL_U1]
STAGE_RUNS = [NONE, SEL("core_attn"), FULL_U1]


def shape(arch, tp=1, sp=False, cp=1, ep=1, etp=1, pp=1, vpp=None, stage=0, layers=None, runs=None, s=4096, b=1,
          micro_batches=None, **extra):
    a = dict(arch, **extra)
    if layers is not None:
        a["num_layers"] = layers
    return {"arch": a, "tp": tp, "sp": sp, "cp": cp, "ep": ep, "etp": etp, "pp": pp, "vpp": vpp, "stage": stage,
            "s": s, "b": b, "micro_batches": micro_batches,
            "runs": runs or (MOE_RUNS if "num_moe_experts" in a else DENSE_RUNS)}


SHAPES = {
    # Dense: tensor parallelism with and without sequence parallelism (TP 8: one query group per rank).
    "dense-tp1": shape(LLAMA),
    "dense-tp2": shape(LLAMA, tp=2),
    "dense-tp2-sp": shape(LLAMA, tp=2, sp=True),
    "dense-tp4-sp": shape(LLAMA, tp=4, sp=True),
    "dense-tp8-sp": shape(LLAMA, tp=8, sp=True),
    # Context parallelism: expected to stop at the local spec's attention (recorded as the shape's error).
    "dense-tp2-sp-cp2": shape(LLAMA, tp=2, sp=True, cp=2, runs=[NONE]),
    # MoE: expert parallelism with ETP 1 (16 experts: 8 per rank at EP 2, 2 at EP 8), with TP 2 + SP beside it.
    "moe-ep1": shape(MOE16),
    "moe-ep2": shape(MOE16, ep=2),
    "moe-ep8": shape(MOE16, ep=8),
    "moe-tp2-sp-ep2": shape(MOE16, tp=2, sp=True, ep=2),
    "moe-ep2-allgather": shape(MOE16, ep=2, runs=[NONE, SEL("moe"), FULL_U1], moe_token_dispatcher_type="allgather"),
    # Pipeline stages as Megatron Core's schedule runs them (1F1B; interleaved with VPP), TP 2 + SP.
    "pp2-stage0-tp2-sp": shape(LLAMA, tp=2, sp=True, pp=2, stage=0, layers=8, micro_batches=4, runs=STAGE_RUNS),
    "pp2-stage1-tp2-sp": shape(LLAMA, tp=2, sp=True, pp=2, stage=1, layers=8, micro_batches=4, runs=STAGE_RUNS),
    "pp4-stage1-tp4-sp": shape(LLAMA, tp=4, sp=True, pp=4, stage=1, layers=16, micro_batches=8, runs=STAGE_RUNS),
    "pp2-vpp2-stage0-tp2-sp": shape(LLAMA, tp=2, sp=True, pp=2, vpp=2, stage=0, layers=8, micro_batches=4,
                                    runs=STAGE_RUNS),
}


def emit(event, **fields):
    ref.emit(event, **fields)


# ---- what the fake group cannot give ----------------------------------------------------------------------------


def fill_gathers_with_peer_copies(torch):
    """A fake all-gather leaves its output as allocated; fill it with this rank's input once per peer. Installed before
    Megatron Core is imported (tensor_parallel/mappings.py binds ``all_gather_into_tensor`` at import)."""
    dist = torch.distributed
    original = dist.all_gather_into_tensor

    def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
        work = original(output_tensor, input_tensor, group=group, async_op=async_op)
        n = output_tensor.numel() // max(1, input_tensor.numel())
        if n * input_tensor.numel() == output_tensor.numel() and n > 0:
            with torch.no_grad():
                shape = tuple(input_tensor.shape)
                output_tensor.view(n, *shape).copy_(input_tensor.unsqueeze(0).expand(n, *shape))
        return work

    dist.all_gather_into_tensor = all_gather_into_tensor
    if hasattr(dist, "_all_gather_base"):
        dist._all_gather_base = all_gather_into_tensor


def balance_routing(torch, topk):
    """moe_router_force_load_balancing's random logits (moe_utils.RandomSTE.forward: ``logits.clone().normal_()``)
    replaced by a round-robin pattern in the same clone: token i prefers experts i*k .. i*k+k-1 (mod E)."""
    from megatron.core.transformer.moe import moe_utils

    patterns = {}

    def forward(ctx, logits):
        experts = logits.shape[-1]
        rows = logits.numel() // experts
        key = (rows, experts, logits.dtype, logits.device)
        if key not in patterns:  # made once, in the unmeasured first step: part of every later base
            with torch.no_grad():
                token = torch.arange(rows, device=logits.device).unsqueeze(1) * topk
                expert = torch.arange(experts, device=logits.device).unsqueeze(0)
                patterns[key] = (-((expert - token) % experts)).to(logits.dtype)
        out = logits.clone()
        with torch.no_grad():
            out.view(rows, experts).copy_(patterns[key])
        return out

    moe_utils.RandomSTE.forward = staticmethod(forward)


def norm_without_sp_assertion():
    """WrappedTorchNorm with its sequence-parallel assertion (torch_norm.py line 52 at d98e8a64) read as false: the
    same torch norm on this rank's shard."""
    from megatron.core.transformer import torch_norm

    original = torch_norm.WrappedTorchNorm.__new__

    class ConfigWithoutSP:
        def __init__(self, config):
            self._config = config

        def __getattr__(self, name):
            return False if name == "sequence_parallel" else getattr(self._config, name)

    def new(cls, config, *args, **kwargs):
        return original(cls, ConfigWithoutSP(config), *args, **kwargs)

    torch_norm.WrappedTorchNorm.__new__ = staticmethod(new)


# ---- one shape --------------------------------------------------------------------------------------------------


def world_and_rank(sh):
    """The smallest world that holds the shape (tp*cp*dp == etp*ep*edp per pipeline stage), and the global rank of
    tensor-, expert- and data-parallel rank 0 on the shape's pipeline stage (order tp-cp-ep-dp-pp: pp outermost)."""
    per_stage = math.lcm(sh["tp"] * sh["cp"], sh["ep"] * sh["etp"])
    return per_stage * sh["pp"], per_stage * sh["stage"]


def run_shape(name):
    sh = SHAPES[name]
    warnings.filterwarnings("ignore")
    import torch
    from torch.testing._internal.distributed.fake_pg import FakeStore

    torch.cuda.set_device(0)
    fill_gathers_with_peer_copies(torch)
    world, rank = world_and_rank(sh)
    torch.distributed.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world)
    import megatron.core as megatron
    from megatron.core import parallel_state, tensor_parallel

    parallel_state.initialize_model_parallel(
        tensor_model_parallel_size=sh["tp"], pipeline_model_parallel_size=sh["pp"],
        virtual_pipeline_model_parallel_size=sh["vpp"], context_parallel_size=sh["cp"],
        expert_model_parallel_size=sh["ep"],
        expert_tensor_parallel_size=sh["etp"], create_gloo_process_groups=False)
    tensor_parallel.model_parallel_cuda_manual_seed(SEED)
    norm_without_sp_assertion()
    arch = dict(sh["arch"])
    moe = "num_moe_experts" in arch
    if moe:
        balance_routing(torch, arch["moe_router_topk"])
    activation = arch.pop("activation")
    config = dict(arch, activation_func="torch.nn.functional." + activation,
                  tensor_model_parallel_size=sh["tp"], sequence_parallel=sh["sp"],
                  pipeline_model_parallel_size=sh["pp"], context_parallel_size=sh["cp"],
                  expert_model_parallel_size=sh["ep"],
                  expert_tensor_parallel_size=sh["etp"])
    if sh["pp"] > 1:
        config["pipeline_dtype"] = "torch.bfloat16"
    if sh["vpp"]:
        config["virtual_pipeline_model_parallel_size"] = sh["vpp"]
    request = {"transformer_config": config, "transformer_impl": "local", "seq_length": sh["s"],
               "micro_batch": sh["b"], "warmup": 1, "steps": 2, "seed": SEED}
    cls, kwargs, changes, dropped = ref.prepare_config(torch, request, te_present=False)
    free, total = torch.cuda.mem_get_info()
    emit("environment", shape=name, torch=torch.__version__, device=torch.cuda.get_device_name(0), total_bytes=total,
         megatron_core=ref.megatron_version(megatron),
         megatron_core_path=os.path.dirname(os.path.abspath(megatron.__file__)),
         world_size=world, rank=rank, tp_rank=parallel_state.get_tensor_model_parallel_rank(),
         pp_rank=parallel_state.get_pipeline_model_parallel_rank(),
         ep_rank=parallel_state.get_expert_model_parallel_rank(), parallel=sh, changes=changes, dropped=dropped,
         collectives="simulated: fake process group; all-gathers filled with this rank's input per peer; "
                     "communication buffers not allocated",
         routing=("balanced: moe_router_force_load_balancing with round-robin logits (token i -> experts "
                  "i*k..i*k+k-1 mod E), every peer routing as this rank" if moe else None),
         norm="torch norm built without the sequence-parallel assertion" if sh["sp"] else "torch norm")
    if sh["pp"] > 1:
        measure = lambda run: measure_stage(torch, cls, kwargs, sh, run)  # noqa: E731
    else:
        measure = lambda run: measure_block(torch, cls, kwargs, sh, run)  # noqa: E731
    runs = [(None, sh["runs"][0])] + list(enumerate(sh["runs"]))
    for index, run in runs:  # the first unmeasured: global buffers, the routing pattern, allocator segments
        try:
            figures = measure(run)
        except Exception as e:  # out of memory, or Megatron Core refusing the shape: recorded, the next run goes on
            kind = "out_of_memory" if isinstance(e, torch.cuda.OutOfMemoryError) else "cannot_run"
            emit("error", shape=name, index=index, recompute=run, kind=kind,
                 message="{}: {}".format(type(e).__name__, str(e).splitlines()[0] if str(e) else ""),
                 traceback=traceback.format_exc()[-2000:])
            gc.collect()
            torch.cuda.empty_cache()
            continue
        if index is not None:
            emit("run", shape=name, index=index, recompute=run, **figures)


def build(torch, cls, kwargs, sh, run, post_process, vp_stage=None):
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_decoder_block_spec
    from megatron.core.transformer.transformer_block import TransformerBlock

    torch.manual_seed(SEED)
    config = cls(**ref.with_recompute(kwargs, run))
    spec = get_gpt_decoder_block_spec(config, use_transformer_engine=False, normalization=config.normalization,
                                      vp_stage=vp_stage)
    block = TransformerBlock(config, spec, pre_process=True, post_process=post_process, vp_stage=vp_stage)
    block.cuda().bfloat16()  # as Float16Module converts a training job's model
    block.train()
    return block


def measure_block(torch, cls, kwargs, sh, run):
    """The whole block (final norm included) on one micro-batch: mcore_reference.measure_run with this rank's input,
    [s/tp, b, h] under sequence parallelism."""
    from mbridge_lint_memory import measure_step

    block = build(torch, cls, kwargs, sh, run, post_process=True)
    s, b, h = sh["s"], sh["b"], block.config.hidden_size
    local_s = s // sh["cp"] // (sh["tp"] if sh["sp"] else 1)
    mask = torch.triu(torch.ones(s, s, dtype=torch.bool, device="cuda"), diagonal=1).view(1, 1, s, s)
    figures = []
    for _ in range(3):  # one warm-up, two measured
        torch.cuda.synchronize()
        x = torch.randn(local_s, b, h, dtype=torch.bfloat16, device="cuda", requires_grad=True)
        figures.append(measure_step(lambda: block(x, attention_mask=mask)))
        del x
    params = list(block.parameters())
    keys = ("retained_bytes", "forward_peak_bytes", "backward_peak_bytes")
    out = {k: figures[1][k] for k in keys}
    out.update(steps=[{k: f[k] for k in keys} for f in figures[1:]],
               stable=all(figures[1][k] == figures[2][k] for k in keys),
               input_bytes=local_s * b * h * 2, layers=len(block.layers),
               param_bytes=sum(p.numel() * p.element_size() for p in params),
               peak_reserved_total_bytes=max(f["peak_reserved_total_bytes"] for f in figures))
    del block, params
    gc.collect()
    torch.cuda.empty_cache()
    return out


def measure_stage(torch, cls, kwargs, sh, run):
    """One pipeline stage's model chunks (blocks without a final norm, as mcore_reference.measure_schedule) through
    the schedule's passes on inputs of this rank's shape."""
    vpp = sh["vpp"] or 1
    chunks = [build(torch, cls, kwargs, sh, run, post_process=False, vp_stage=(c if sh["vpp"] else None))
              for c in range(vpp)]
    s, b, h = sh["s"], sh["b"], chunks[0].config.hidden_size
    local_s = s // sh["cp"] // (sh["tp"] if sh["sp"] else 1)
    sched = {"pipeline": sh["pp"], "stage": sh["stage"], "virtual": vpp, "micro_batches": sh["micro_batches"]}
    request = {"schedule": sched, "seq_length": local_s, "micro_batch": b}
    mask = torch.triu(torch.ones(s, s, dtype=torch.bool, device="cuda"), diagonal=1).view(1, 1, s, s)
    ref.run_schedule(torch, chunks, request, mask)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    retained, in_flight, order = ref.run_schedule(torch, chunks, request, mask)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    out = {"retained_bytes": retained, "backward_peak_bytes": peak, "in_flight": in_flight, "order": order,
           "layers": [len(c.layers) for c in chunks], "input_bytes": local_s * b * h * 2,
           "leaked_bytes": torch.cuda.memory_allocated() - base,
           "peak_reserved_total_bytes": int(torch.cuda.max_memory_reserved())}
    del chunks
    gc.collect()
    torch.cuda.empty_cache()
    return out


# ---- the sweep --------------------------------------------------------------------------------------------------


def sweep(names, jobs, out_path):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    bridge = os.path.abspath(os.path.join(HERE, "..", "..", "integrations", "bridge"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (bridge, env.get("PYTHONPATH")) if p)
    pending, running, failed = list(names), [], 0
    with open(out_path, "w") as out:
        while pending or running:
            while pending and len(running) < jobs:
                name = pending.pop(0)
                proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--shape", name], env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                running.append((name, proc, time.time()))
            time.sleep(0.5)
            for item in list(running):
                name, proc, started = item
                if proc.poll() is None:
                    continue
                running.remove(item)
                stdout, stderr = proc.communicate()
                out.write(stdout)
                if proc.returncode != 0:
                    failed += 1
                    out.write(json.dumps({"event": "error", "shape": name, "kind": "crash",
                                          "exit": proc.returncode, "stderr_tail": stderr[-3000:]}) + "\n")
                out.flush()
                print("{:<28} exit {} in {:.0f} s".format(name, proc.returncode, time.time() - started), flush=True)
    return failed


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--list", action="store_true")
    p.add_argument("--shape")
    p.add_argument("--shapes", default=",".join(SHAPES))
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("-o", "--output", default="fake-group-sweep.jsonl")
    args = p.parse_args(argv[1:])
    if args.list:
        for name, sh in SHAPES.items():
            print(name, json.dumps({k: v for k, v in sh.items() if k not in ("arch", "runs")}))
        return 0
    if args.shape:
        sys.path.insert(0, os.path.abspath(os.path.join(HERE, "..", "..", "integrations", "bridge")))
        run_shape(args.shape)
        return 0
    names = [n for n in args.shapes.split(",") if n]
    unknown = [n for n in names if n not in SHAPES]
    if unknown:
        p.error("unknown shapes: " + ", ".join(unknown))
    return 1 if sweep(names, args.jobs, args.output) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
