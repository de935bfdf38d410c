#!/usr/bin/env python3
"""Megatron Core reference for `mbridge-lint gpu-check --reference mcore`.

Builds the requested layers with the installed Megatron Core on one GPU, runs the control and every candidate
recompute setting, and measures device memory the way the memory estimator predicts it (see gpu_check/README.md):
after warm-up steps, per step a fresh input, then

    base = memory_allocated()                    # parameters, their gradients, the input, the previous step's leftovers
    out = block(x, attention_mask)               # retained = allocated - base; forward peak
    out.backward(randn_like(out))                # backward peak (peak statistics reset after forward)

With ``parallel`` in the request (``tp``, ``sp``, ``cp``, ``ep``, ``etp``, ``pp``, ``vpp``, ``stage``), the process is
one rank of the job's world over PyTorch's ``fake`` process group (fake_group.py): Megatron Core's own parallel layers
allocate what that rank allocates, collectives move no data, and what the fake group cannot give is supplied and named
in the ``environment`` event (``collectives``, ``routing``, ``norm``). The input is this rank's shard of the sequence.

With a ``schedule`` in the request (``pipeline``, ``stage``, ``virtual``, ``micro_batches``, ``group``,
``deallocate_outputs``, ``chunk_layers``), each run is one step of the pipeline stage under Megatron Core's own
schedule (pipeline_parallel/schedules.py ``get_forward_backward_func``: 1F1B, or interleaved over ``virtual`` model
chunks of ``chunk_layers`` layers), point-to-point made no-ops by the fake group; the last stage's loss hands the
block output a gradient of its shape. Its ``run`` event then has ``retained_bytes`` (allocated above the base at the
first backward, when the most micro-batches are in flight), ``backward_peak_bytes`` (the peak over the whole step),
``in_flight`` (forwards held at that point) and ``order`` (the passes, ``F`` with the chunk, or ``B``).

Usage: ``python3 mcore_reference.py REQUEST.json`` (``-`` reads standard input). The request is written by
mbridge-lint (cli/gpu_check_command.cpp): ``protocol`` 2, ``transformer_config`` (TransformerConfig keyword arguments
with the job's parallel sizes, without recompute fields), ``transformer_impl``, ``seq_length``, ``micro_batch``,
``parallel``, ``runs`` (each a role and its recompute fields), ``warmup``, ``steps``, ``seed``.

Standard output carries one JSON object per line, each with an ``event``:

* ``environment``: versions (Python, PyTorch, CUDA, Megatron Core, Transformer Engine or null), the GPU, the spec
  built (``local`` or ``transformer_engine``), ``facts`` the estimator needs about what was built, ``changes`` made to
  the request's fields (with why) and ``dropped`` fields this Megatron Core does not know;
* ``step``: progress of a run (``index``, ``done``, ``total``);
* ``run``: one run's figures (``retained_bytes``, ``forward_peak_bytes``, ``backward_peak_bytes`` of the first measured
  step, ``step_ms`` median, ``steps_ms``, ``param_bytes``, ``grad_bytes``, ``input_bytes``, ``leaked_bytes``,
  ``stable``, and ``steps``: each measured step's three figures);
* ``error``: why it cannot run (``kind``: ``missing_torch``, ``missing_megatron``, ``no_gpu``, ``cannot_build``,
  ``out_of_memory``, ``bad_request``) and a plain ``message``; the exit code is then 2;
* ``done``: the last line of a complete run (exit code 0).
"""

from __future__ import annotations

import dataclasses
import enum
import gc
import importlib
import importlib.util
import json
import os
import platform
import statistics
import sys
import tempfile
import traceback
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_group  # noqa: E402

PROTOCOL = 2
# The measurement core is shared with the Bridge helper (integrations/bridge/mbridge_lint_memory).
_BRIDGE_HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "integrations", "bridge")


class CannotRun(Exception):
    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind
        self.message = message


def emit(event, **fields):
    fields["event"] = event
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


# ---- environment -----------------------------------------------------------------------------------------------


def import_stack():
    """Imports PyTorch and Megatron Core; names everything that is missing and how to get it."""
    missing = []
    torch = None
    try:
        import torch  # noqa: F401
    except Exception as e:  # ImportError, or a broken install raising something else
        missing.append(("missing_torch", "PyTorch is not importable by {} ({}): install it (pip install torch, a CUDA "
                        "build) or pass --python with an interpreter that has it".format(sys.executable, e)))
    megatron = None
    if torch is not None:
        try:
            import megatron.core as megatron  # noqa: F401
        except Exception as e:
            missing.append(("missing_megatron", "Megatron Core is not importable by {} ({}): pip install megatron-core, "
                            "or put a Megatron-LM checkout on PYTHONPATH".format(sys.executable, e)))
    else:  # Megatron Core imports PyTorch: only whether it is there can be told
        try:
            present = importlib.util.find_spec("megatron.core") is not None
        except Exception:
            present = False
        if not present:
            missing.append(("missing_megatron", "Megatron Core is not importable either: pip install megatron-core, or "
                            "put a Megatron-LM checkout on PYTHONPATH"))
    if missing:
        raise CannotRun(missing[0][0], "; ".join(m for _, m in missing))
    if not torch.cuda.is_available() or torch.cuda.device_count() < 1:
        raise CannotRun("no_gpu", "PyTorch {} sees no CUDA GPU (built for CUDA {}): run on a machine with an NVIDIA GPU "
                        "and a CUDA build of PyTorch".format(torch.__version__, getattr(torch.version, "cuda", None)))
    return torch, megatron


def optional_version(module_name):
    try:
        module = importlib.import_module(module_name)
    except Exception:
        return None
    return str(getattr(module, "__version__", "unknown"))


def megatron_version(megatron):
    version = getattr(megatron, "__version__", None)
    if version is None:
        try:
            from megatron.core import package_info

            version = package_info.__version__
        except Exception:
            version = "unknown"
    return str(version)


# ---- the configuration -----------------------------------------------------------------------------------------


def resolve_dotted(path):
    """`torch.nn.functional.silu` -> the object, or None."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:
            continue
        try:
            for name in parts[cut:]:
                obj = getattr(obj, name)
            return obj
        except AttributeError:
            return None
    return None


def convert_value(field, value):
    """A request value as TransformerConfig wants it. Returns (ok, value, why-not)."""
    if isinstance(value, dict) and "_target_" in value:
        if value.get("_call_", True) and len(value) > 1 + ("_call_" in value):
            return False, None, "a call ({}) the helper does not make".format(value["_target_"])
        obj = resolve_dotted(value["_target_"])
        if obj is None:
            return False, None, "{} is not importable".format(value["_target_"])
        return True, obj, None
    default = field.default if field.default is not dataclasses.MISSING else None
    if isinstance(value, str):
        if isinstance(default, enum.Enum):
            enum_type = type(default)
            for member in enum_type:
                if value in (member.name, str(member.value)):
                    return True, member, None
            return False, None, "{} is not a {}".format(value, enum_type.__name__)
        if value.startswith("torch."):
            obj = resolve_dotted(value)
            if obj is None:
                return False, None, "{} is not importable".format(value)
            return True, obj, None
        if field.name.endswith("_func") or field.name.endswith("init_method"):
            for module in ("torch.nn.functional", "megatron.core.activations", "megatron.core.fusions.fused_bias_gelu"):
                obj = resolve_dotted(module + "." + value)
                if obj is not None:
                    return True, obj, None
            return False, None, "{} names no known function".format(value)
    return True, value, None


def fused_softmax_kernels_present():
    return all(importlib.util.find_spec(name) is not None
               for name in ("scaled_upper_triang_masked_softmax_cuda", "scaled_masked_softmax_cuda", "scaled_softmax_cuda"))


def prepare_config(torch, request, te_present):
    """TransformerConfig keyword arguments of the request, converted, with the helper's own settings applied.
    Returns (config class, kwargs, changes, dropped)."""
    from megatron.core.transformer import transformer_config as tc

    raw = dict(request["transformer_config"])
    cls = tc.TransformerConfig
    if raw.get("multi_latent_attention") and hasattr(tc, "MLATransformerConfig"):
        cls = tc.MLATransformerConfig
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    kwargs, changes, dropped = {}, [], []
    for name, value in raw.items():
        if name not in fields:
            dropped.append({"field": name, "why": "not a field of this Megatron Core's {}".format(cls.__name__)})
            continue
        ok, converted, why = convert_value(fields[name], value)
        if not ok:
            dropped.append({"field": name, "why": why})
            continue
        kwargs[name] = converted

    def force(name, value, why):
        if name not in fields:
            return
        before = kwargs.get(name, "default")
        if name in kwargs and kwargs[name] == value:
            return
        kwargs[name] = value
        if before != "default" or fields[name].default != value:
            changes.append({"field": name, "from": describe(before), "to": describe(value), "why": why})

    # One GPU, one process: the request already holds one rank's shapes.
    force("bf16", True, "measured in bf16")
    force("fp16", False, "measured in bf16")
    force("params_dtype", torch.bfloat16, "measured in bf16")
    for name in ("fp8", "fp4"):
        if kwargs.get(name):
            force(name, None, "low-precision training is not measured")
    force("gradient_accumulation_fusion", False, "no distributed-optimizer gradient buffers on a bare block")
    parallel = request.get("parallel") or {}
    if parallel.get("tp", 1) == 1:
        force("distribute_saved_activations", False, "needs tensor parallelism")
    if "parallel" in request and kwargs.get("num_moe_experts"):
        # The peers of a fake group route as this rank does, balanced (fake_group.balance_routing).
        force("moe_router_force_load_balancing", True, "routing is balanced: every simulated peer routes as this rank")
    # The stage's own schedule settings (the request carries them with the schedule, not among the fields).
    sched = request.get("schedule")
    if sched:
        settings = {"pipeline_dtype": torch.bfloat16, "deallocate_pipeline_outputs": bool(sched.get("deallocate_outputs"))}
        if int(sched.get("virtual", 1)) > 1:
            settings["microbatch_group_size_per_vp_stage"] = int(sched.get("group") or sched["pipeline"])
        kwargs.update({k: v for k, v in settings.items() if k in fields})
    force("moe_layer_recompute", False, "the recompute fields of each run say what to recompute")
    if kwargs.get("masked_softmax_fusion", fields.get("masked_softmax_fusion") and fields["masked_softmax_fusion"].default):
        if not fused_softmax_kernels_present():
            force("masked_softmax_fusion", False, "Megatron's fused softmax kernels are not installed")
    if not te_present:
        for name in ("moe_permute_fusion", "moe_router_fusion", "tp_comm_overlap", "use_te_rng_tracker",
                     "use_te_activation_func", "fp8_param", "apply_rope_fusion", "persist_layer_norm",
                     "memory_efficient_layer_norm"):
            if kwargs.get(name):
                force(name, False, "needs Transformer Engine, which is not installed")
    if kwargs.pop("enable_cuda_graph", False):  # deprecated spelling of cuda_graph_impl local (transformer_config.py)
        force("cuda_graph_impl", "local", "enable_cuda_graph is the deprecated spelling of cuda_graph_impl local")
    impl = kwargs.get("cuda_graph_impl", "none")
    if impl == "transformer_engine" and not te_present:
        force("cuda_graph_impl", "none", "Transformer Engine's graphs need Transformer Engine, which is not installed")
    elif impl not in ("none", "local", None, "transformer_engine"):
        force("cuda_graph_impl", "none", "only per-layer graphs (cuda_graph_impl local) are measured")
    return cls, kwargs, changes, dropped


def local_graphs(kwargs):
    """Whether the layers run Megatron Core's own CUDA graphs (transformer/cuda_graphs.py CudaGraphManager)."""
    return kwargs.get("cuda_graph_impl") == "local"


def seed_model_parallel(torch, seed, graphs):
    """Megatron Core's RNG tracker; CudaGraphManager asserts a graph-safe one (cuda_graphs.py line 1913: Transformer
    Engine's, or CudaRNGStatesTracker with use_cudagraphable_rng), so graphed runs reset it to that."""
    from megatron.core import tensor_parallel

    if graphs:
        tensor_parallel.model_parallel_cuda_manual_seed(seed, use_cudagraphable_rng=True, force_reset_rng=True)
    else:
        tensor_parallel.model_parallel_cuda_manual_seed(seed)


def describe(value):
    if isinstance(value, enum.Enum):
        return value.name
    if callable(value) or type(value).__module__.startswith("torch"):
        return "{}.{}".format(getattr(value, "__module__", "") or "", getattr(value, "__name__", str(value)))
    return value


def with_recompute(kwargs, recompute):
    out = dict(kwargs)
    for name in ("recompute_granularity", "recompute_method", "recompute_num_layers", "recompute_modules"):
        out[name] = recompute.get(name)
    if out["recompute_modules"] is None:
        out.pop("recompute_modules")  # Megatron Core's default
    return out


# ---- building and measuring ------------------------------------------------------------------------------------


def init_single_process(torch, seed):
    from megatron.core import parallel_state, tensor_parallel

    torch.cuda.set_device(0)
    if not torch.distributed.is_initialized():
        store = os.path.join(tempfile.mkdtemp(prefix="mbridge-lint-mcore-"), "store")
        torch.distributed.init_process_group(backend="nccl", init_method="file://" + store, world_size=1, rank=0)
    if not parallel_state.model_parallel_is_initialized():
        try:
            parallel_state.initialize_model_parallel(1, 1, create_gloo_process_groups=False)
        except TypeError:  # older Megatron Core without that argument
            parallel_state.initialize_model_parallel(1, 1)
    tensor_parallel.model_parallel_cuda_manual_seed(seed)


def build_block(torch, cls, kwargs, use_te, seed, post_process=True, pre_process=True, vp_stage=None):
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_decoder_block_spec
    from megatron.core.transformer.transformer_block import TransformerBlock

    # Every run starts from the same seed: the same weights and inputs, so MoE layers route the same tokens in the
    # control and the candidates (routing decides the experts' tensor sizes, and the allocator's rounding of them).
    torch.manual_seed(seed)
    seed_model_parallel(torch, seed, local_graphs(kwargs))
    config = cls(**kwargs)
    chunk = {} if vp_stage is None else {"vp_stage": vp_stage}
    spec = get_gpt_decoder_block_spec(config, use_transformer_engine=use_te, normalization=config.normalization,
                                      **chunk)
    block = TransformerBlock(config, spec, pre_process=pre_process, post_process=post_process, **chunk)
    # In bf16 as a training job's model is (Megatron's Float16Module converts the whole model): PyTorch norms create
    # fp32 weights, which would otherwise promote and keep fp32 copies of their inputs.
    block.cuda().bfloat16()
    block.train()
    return config, block


def build_stage(torch, cls, kwargs, use_te, seed, sched):
    """This rank's model chunks of its pipeline stage: blocks as Megatron Core builds them, the first stage's first
    chunk taking its input from the forward step (pre_process), the others from the schedule; the last stage's last
    chunk ends in the final norm (post_process), which keeps the block output until its backward as it does in a real
    last stage, where the output layer and the loss follow (the loss stand-in keeps nothing)."""
    from megatron.core import parallel_state

    rank = parallel_state.get_pipeline_model_parallel_rank()
    first_stage, last_stage = rank == 0, rank == int(sched["pipeline"]) - 1
    virtual = int(sched.get("virtual", 1))
    return [build_block(torch, cls, kwargs, use_te, seed + c, post_process=last_stage and c == virtual - 1,
                        pre_process=first_stage and c == 0, vp_stage=c if virtual > 1 else None)
            for c in range(virtual)]


def build_facts(block, config, request):
    """What the estimator needs to know about what was built."""
    facts = {"masked_softmax_fusion": bool(getattr(config, "masked_softmax_fusion", False)), "softmax_kernel": False,
             "moe_permute_fusion": bool(getattr(config, "moe_permute_fusion", False)),
             "experts_module": None}
    s, b = request["seq_length"], request["micro_batch"]
    for module in block.modules():
        name = type(module).__name__
        if name == "FusedScaleMaskSoftmax" and facts["masked_softmax_fusion"]:
            try:
                heads = config.num_attention_heads
                facts["softmax_kernel"] = bool(module.is_kernel_available(None, b, heads, s, s))
            except Exception:
                facts["softmax_kernel"] = False
        if name in ("SequentialMLP", "GroupedMLP", "TEGroupedMLP") and facts["experts_module"] is None:
            facts["experts_module"] = name
    return facts


def _step_inputs(torch, block, request):
    """What a measured run feeds its block: mbridge_lint_memory.measure_step, the sequence and micro-batch sizes, the
    hidden size, the device and the causal mask ([1, 1, s, s], True where masked), allocated before every base like
    the parameters."""
    if os.path.abspath(_BRIDGE_HELPER) not in sys.path:
        sys.path.insert(0, os.path.abspath(_BRIDGE_HELPER))
    from mbridge_lint_memory import measure_step

    s, b = request["seq_length"], request["micro_batch"]
    device = torch.device("cuda", torch.cuda.current_device())
    mask = torch.triu(torch.ones(s, s, dtype=torch.bool, device=device), diagonal=1).view(1, 1, s, s)
    return measure_step, s, b, block.config.hidden_size, device, mask


def measure_run(torch, block, request, index, role):
    measure_step, s, b, hidden, device, mask = _step_inputs(torch, block, request)
    warmup, steps = int(request.get("warmup", 1)), int(request.get("steps", 3))
    total = warmup + steps
    figures = []
    leaked = 0
    for step in range(total):
        torch.cuda.synchronize()
        before_input = torch.cuda.memory_allocated()
        x = torch.randn(request["input_rows"], b, hidden, dtype=torch.bfloat16, device=device, requires_grad=True)
        fig = measure_step(lambda: block(x, attention_mask=mask))
        del x
        torch.cuda.synchronize()
        if step >= warmup:
            figures.append(fig)
            leaked = torch.cuda.memory_allocated() - before_input
        if index is not None:
            emit("step", index=index, role=role, done=step + 1, total=total)
    return _run_figures(figures, list(block.parameters()), lambda p: p.grad, request, b, hidden, leaked)


_STEP_KEYS = ("retained_bytes", "forward_peak_bytes", "backward_peak_bytes")


def _run_figures(figures, params, grad_of, request, b, hidden, leaked):
    """A measured run's figures: its first measured step's, the steps' times, the parameters and the gradients
    (``grad_of(p)``, None where a parameter has none), whether every step allocated alike."""
    first = figures[0]
    grads = [g for g in (grad_of(p) for p in params) if g is not None]
    return {
        "retained_bytes": first["retained_bytes"],
        "forward_peak_bytes": first["forward_peak_bytes"],
        "backward_peak_bytes": first["backward_peak_bytes"],
        "step_ms": statistics.median(f["step_ms"] for f in figures),
        "steps_ms": [f["step_ms"] for f in figures],
        "param_bytes": sum(p.numel() * p.element_size() for p in params),
        "grad_bytes": sum(g.numel() * g.element_size() for g in grads),
        "input_bytes": request["input_rows"] * b * hidden * 2,
        "leaked_bytes": leaked,
        "stable": all(all(f[k] == first[k] for k in _STEP_KEYS) for f in figures),
        "steps": [{k: f[k] for k in _STEP_KEYS} for f in figures],
    }


def pool_ids(torch):
    """The allocator's private pools (CUDA-graph pools) that have segments now."""
    return {tuple(seg.get("segment_pool_id", (0, 0))) for seg in torch.cuda.memory_snapshot()} - {(0, 0)}


def graph_pool_bytes(torch, earlier=frozenset()):
    """Reserved and allocated bytes of the private pools other than the default (0, 0) and the `earlier` ones (an
    earlier run's pool keeps its segments in this process), from the allocator's snapshot."""
    reserved = allocated = 0
    for seg in torch.cuda.memory_snapshot():
        pool = tuple(seg.get("segment_pool_id", (0, 0)))
        if pool != (0, 0) and pool not in earlier:
            reserved += seg["total_size"]
            allocated += seg["allocated_size"]
    return reserved, allocated


def traced_captures(torch, cuda_graphs, earlier, trace):
    """Wraps each runner's graph creation to log, per graph, the pool's reserved and allocated bytes after it and the
    device's allocated peak during it (MiB): where the pool grows."""
    runner = cuda_graphs._CudaGraphRunner
    originals = runner.create_fwd_graph, runner.create_bwd_graph

    def wrap(kind, fn):
        def traced(self, *args, **kwargs):
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            before = torch.cuda.memory_allocated()
            out = fn(self, *args, **kwargs)
            torch.cuda.synchronize()
            reserved, allocated = graph_pool_bytes(torch, earlier)
            trace.append([kind, getattr(self.base_module, "layer_number", None), round(reserved / 2**20, 2),
                          round(allocated / 2**20, 2), round((torch.cuda.memory_allocated() - before) / 2**20, 2),
                          round((torch.cuda.max_memory_allocated() - before) / 2**20, 2)])
            return out
        return traced

    runner.create_fwd_graph, runner.create_bwd_graph = wrap("F", originals[0]), wrap("B", originals[1])
    return lambda: (setattr(runner, "create_fwd_graph", originals[0]),
                    setattr(runner, "create_bwd_graph", originals[1]))


def give_main_grads(torch, block):
    """The fp32 gradient buffer DDP gives every parameter: the local graphs' backward accumulates weight gradients
    into ``param.main_grad`` inside the graph (cuda_graphs.py create_bwd_graph, ``param.main_grad.add_``)."""
    for p in block.parameters():
        if p.requires_grad and getattr(p, "main_grad", None) is None:
            p.main_grad = torch.zeros(p.shape, dtype=torch.float32, device=p.device)


def measure_graphed(torch, block, request, index, role):
    """A run with Megatron Core's local CUDA graphs, as its training loop drives them: one eager step records each
    layer's forward and backward (_CudagraphGlobalRecord), create_cudagraphs() then warms up and captures every graph
    in that order into one private pool (schedules.py calls it at the end of each step), and the following steps
    replay. Figures: the capture's (allocated and reserved above the state before, the peak), what the pool holds
    after it, and each replayed step's as an eager run's (its ``steps``), with the pool's reserved bytes."""
    from megatron.core.transformer import cuda_graphs

    measure_step, s, b, hidden, device, mask = _step_inputs(torch, block, request)
    give_main_grads(torch, block)

    def step():
        x = torch.randn(request["input_rows"], b, hidden, dtype=torch.bfloat16, device=device, requires_grad=True)
        return measure_step(lambda: block(x, attention_mask=mask))

    earlier = frozenset(pool_ids(torch))
    recorded = step()  # eager: the runners record (cuda_graphs.py record_graph_capture, _CudagraphRecordNode)
    torch.cuda.synchronize()
    before_alloc, before_reserved = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    trace = []
    restore = traced_captures(torch, cuda_graphs, earlier, trace)
    try:
        stats = cuda_graphs.create_cudagraphs() or {}
    finally:
        restore()
    torch.cuda.synchronize()
    pool_reserved, pool_allocated = graph_pool_bytes(torch, earlier)
    capture = {
        "graphs": sum(1 for m in block.modules() for r in getattr(getattr(m, "cudagraph_manager", None),
                                                                    "cudagraph_runners", []) for g in
                      (r.fwd_graph, getattr(r, "bwd_graph", None)) if g is not None),
        "allocated_bytes": torch.cuda.memory_allocated() - before_alloc,
        "reserved_bytes": torch.cuda.memory_reserved() - before_reserved,
        "peak_allocated_bytes": max([t[5] for t in trace] or [0]),  # MiB above the state before each graph
        "trace": trace,  # per graph: F/B, layer, pool reserved, pool allocated, allocated added, peak during (MiB)
        "megatron_allocated_bytes": int(stats.get("allocated_bytes", 0)),
        "megatron_reserved_bytes": int(stats.get("reserved_bytes", 0)),
        "pool_reserved_bytes": pool_reserved,
        "pool_allocated_bytes": pool_allocated,
    }
    warmup, steps = int(request.get("warmup", 1)), int(request.get("steps", 3))
    figures, pools = [], []
    for i in range(warmup + steps):
        torch.cuda.synchronize()
        before_input = torch.cuda.memory_allocated()
        fig = step()
        torch.cuda.synchronize()
        if i >= warmup:
            figures.append(fig)
            pools.append(graph_pool_bytes(torch, earlier))
            leaked = torch.cuda.memory_allocated() - before_input
        if index is not None:
            emit("step", index=index, role=role, done=i + 1, total=warmup + steps)
    first = figures[0]
    keys = _STEP_KEYS
    result = _run_figures(figures, list(block.parameters()), lambda p: getattr(p, "main_grad", None), request, b,
                          hidden, leaked)
    result["stable"] = result["stable"] and len(set(pools)) == 1
    return {
        **result,
        "cuda_graphs": {
            "impl": "local",
            "recorded_step": {k: recorded[k] for k in keys + ("peak_allocated_total_bytes", "peak_reserved_total_bytes")},
            "capture": capture,
            "replayed_pool_reserved_bytes": [p[0] for p in pools],
            "replayed_pool_allocated_bytes": [p[1] for p in pools],
            "replayed_peak_allocated_total_bytes": first["peak_allocated_total_bytes"],
            "replayed_peak_reserved_total_bytes": first["peak_reserved_total_bytes"],
        },
    }


def drop_cuda_graphs(torch):
    """Megatron Core's global graph state back to none (delete_cuda_graphs), so that the next run records its own."""
    try:
        from megatron.core.transformer import cuda_graphs
    except Exception:
        return
    cuda_graphs.delete_cuda_graphs()


def stage_model(torch, block):
    """The stage's model chunk as Megatron Core's schedule drives a model: ``config``, ``set_input_tensor`` taking the
    received list (GPTModel.set_input_tensor passes its one tensor on to the decoder), and the block's forward."""

    class StageModel(torch.nn.Module):
        def __init__(self, block):
            super().__init__()
            self.block = block
            self.config = block.config
            self.pre_process = block.pre_process
            # What GPTModel states (the interleaved schedule asks every chunk for it).
            from megatron.core.enums import ModelType

            self.model_type = ModelType.encoder_or_decoder

        def set_input_tensor(self, input_tensor):
            self.block.set_input_tensor(input_tensor[0] if isinstance(input_tensor, list) else input_tensor)

        def forward(self, hidden_states, attention_mask):
            return self.block(hidden_states, attention_mask=attention_mask)

    return StageModel(block)


def output_gradient_loss(torch):
    """The last stage's loss as the schedule needs one (a scalar per micro-batch), without the output layer: its
    backward hands the block output a gradient of the output's shape, as the logits' backward would."""

    class OutputGradient(torch.autograd.Function):
        @staticmethod
        def forward(ctx, out):
            ctx.shape, ctx.dtype = out.shape, out.dtype
            return out.new_zeros((), dtype=torch.float32)

        @staticmethod
        def backward(ctx, grad):
            return torch.randn(ctx.shape, dtype=ctx.dtype, device=grad.device)

    def loss_func(output_tensor):
        return OutputGradient.apply(output_tensor), {}

    return loss_func


def run_schedule(torch, chunks, request, mask):
    """One step of Megatron Core's own pipeline schedule (pipeline_parallel/schedules.py get_forward_backward_func:
    1F1B, interleaved with model chunks) over this stage's chunks; point-to-point over the fake group moves no data,
    so a received tensor is allocated and holds whatever the allocator gave it. Returns (allocated above the start
    at the first backward, forwards in flight then, the passes in order)."""
    from megatron.core.pipeline_parallel import schedules

    sched = request["schedule"]
    rows, b = request["input_rows"], request["micro_batch"]
    hidden = chunks[0].config.hidden_size
    models = [stage_model(torch, c) for c in chunks]
    loss_func = output_gradient_loss(torch)
    state = {"retained": None, "in_flight": 0, "live": 0, "order": [], "trace": [], "peak": 0, "handed": []}

    def mark(what):
        """Allocated above the start at each pass's start and end, and the peak since the previous mark (MiB), to
        tell what the schedule holds and where the step peaks; the peak statistics restart at every mark."""
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        state["peak"] = max(state["peak"], peak)
        state["trace"].append([what, round((torch.cuda.memory_allocated() - base) / 2**20, 1),
                               round((peak - base) / 2**20, 1)])
        torch.cuda.reset_peak_memory_stats()

    def mib(t):  # a tensor handed to a pass, in MiB (None when absent)
        t = t[0] if isinstance(t, list) and len(t) == 1 else t
        return round(t.numel() * t.element_size() / 2**20, 1) if torch.is_tensor(t) else None
    forward_step, backward_step = schedules.forward_step, schedules.backward_step

    def counted_forward(*args, **kwargs):
        model = args[2] if len(args) > 2 else kwargs["model"]
        state["order"].append("F{}".format(next(i for i, m in enumerate(models) if m is model)))
        state["live"] += 1
        mark("F>")
        out = forward_step(*args, **kwargs)
        mark("F<")
        return out

    def counted_backward(*args, **kwargs):
        if state["retained"] is None:
            torch.cuda.synchronize()
            state["retained"] = torch.cuda.memory_allocated() - base
            state["in_flight"] = state["live"]
        state["order"].append("B")
        state["live"] -= 1
        # What this backward was handed: its input (a received activation, or None), the output's data (pseudo-freed
        # to one element with deallocate_pipeline_outputs) and the received output gradient.
        input_tensor, output_tensor, output_grad = (list(args) + [None] * 3)[:3]
        state["handed"].append([mib(input_tensor), mib(output_tensor), mib(output_grad)])
        mark("B>")
        out = backward_step(*args, **kwargs)
        mark("B<")
        return out

    def forward_step_func(data_iterator, model):
        x = None
        if model.pre_process:  # the first stage's first chunk: a fresh input, as the embedding's output
            x = torch.randn(rows, b, hidden, dtype=torch.bfloat16, device="cuda", requires_grad=True)
        return model(x, attention_mask=mask), loss_func

    forward_backward = schedules.get_forward_backward_func()
    base = torch.cuda.memory_allocated()
    schedules.forward_step, schedules.backward_step = counted_forward, counted_backward
    try:
        forward_backward(forward_step_func=forward_step_func,
                         data_iterator=[None] * len(models) if len(models) > 1 else None,
                         model=models if len(models) > 1 else models[0],
                         num_microbatches=int(sched["micro_batches"]), seq_length=int(request["seq_length"]),
                         micro_batch_size=b, forward_only=False)
    finally:
        schedules.forward_step, schedules.backward_step = forward_step, backward_step
    mark("end")
    run_schedule.trace = state["trace"]
    run_schedule.handed = state["handed"]
    run_schedule.peak = state["peak"]
    return state["retained"], state["in_flight"], state["order"]


def held_from_previous_step(torch, chunks):
    """What the blocks still reference from the previous step: the last received input (TransformerBlock keeps what
    set_input_tensor gave it) and the gradient backward_step retained on it. Part of the base; each chunk's first
    forward replaces it. A function of its own so that no local name keeps those tensors alive through the step."""
    held = 0
    for c in chunks:
        t = getattr(c, "input_tensor", None)
        for x in (t, t.grad if torch.is_tensor(t) else None):
            if torch.is_tensor(x):
                held += x.numel() * x.element_size()
    return held


def measure_schedule(torch, chunks, request, index, role):
    """Figures of one run of the stage's schedule, after one unmeasured pass (the gradients then exist)."""
    s = request["seq_length"]
    mask = torch.triu(torch.ones(s, s, dtype=torch.bool, device="cuda"), diagonal=1).view(1, 1, s, s)
    run_schedule(torch, chunks, request, mask)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    held = held_from_previous_step(torch, chunks)
    torch.cuda.reset_peak_memory_stats()
    retained, in_flight, order = run_schedule(torch, chunks, request, mask)
    torch.cuda.synchronize()
    peak = max(run_schedule.peak, torch.cuda.max_memory_allocated()) - base  # the marks restart the statistics
    params = [p for c in chunks for p in c.parameters()]
    if index is not None:
        emit("step", index=index, role=role, done=1, total=1)
    return {
        "retained_bytes": retained,
        "forward_peak_bytes": retained,
        "backward_peak_bytes": peak,
        "step_ms": 0.0,
        "steps_ms": [],
        "param_bytes": sum(p.numel() * p.element_size() for p in params),
        "grad_bytes": sum(p.grad.numel() * p.grad.element_size() for p in params if p.grad is not None),
        "input_bytes": 0,
        "leaked_bytes": torch.cuda.memory_allocated() - base,
        "stable": True,
        "in_flight": in_flight,
        "order": order,
        "trace": run_schedule.trace,
        "handed": run_schedule.handed,
        "held_from_previous_step_bytes": held,
        "peak_allocated_total_bytes": int(max(run_schedule.peak, torch.cuda.max_memory_allocated())),
        "peak_reserved_total_bytes": int(torch.cuda.max_memory_reserved()),
    }


def read_request(argv):
    if len(argv) != 2:
        raise CannotRun("bad_request", "usage: mcore_reference.py REQUEST.json (or - for standard input)")
    try:
        if argv[1] == "-":
            request = json.load(sys.stdin)
        else:
            with open(argv[1]) as f:
                request = json.load(f)
    except (OSError, ValueError) as e:
        raise CannotRun("bad_request", "cannot read the request {}: {}".format(argv[1], e))
    if request.get("protocol") != PROTOCOL:
        raise CannotRun("bad_request", "request protocol {} is not {}: mbridge-lint and this helper come from different "
                        "versions".format(request.get("protocol"), PROTOCOL))
    for key in ("transformer_config", "seq_length", "micro_batch", "runs"):
        if key not in request:
            raise CannotRun("bad_request", "the request has no \"{}\"".format(key))
    return request


def main(argv):
    warnings.filterwarnings("ignore")
    request = read_request(argv)
    parallel = request.get("parallel")
    if parallel is not None:  # before Megatron Core binds the gather at import
        try:
            import torch

            fake_group.fill_gathers_with_peer_copies(torch)
        except Exception:  # missing or broken: import_stack names what is missing
            pass
    request["input_rows"] = fake_group.local_rows(parallel or {}, int(request["seq_length"]))
    torch, megatron = import_stack()
    te_version = optional_version("transformer_engine")
    wants_te = request.get("transformer_impl", "transformer_engine") == "transformer_engine"
    use_te = wants_te and te_version is not None
    cls, kwargs, changes, dropped = prepare_config(torch, request, te_version is not None)
    moe = bool(kwargs.get("num_moe_experts"))
    free, total = torch.cuda.mem_get_info()
    environment = {
        "protocol": PROTOCOL,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": getattr(torch.version, "cuda", None),
        "device": torch.cuda.get_device_name(0),
        "total_bytes": total,
        "free_bytes": free,
        "megatron_core": megatron_version(megatron),
        "megatron_core_path": os.path.dirname(os.path.abspath(megatron.__file__)),
        "transformer_engine": te_version,
        "spec": "transformer_engine" if use_te else "local",
        "changes": changes,
        "dropped": dropped,
    }
    try:
        cls(**with_recompute(kwargs, request["runs"][0]["recompute"]))
    except Exception as e:
        raise CannotRun("cannot_build", "Megatron Core {} rejects the config: {}: {}".format(
            environment["megatron_core"], type(e).__name__, e))
    seed = int(request.get("seed", 1234))
    if parallel is not None:
        try:
            environment["parallel"] = dict(parallel, **fake_group.init(torch, parallel, seed))
        except Exception as e:
            raise CannotRun("cannot_build", "this PyTorch cannot run one rank of {} ranks over a fake process group "
                            "(torch.distributed 'fake' backend): {}: {}".format(
                                fake_group.world_and_rank(parallel)[0], type(e).__name__, e))
        environment.update(fake_group.describe(moe, bool(parallel.get("sp"))))
        if moe:
            fake_group.balance_routing(torch, int(kwargs.get("moe_router_topk", 2)))
    else:
        init_single_process(torch, seed)
    # One unmeasured step of the control first: Megatron Core's global buffers and the allocator's segments then
    # exist before every measured run alike (the first run of a process otherwise keeps tens of MiB more in MoE
    # layers, where the experts' tensor sizes follow the routing).
    schedule = [(None, request["runs"][0])] + list(enumerate(request["runs"]))
    for index, run in schedule:
        try:
            if "schedule" in request:
                # The stage's model chunks, the last stage's ending in the final norm (build_stage).
                chunks = build_stage(torch, cls, with_recompute(kwargs, run["recompute"]), use_te, seed,
                                     request["schedule"])
                config, block = chunks[0]
                chunks = [c[1] for c in chunks]
            else:
                config, block = build_block(torch, cls, with_recompute(kwargs, run["recompute"]), use_te, seed)
        except Exception as e:
            raise CannotRun("cannot_build", "Megatron Core {} cannot build {} ({}): {}: {}".format(
                environment["megatron_core"], run.get("role", "the run"), run.get("describe", ""), type(e).__name__, e))
        if index is None:
            environment["facts"] = build_facts(block, config, request)
            emit("environment", **environment)
        try:
            if "schedule" in request:
                figures = measure_schedule(torch, chunks, request, index, run.get("role", ""))
                if index is not None:
                    emit("run", index=index, role=run.get("role", ""), recompute=run["recompute"], **figures)
            elif local_graphs(kwargs):
                figures = measure_graphed(torch, block, request if index is not None else dict(
                    request, warmup=0, steps=1), index, run.get("role", ""))
                if index is not None:
                    emit("run", index=index, role=run.get("role", ""), recompute=run["recompute"], **figures)
            elif index is None:
                measure_run(torch, block, dict(request, warmup=0, steps=1), None, "warm-up")
            else:
                figures = measure_run(torch, block, request, index, run.get("role", ""))
                emit("run", index=index, role=run.get("role", ""), recompute=run["recompute"], **figures)
        except torch.cuda.OutOfMemoryError as e:
            raise CannotRun("out_of_memory", "the GPU ran out of memory in {} ({}): {}; use fewer --layers or a smaller "
                            "--seq-length / --micro-batch".format(run.get("role", "a run"), run.get("describe", ""),
                                                                   str(e).splitlines()[0]))
        chunks = None
        del block, config  # the next run builds its own block; free this one's parameters and leftovers first
        if local_graphs(kwargs):
            drop_cuda_graphs(torch)
        gc.collect()
        torch.cuda.empty_cache()
    emit("done")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except CannotRun as e:
        emit("error", kind=e.kind, message=e.message)
        sys.exit(2)
    except Exception as e:  # a crash: the message and where, for the log
        emit("error", kind="crash", message="{}: {}".format(type(e).__name__, e), traceback=traceback.format_exc())
        sys.exit(3)
