#!/usr/bin/env python3
"""One rank of an N-rank Megatron Core job on one GPU: the memory of every job shape (issue 37).

Each shape runs in a process of its own as one rank of the shape's world over PyTorch's ``fake`` process-group backend
(fake_group.py says how, and what it supplies that a fake group cannot give: the peers' values, balanced routing,
the norm under sequence parallelism), so Megatron Core's own tensor-, sequence- and expert-parallel layers allocate
exactly the shapes rank r of N allocates, on one GPU. The layers are the local spec's (the GPU machine has no
Transformer Engine) and are measured as ``mcore_reference.py`` measures a block (its ``prepare_config``,
``build_block``'s conversion to bf16, the shared ``measure_step``); a pipeline stage is one step of Megatron Core's own
schedule (``mcore_reference.run_schedule``). Communication buffers (NCCL's) are not allocated by a fake group.

Context parallelism: the local spec's ``DotProductAttention`` refuses it (CP needs Transformer Engine's attention,
``attention.py`` line 382 at d98e8a64), so the CP shapes run Megatron Core's own layers around a stand-in for
Transformer Engine's context-parallel attention (``te_cp_attention.py``: ``cp_comm_type`` p2p, its allocations and
saved tensors modelled from Transformer Engine's source, its kernels not TE's); their ``environment`` line says so.

Rotary embeddings: the ``rope-*`` shapes run the block as GPTModel runs its decoder, Megatron Core's own
``RotaryEmbedding`` passed as ``rotary_pos_emb`` (``rotary_of``; ``apply_rope_fusion`` False, the torch step, the only
one without Transformer Engine). Measured 2026-12-07 on one H100 (34 rows, 42 s; raw output, the command and every row
in ``tests/data/gpu/device-runs/2026-12-07-rope/``), replayed by ``tests/memory/test_fake_group_sweep.cpp``.

Query and key norms: the ``*qknorm*`` shapes turn ``qk_layernorm`` on for ordinary attention, the local spec's torch norm
(``gpt_layer_specs.py`` lines 398, 401 and 447-452 at d98e8a64), with and without rotary embeddings, dense and behind
MoE; under SP the norm stand-in builds them too (they run on the gathered sequence anyway). Measured 2026-12-07 on
one H100 (29 rows, 34 s; ``tests/data/gpu/device-runs/2026-12-07-qknorm/``).

Multi-latent attention: the local spec cannot build it at d98e8a64 (``MultiLatentAttention`` passes ``k_channels``
and ``v_channels`` to a core attention whose local constructor takes neither), so the MLA shapes run Megatron Core's
own ``DotProductAttention`` given them (``mla_local_attention.py``); each MLA ``environment`` line records the
unpatched build's error. The local spec's MLA also needs ``q_lora_rank`` for ``qk_layernorm`` (its standalone q norm,
``gpt_layer_specs.py`` line 428, is refused without one: ``transformer/mla_qk_norm_config.py`` lines 172-173), so the
MoE + MLA shape without query compression has no qk norms.

Hybrid Mamba: the ``mamba-*`` shapes run Megatron Core's own ``HybridStack`` of Mamba layers (``MambaLayer``,
``MambaMixer``, the mixer's gated ``ExtendedRMSNorm``, ``checkpointed_forward`` for full recompute) with the local
linears (``ColumnParallelLinear`` in, ``RowParallelLinear`` out) and torch norms: the only Mamba layer spec,
``hybrid_stack_spec`` (``models/hybrid/hybrid_layer_specs.py`` lines 107-118), needs Transformer Engine, and the stack's
own final norm is ``TENorm`` (``hybrid_block.py`` line 225), so the stack is built without it and the local final norm
follows. The mixer's training path is ``mamba_ssm``'s ``mamba_split_conv1d_scan_combined``: its Triton sources are
carried (``MAMBA_SSM_SOURCE`` names the revision), its compiled convolution replaced by
``causal_conv1d_standin.py`` (retained memory exact, the backward's transient the stand-in's; the ``environment``
line says so). Nemotron 3 Nano's Mamba layer (hidden 2688, 64 heads of 64, state 128, 8 groups, sequence 8192).
Not yet run on a GPU: written 2026-12-07, when no GPU machine could be started; where ``mamba_ssm`` is not
importable the Mamba shapes record ``cannot_run`` errors and the other shapes run as before.

Not measurable here: ``layernorm`` recompute at d98e8a64 (its
``CheckpointWithoutOutput`` reaches Transformer Engine's ``FP8GlobalStateManager``, ``tensor_parallel/random.py``
lines 767-768 with ``self.fp8 = fp8 is not None`` at line 883: RC107), ``moe_act`` (the local spec's
``SequentialMLP`` has no such checkpoint).

Usage (on the GPU machine through ``scripts/device-sweep.sh run``, which sets up the carried sources):
    fake_group_sweep.py --list
    fake_group_sweep.py [--shapes A,B,...] [--part K/N] [--jobs N] [--budget-gib G] [-o OUT.jsonl]
                                           # every shape (or those named; part K of N), one process each
    fake_group_sweep.py --shape NAME       # one shape in this process

The whole sweep is one command, ``fake_group_sweep.py --jobs 3 -o sweep.jsonl``: up to three shapes at a time while
their booked memory (each shape's ``gib``) fits ``--budget-gib`` (70). On one H100 (PyTorch 2.11, Megatron Core
d98e8a64, 2026-12-07) its 35 shapes ran in 188 s of wall time, 12 to 29 s each (562 s of process time): 177 rows,
replayed through the estimate by ``tests/memory/test_fake_group_sweep.cpp``: every dense row (Llama TP 1/2/4/8 with
and without SP, CP 2, rotary embeddings, q and k norms, MLA at TP 1 and TP 2 + SP, PP 2 and 4 stages with and without
VPP 2) within 0.02 MiB, retained and at the peak, in the bytes the tensors asked for; every MoE row within 1 % (0.35 %
at most). Raw output, the command and the time per shape: ``tests/data/gpu/device-runs/2026-12-07-all/`` (the first
whole sweep, 24 shapes in 147 s: ``2026-12-07-sweep/``). Where the whole sweep does not fit
one call of a machine, it runs in parts, ``--part 1/N`` to ``--part N/N`` in sequence.

One JSON object per line: ``sweep`` (first: arguments, shapes, packages, nvidia-smi), ``environment`` (per shape:
versions, world size, rank, the parallel ranks Megatron Core reports, what was supplied), ``run`` (per recompute
option: the shape, the option, its seconds and the figures of ``mcore_reference.measure_run`` or
``measure_schedule``; block rows also in requested bytes: ``retained_requested_bytes``,
``backward_peak_requested_bytes``, since the caching allocator may hand a large request a whole cached block up to
1 MiB larger), ``error`` (a shape or run that could not run, with why), ``shape`` (per shape: exit status, seconds),
``done`` (last: total seconds, failures).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fake_group  # noqa: E402
import mcore_reference as ref  # noqa: E402
import mla_local_attention  # noqa: E402
import te_cp_attention  # noqa: E402
import causal_conv1d_standin  # noqa: E402

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

MLA = {  # a small multi-latent-attention block (DeepSeek-V3's layout: q and kv latents, rotary part, v 128), qk norms
    "activation": "silu", "add_bias_linear": False, "attention_dropout": 0.0, "ffn_hidden_size": 5632,
    "gated_linear_unit": True, "hidden_dropout": 0.0, "hidden_size": 2048, "normalization": "RMSNorm",
    "num_attention_heads": 16, "num_layers": 4, "multi_latent_attention": True, "q_lora_rank": 768,
    "kv_lora_rank": 512, "qk_head_dim": 128, "qk_pos_emb_head_dim": 64, "v_head_dim": 128, "qk_layernorm": True,
}
# MOE16's experts with shared experts behind MLA without query compression (Moonlight's layout). Without qk norms:
# the local spec gives MLA a standalone q norm whenever qk_layernorm is on (gpt_layer_specs.py line 428), which
# QKNormConfigResolver refuses without q_lora_rank (transformer/mla_qk_norm_config.py lines 172-173 and 250);
# the TP + SP shape below compresses the query and norms both latents instead.
MOE_MLA = dict(
    {k: v for k, v in MOE16.items() if k != "num_query_groups"}, multi_latent_attention=True, q_lora_rank=None,
    kv_lora_rank=512, qk_head_dim=128, qk_pos_emb_head_dim=64, v_head_dim=128, qk_layernorm=False,
    moe_shared_expert_intermediate_size=2816)

# Nemotron 3 Nano's Mamba layer (recipes/nemotronh/h100/nemotron_3_nano.py at Bridge 067f987: hidden 2688,
# mamba_num_heads 64, mamba_head_dim 64, mamba_state_dim 128, mamba_num_groups 8, RMSNorm, no biases), four of them.
# The pattern is a HybridModel field, not TransformerConfig's: prepare_config drops it and build_hybrid reads it here.
MAMBA = {
    "activation": "silu", "add_bias_linear": False, "attention_dropout": 0.0, "hidden_dropout": 0.0,
    "hidden_size": 2688, "hybrid_layer_pattern": "MMMM", "mamba_head_dim": 64, "mamba_num_groups": 8,
    "mamba_num_heads": 64, "mamba_state_dim": 128, "normalization": "RMSNorm", "num_attention_heads": 32,
    "num_layers": 4,
}

# LLAMA with rotary position embeddings, run as GPTModel runs its decoder: Megatron Core's own RotaryEmbedding
# (models/gpt/gpt_model.py lines 183-194 at d98e8a64) called for the block's sequence (lines 412-420) and the result
# passed to the block as rotary_pos_emb. position_embedding_type and rotary_percent are GPTModel's (GPTModelConfig's),
# not TransformerConfig fields: prepare_config drops them from the config and rotary_of reads them here.
# apply_rope_fusion stays TransformerConfig's default, False: the torch rotary step of
# models/common/embeddings/rope_utils.py (lines 142-147, reached from line 404), the only one without Transformer
# Engine.
LLAMA_ROPE = dict(LLAMA, position_embedding_type="rope")

NONE = {}
SEL = lambda *labels: {"recompute_granularity": "selective", "recompute_modules": list(labels)}  # noqa: E731
FULL_U1 = {"recompute_granularity": "full", "recompute_method": "uniform", "recompute_num_layers": 1}
FULL_B2 = {"recompute_granularity": "full", "recompute_method": "block", "recompute_num_layers": 2}

DENSE_RUNS = [NONE, SEL("core_attn"), SEL("mlp"), SEL("core_attn", "mlp"), FULL_U1, FULL_B2]
MOE_RUNS = [NONE, SEL("moe"), SEL("core_attn"), SEL("core_attn", "moe"), FULL_U1]
STAGE_RUNS = [NONE, SEL("core_attn"), FULL_U1]
CP_RUNS = [NONE, SEL("core_attn"), SEL("mlp"), FULL_U1]
MLA_RUNS = [NONE, SEL("core_attn"), SEL("mla_up_proj"), SEL("mlp"), SEL("core_attn", "mla_up_proj"),
            SEL("core_attn", "mla_up_proj", "mlp"), FULL_U1, FULL_B2]
MAMBA_RUNS = [NONE, FULL_U1, FULL_B2]  # no selective label reaches a Mamba layer at d98e8a64
MOE_MLA_RUNS = [NONE, SEL("moe"), SEL("shared_experts"), SEL("mla_up_proj"), SEL("core_attn"),
                SEL("core_attn", "mla_up_proj", "moe"), FULL_U1]


def shape(arch, tp=1, sp=False, cp=1, ep=1, etp=1, pp=1, vpp=None, stage=0, layers=None, runs=None, s=4096, b=1,
          micro_batches=None, gib=20, **extra):
    """A shape; ``gib`` is what the scheduler books for its process (GiB of device memory, a little above the peak
    reserved that an earlier run of it recorded): not a figure any test reads."""
    a = dict(arch, **extra)
    if layers is not None:
        a["num_layers"] = layers
    return {"arch": a, "tp": tp, "sp": sp, "cp": cp, "ep": ep, "etp": etp, "pp": pp, "vpp": vpp, "stage": stage,
            "s": s, "b": b, "micro_batches": micro_batches, "gib": gib,
            "runs": runs or (MOE_RUNS if "num_moe_experts" in a else DENSE_RUNS)}


SHAPES = {
    # Dense: tensor parallelism with and without sequence parallelism (TP 8: one query group per rank).
    "dense-tp1": shape(LLAMA, gib=29),
    "dense-tp2": shape(LLAMA, tp=2, gib=16),
    "dense-tp2-sp": shape(LLAMA, tp=2, sp=True, gib=15),
    "dense-tp4-sp": shape(LLAMA, tp=4, sp=True, gib=8),
    "dense-tp8-sp": shape(LLAMA, tp=8, sp=True, gib=5),
    # Context parallelism 2: Megatron Core's layers around a stand-in for Transformer Engine's p2p ring attention.
    "dense-tp1-cp2": shape(LLAMA, cp=2, runs=CP_RUNS, gib=7),
    "dense-tp2-sp-cp2": shape(LLAMA, tp=2, sp=True, cp=2, runs=CP_RUNS, gib=5),
    # MoE: expert parallelism with ETP 1 (16 experts: 8 per rank at EP 2, 2 at EP 8), with TP 2 + SP beside it.
    "moe-ep1": shape(MOE16, gib=16),
    "moe-ep2": shape(MOE16, ep=2, gib=15),
    "moe-ep8": shape(MOE16, ep=8, gib=14),
    "moe-tp2-sp-ep2": shape(MOE16, tp=2, sp=True, ep=2, gib=9),
    "moe-tp2-sp-ep8": shape(MOE16, tp=2, sp=True, ep=8, gib=9),
    "moe-ep2-allgather": shape(MOE16, ep=2, runs=[NONE, SEL("moe"), FULL_U1], moe_token_dispatcher_type="allgather",
                               gib=15),
    # Multi-latent attention, dense and behind MoE with shared experts, with TP + SP and EP.
    "mla-tp1": shape(MLA, runs=MLA_RUNS, gib=16),
    "mla-tp2-sp": shape(MLA, tp=2, sp=True, runs=MLA_RUNS, gib=9),
    "moe-mla-ep2": shape(MOE_MLA, ep=2, runs=MOE_MLA_RUNS, gib=16),
    "moe-mla-tp2-sp-ep4": shape(MOE_MLA, tp=2, sp=True, ep=4, runs=MOE_MLA_RUNS, gib=10, q_lora_rank=512,
                                qk_layernorm=True),
    # Pipeline stages as Megatron Core's schedule runs them (1F1B; interleaved with VPP), TP 2 or 4 + SP.
    "pp2-stage0-tp2-sp": shape(LLAMA, tp=2, sp=True, pp=2, stage=0, layers=8, micro_batches=4, runs=STAGE_RUNS,
                               gib=24),
    "pp2-stage1-tp2-sp": shape(LLAMA, tp=2, sp=True, pp=2, stage=1, layers=8, micro_batches=4, runs=STAGE_RUNS,
                               gib=16),
    "pp4-stage1-tp4-sp": shape(LLAMA, tp=4, sp=True, pp=4, stage=1, layers=16, micro_batches=8, runs=STAGE_RUNS,
                               gib=17),
    "pp2-vpp2-stage0-tp2-sp": shape(LLAMA, tp=2, sp=True, pp=2, vpp=2, stage=0, layers=8, micro_batches=4,
                                    runs=STAGE_RUNS, gib=28),
    "pp4-vpp2-stage0-tp4-sp": shape(LLAMA, tp=4, sp=True, pp=4, vpp=2, stage=0, layers=16, micro_batches=8,
                                    runs=STAGE_RUNS, gib=30),
    "pp4-vpp2-stage3-tp4-sp": shape(LLAMA, tp=4, sp=True, pp=4, vpp=2, stage=3, layers=16, micro_batches=8,
                                    runs=STAGE_RUNS, gib=16),
    # Rotary position embeddings (LLAMA_ROPE), every dense recompute option: several query groups per rank (TP 1,
    # TP 2 + SP), one group per rank (TP 8 + SP; with micro-batch 2 and half the head dimension rotated, rotary_percent
    # 0.5), multi-head attention (one query head per group), and context parallelism 2 (the stand-in of Transformer
    # Engine's attention, whose checkpoint then holds the rotary step's outputs).
    "rope-tp1": shape(LLAMA_ROPE, gib=29),
    "rope-tp2-sp": shape(LLAMA_ROPE, tp=2, sp=True, gib=15),
    "rope-tp8-sp": shape(LLAMA_ROPE, tp=8, sp=True, gib=5),
    "rope-tp8-sp-b2-half": shape(LLAMA_ROPE, tp=8, sp=True, b=2, rotary_percent=0.5, gib=9),
    "rope-mha-tp2": shape(LLAMA_ROPE, tp=2, num_query_groups=32, gib=18),
    "rope-tp1-cp2": shape(LLAMA_ROPE, cp=2, runs=CP_RUNS, gib=7),
    # Query and key norms on ordinary attention (qk_layernorm; the local spec's torch norm, gpt_layer_specs.py lines
    # 398, 401 and 447-452 at d98e8a64), before the rotary step (attention.py lines 1932-1936, then 1508 and 1527):
    # several query groups per rank (TP 1, TP 2 + SP: the query a reshaped copy), one group per rank (TP 8 + SP: the
    # query a view of the QKV output), without rotary embeddings (the norms' outputs go to the core attention), and
    # behind MoE (Qwen3's MoE layout: rotary, qk norms, routed experts). Under SP the q and k norms are built by the
    # same stand-in as the layer norms (fake_group.norm_without_sp_assertion); they see the gathered sequence anyway.
    "rope-qknorm-tp1": shape(LLAMA_ROPE, qk_layernorm=True, gib=30),
    "rope-qknorm-tp2-sp": shape(LLAMA_ROPE, tp=2, sp=True, qk_layernorm=True, gib=16),
    "rope-qknorm-tp8-sp": shape(LLAMA_ROPE, tp=8, sp=True, qk_layernorm=True, gib=6),
    "qknorm-tp2-sp": shape(LLAMA, tp=2, sp=True, qk_layernorm=True, gib=16),
    "moe-rope-qknorm-ep2": shape(MOE16, ep=2, position_embedding_type="rope", qk_layernorm=True, gib=16),
    # Hybrid Mamba (MAMBA): Megatron Core's HybridStack of Mamba layers with the local linears, at TP 1 and TP 2 + SP.
    "mamba-tp1": shape(MAMBA, s=8192, runs=MAMBA_RUNS, gib=10),
    "mamba-tp2-sp": shape(MAMBA, tp=2, sp=True, s=8192, runs=MAMBA_RUNS, gib=6),
}


def hybrid_pattern(sh):
    """The shape's hybrid layer pattern (a HybridStack is built for it), or None for a GPT block."""
    return sh["arch"].get("hybrid_layer_pattern")


def emit(event, **fields):
    ref.emit(event, **fields)


# ---- one shape --------------------------------------------------------------------------------------------------


def run_shape(name):
    sh = SHAPES[name]
    warnings.filterwarnings("ignore")
    import torch

    fake_group.fill_gathers_with_peer_copies(torch)
    if hybrid_pattern(sh):
        causal_conv1d_standin.install(torch)  # before mamba_ssm and the Mamba mixer import it
    import megatron.core as megatron

    placed = fake_group.init(torch, sh, SEED)
    arch = dict(sh["arch"])
    moe = "num_moe_experts" in arch
    if moe:
        fake_group.balance_routing(torch, arch["moe_router_topk"])
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
               "micro_batch": sh["b"], "warmup": 1, "steps": 2, "seed": SEED, "parallel": sh}
    cls, kwargs, changes, dropped = ref.prepare_config(torch, request, te_present=False)
    extra = {}
    if sh["cp"] > 1:
        extra["attention"] = te_cp_attention.STANDIN
    if arch.get("multi_latent_attention"):
        # The local spec as d98e8a64 builds it, once: the error it stops at is part of the record.
        try:
            build(torch, cls, kwargs, sh, sh["runs"][0], post_process=True, patch_mla=False)
            unpatched = None
        except Exception as e:
            unpatched = "{}: {}".format(type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        gc.collect()
        torch.cuda.empty_cache()
        extra["mla_core_attention"] = {"unpatched_error": unpatched, "built": mla_local_attention.STANDIN}
    if arch.get("position_embedding_type") == "rope" and not arch.get("multi_latent_attention"):
        extra["rotary"] = ("Megatron Core's RotaryEmbedding as GPTModel builds and calls it (gpt_model.py lines 183-194 "
                           "and 412-420): rotary_pos_emb [s/cp, 1, 1, kv_channels x rotary_percent] fp32, from its "
                           "lru_cache after the first step; apply_rope_fusion {}: rope_utils.py's torch rotary step"
                           .format(kwargs.get("apply_rope_fusion", False)))
    if hybrid_pattern(sh):
        extra["mamba"] = {"mamba_ssm": os.environ.get("MAMBA_SSM_SOURCE", "not named (MAMBA_SSM_SOURCE unset)"),
                          "causal_conv1d": causal_conv1d_standin.DESCRIPTION,
                          "spec": "HybridStack of MambaLayer(norm WrappedTorchNorm, MambaMixer(ColumnParallelLinear, "
                                  "RowParallelLinear), get_bias_dropout_add); final norm WrappedTorchNorm"}
    free, total = torch.cuda.mem_get_info()
    emit("environment", shape=name, torch=torch.__version__, device=torch.cuda.get_device_name(0), total_bytes=total,
         megatron_core=ref.megatron_version(megatron),
         megatron_core_path=os.path.dirname(os.path.abspath(megatron.__file__)),
         parallel=sh, changes=changes, dropped=dropped, **placed, **fake_group.describe(moe, sh["sp"]), **extra)
    if sh["pp"] > 1:
        measure = lambda run: measure_stage(torch, cls, kwargs, sh, run)  # noqa: E731
    else:
        measure = lambda run: measure_block(torch, cls, kwargs, sh, run)  # noqa: E731
    runs = [(None, sh["runs"][0])] + list(enumerate(sh["runs"]))
    for index, run in runs:  # the first unmeasured: global buffers, the routing pattern, allocator segments
        started = time.time()
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
            emit("run", shape=name, index=index, recompute=run, seconds=round(time.time() - started, 2), **figures)


PACKAGES = ("torch", "triton", "einops", "mamba_ssm", "causal_conv1d", "transformer_engine", "apex")


def packages():
    """Whether each package the local spec or a Mamba layer could use is importable here, and its version."""
    import importlib.metadata
    import importlib.util

    out = {}
    for name in PACKAGES:
        try:
            present = importlib.util.find_spec(name) is not None
        except Exception:
            present = False
        version = None
        if present:
            for dist in (name, name.replace("_", "-")):
                try:
                    version = importlib.metadata.version(dist)
                    break
                except importlib.metadata.PackageNotFoundError:
                    continue
        # Importable without an installed distribution: sources on PYTHONPATH (mamba_ssm's Triton kernels).
        out[name] = (version or "importable from sources, no installed distribution") if present else None
    return out


def build(torch, cls, kwargs, sh, run, post_process, vp_stage=None, patch_mla=True):
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_decoder_block_spec
    from megatron.core.transformer.transformer_block import TransformerBlock

    torch.manual_seed(SEED)
    config = cls(**ref.with_recompute(kwargs, run))
    if hybrid_pattern(sh):
        return build_hybrid(torch, config, hybrid_pattern(sh))
    spec = get_gpt_decoder_block_spec(config, use_transformer_engine=False, normalization=config.normalization,
                                      vp_stage=vp_stage)
    if sh["cp"] > 1:
        te_cp_attention.install(torch, spec)
    if getattr(config, "multi_latent_attention", False) and patch_mla:
        mla_local_attention.install(spec)
    block = TransformerBlock(config, spec, pre_process=True, post_process=post_process, vp_stage=vp_stage)
    block.cuda().bfloat16()  # as Float16Module converts a training job's model
    block.train()
    return block


def build_hybrid(torch, config, pattern):
    """Megatron Core's HybridStack for ``pattern`` (Mamba layers only), local linears and torch norms, then the local
    final norm: what ``hybrid_stack_spec`` builds with Transformer Engine, but for the linears and norms."""
    from megatron.core.fusions.fused_bias_dropout import get_bias_dropout_add
    from megatron.core.models.hybrid.hybrid_block import HybridStack, HybridStackSubmodules
    from megatron.core.process_groups_config import ProcessGroupCollection
    from megatron.core.ssm.mamba_layer import MambaLayer, MambaLayerSubmodules
    from megatron.core.ssm.mamba_mixer import MambaMixer, MambaMixerSubmodules
    from megatron.core.tensor_parallel import ColumnParallelLinear, RowParallelLinear
    from megatron.core.transformer.spec_utils import ModuleSpec
    from megatron.core.transformer.torch_norm import WrappedTorchNorm

    if set(pattern) != {"M"}:
        raise ValueError("build_hybrid builds Mamba layers only, not {!r}".format(pattern))
    mamba = ModuleSpec(module=MambaLayer, submodules=MambaLayerSubmodules(
        norm=WrappedTorchNorm,
        mixer=ModuleSpec(module=MambaMixer, submodules=MambaMixerSubmodules(in_proj=ColumnParallelLinear,
                                                                           out_proj=RowParallelLinear)),
        mamba_bda=get_bias_dropout_add))
    pgs = ProcessGroupCollection.use_mpu_process_groups(required_pgs=["tp", "cp", "pp"])

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.config = config
            self.stack = HybridStack(config, HybridStackSubmodules(mamba_layer=mamba), pre_process=True,
                                     layer_type_list=list(pattern), post_layer_norm=False, post_process=True,
                                     pg_collection=pgs)
            self.layers = self.stack.layers
            self.final_norm = WrappedTorchNorm(config=config, hidden_size=config.hidden_size,
                                               eps=config.layernorm_epsilon)

        def forward(self, x, attention_mask=None, **kwargs):
            return self.final_norm(self.stack(x, attention_mask=None))

    block = Block()
    block.cuda().bfloat16()  # as Float16Module converts a training job's model
    block.train()
    return block


def measure_block(torch, cls, kwargs, sh, run):
    """The whole block (final norm included) on one micro-batch: mcore_reference.measure_run with this rank's input,
    [s/tp, b, h] under sequence parallelism."""
    from mbridge_lint_memory import measure_step

    block = build(torch, cls, kwargs, sh, run, post_process=True)
    rotary = rotary_of(sh, block.config)
    s, b, h = sh["s"], sh["b"], block.config.hidden_size
    local_s = s // sh["cp"] // (sh["tp"] if sh["sp"] else 1)
    mask = None  # a Mamba stack takes none
    if not hybrid_pattern(sh):
        mask = torch.triu(torch.ones(s, s, dtype=torch.bool, device="cuda"), diagonal=1).view(1, 1, s, s)

    def forward():
        if rotary is None:
            return block(x, attention_mask=mask)
        # GPTModel._preprocess (gpt_model.py lines 412-420): the sequence the block sees, times TP under sequence
        # parallelism and times CP (rotary_pos_embedding.py get_rotary_seq_len), through the module's lru_cache.
        seq = rotary.get_rotary_seq_len(None, block, x, block.config, None)
        return block(x, attention_mask=mask, rotary_pos_emb=rotary(seq, packed_seq=False, cp_group=None))

    figures = []
    for _ in range(3):  # one warm-up, two measured
        torch.cuda.synchronize()
        x = torch.randn(local_s, b, h, dtype=torch.bfloat16, device="cuda", requires_grad=True)
        figures.append(measure_requested(torch, measure_step, forward))
        del x
    params = list(block.parameters())
    keys = ("retained_bytes", "forward_peak_bytes", "backward_peak_bytes", "retained_requested_bytes",
            "backward_peak_requested_bytes")
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


def rotary_of(sh, config):
    """GPTModel's rotary embedding for a shape whose arch says position_embedding_type rope (models/gpt/gpt_model.py
    lines 183-194 at d98e8a64: kv_channels, rotary_percent, rotary_interleaved, rotary_base, the CP group), None
    otherwise; multi-latent attention builds its own inside the layer."""
    arch = sh["arch"]
    if arch.get("position_embedding_type") != "rope" or getattr(config, "multi_latent_attention", False):
        return None
    from megatron.core import parallel_state
    from megatron.core.models.common.embeddings.rotary_pos_embedding import RotaryEmbedding

    return RotaryEmbedding(kv_channels=config.kv_channels, rotary_percent=arch.get("rotary_percent", 1.0),
                           rotary_interleaved=config.rotary_interleaved, seq_len_interpolation_factor=None,
                           rotary_base=arch.get("rotary_base", 10000), rope_scaling=False,
                           use_cpu_initialization=config.use_cpu_initialization,
                           cp_group=parallel_state.get_context_parallel_group())


def measure_requested(torch, measure_step, forward):
    """measure_step's figures, and the same two in the bytes the tensors asked for (the allocator's
    ``requested_bytes``): a large request can be given a whole cached block up to 1 MiB larger, which PyTorch's
    caching allocator does not split (c10/cuda/CUDACachingAllocator.cpp, ``should_split``), so allocated bytes can
    exceed the tensors' own by the blocks' rest; None where this PyTorch does not count them."""
    def requested(kind):
        return torch.cuda.memory_stats().get("requested_bytes.all." + kind)

    seen = {}

    def forward_counted():
        out = forward()
        seen["retained"] = requested("current")
        return out

    torch.cuda.synchronize()
    base = requested("current")
    figures = measure_step(forward_counted)
    peak = requested("peak")  # reset by measure_step after the forward: the backward's
    known = base is not None and peak is not None
    figures["retained_requested_bytes"] = seen["retained"] - base if known else None
    figures["backward_peak_requested_bytes"] = peak - base if known else None
    return figures


def measure_stage(torch, cls, kwargs, sh, run):
    """One step of the pipeline stage under Megatron Core's own schedule (mcore_reference.measure_schedule): its
    model chunks are blocks without a final norm, inputs of this rank's shape."""
    sched = {"pipeline": sh["pp"], "stage": sh["stage"], "virtual": sh["vpp"] or 1,
             "micro_batches": sh["micro_batches"]}
    chunks = ref.build_stage(torch, cls, ref.with_recompute(kwargs, run), False, SEED, sched)
    chunks = [block for _, block in chunks]
    request = {"schedule": sched, "seq_length": sh["s"], "micro_batch": sh["b"],
               "input_rows": fake_group.local_rows(sh, sh["s"])}
    out = ref.measure_schedule(torch, chunks, request, None, "")
    out.update(layers=[len(c.layers) for c in chunks], input_bytes=request["input_rows"] * sh["b"] *
               chunks[0].config.hidden_size * 2)
    del chunks
    gc.collect()
    torch.cuda.empty_cache()
    return out


# ---- the sweep --------------------------------------------------------------------------------------------------


def part_of(names, part):
    """Part K of N (``K/N``): every N-th shape from the K-th, so each part mixes large and small shapes."""
    k, n = (int(x) for x in part.split("/"))
    if not 1 <= k <= n:
        raise ValueError("--part K/N needs 1 <= K <= N, not {}".format(part))
    return names[k - 1::n]


def device_facts():
    """The GPU, its driver and the Python packages, for the sweep's first line."""
    facts = {"packages": packages()}
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        facts["nvidia_smi"] = smi.stdout.strip()
    except Exception as e:  # no nvidia-smi: the environment lines still name the device
        facts["nvidia_smi"] = "unavailable: {}".format(e)
    return facts


def sweep(names, jobs, budget_gib, out_path, argv):
    """Each shape in a process of its own, up to ``jobs`` at once while the shapes' booked memory (``gib``) fits in
    ``budget_gib``; one line per shape with its exit status and seconds, and one at the end with the total."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    bridge = os.path.abspath(os.path.join(HERE, "..", "..", "integrations", "bridge"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (bridge, env.get("PYTHONPATH")) if p)
    pending, running, failed = list(names), [], 0
    began = time.time()
    with open(out_path, "w") as out:
        out.write(json.dumps({"event": "sweep", "argv": argv, "shapes": names, "jobs": jobs, "budget_gib": budget_gib,
                              **device_facts()}) + "\n")
        while pending or running:
            booked = sum(SHAPES[n]["gib"] for n, _, _ in running)
            for name in list(pending):
                if len(running) >= jobs:
                    break
                if running and booked + SHAPES[name]["gib"] > budget_gib:
                    continue
                pending.remove(name)
                booked += SHAPES[name]["gib"]
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
                seconds = time.time() - started
                out.write(stdout)
                if proc.returncode != 0:
                    failed += 1
                    out.write(json.dumps({"event": "error", "shape": name, "kind": "crash",
                                          "exit": proc.returncode, "stderr_tail": stderr[-3000:]}) + "\n")
                out.write(json.dumps({"event": "shape", "shape": name, "exit": proc.returncode,
                                      "seconds": round(seconds, 1), "started_s": round(started - began, 1)}) + "\n")
                out.flush()
                print("{:<28} exit {} in {:.0f} s".format(name, proc.returncode, seconds), flush=True)
        total = time.time() - began
        out.write(json.dumps({"event": "done", "seconds": round(total, 1), "failed": failed}) + "\n")
    print("{} shapes in {:.0f} s, {} failed".format(len(names), total, failed), flush=True)
    return failed


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--list", action="store_true")
    p.add_argument("--shape")
    p.add_argument("--shapes", default=",".join(SHAPES))
    p.add_argument("--part", help="K/N: run part K of N of the shapes (the whole sweep is parts 1..N in sequence)")
    p.add_argument("--jobs", type=int, default=3)
    p.add_argument("--budget-gib", type=float, default=70.0,
                   help="device memory the running shapes may book together (each shape's gib)")
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
    if args.part:
        names = part_of(names, args.part)
    return 1 if sweep(names, args.jobs, args.budget_gib, args.output, argv[1:]) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
