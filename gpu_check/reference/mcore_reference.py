#!/usr/bin/env python3
"""Megatron Core reference for `mbridge-lint gpu-check --reference mcore`.

Builds the requested layers with the installed Megatron Core (a bare ``TransformerBlock`` on one GPU, world size 1),
runs the control and every candidate recompute setting, and measures device memory the way the memory estimator
predicts it (see gpu_check/README.md): after warm-up steps, per step a fresh input, then

    base = memory_allocated()                    # parameters, their gradients, the input, the previous step's leftovers
    out = block(x, attention_mask)               # retained = allocated - base; forward peak
    out.backward(randn_like(out))                # backward peak (peak statistics reset after forward)

With a ``schedule`` in the request (``pipeline``, ``stage``, ``virtual``, ``micro_batches``, ``group``,
``deallocate_outputs``, ``chunk_layers``), each run is one pipeline stage as Megatron Core's schedule runs it
(pipeline_parallel/schedules.py): ``virtual`` model chunks of ``chunk_layers`` layers, the schedule's forward passes
held (each a fresh received input, its output kept until its backward) and the backward passes in the schedule's
order, without communication. Its ``run`` event then has ``retained_bytes`` (allocated above the base just before the
first backward, when the most micro-batches are in flight), ``backward_peak_bytes`` (the peak over the whole
schedule), ``in_flight`` (forwards held at that point) and ``order`` (the schedule, ``F`` or ``B`` with chunk and
micro-batch).

Usage: ``python3 mcore_reference.py REQUEST.json`` (``-`` reads standard input). The request is written by
mbridge-lint (cli/gpu_check_command.cpp): ``transformer_config`` (TransformerConfig keyword arguments of one rank's
shapes, without recompute fields), ``transformer_impl``, ``seq_length``, ``micro_batch``, ``runs`` (each a role and
its recompute fields), ``warmup``, ``steps``, ``seed``.

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

PROTOCOL = 1
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
    force("distribute_saved_activations", False, "needs tensor parallelism; one GPU runs without it")
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
    if kwargs.get("cuda_graph_impl", "none") not in ("none", None):
        force("cuda_graph_impl", "none", "CUDA graphs are not measured")
    if kwargs.get("enable_cuda_graph"):
        force("enable_cuda_graph", False, "CUDA graphs are not measured")
    return cls, kwargs, changes, dropped


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


def build_block(torch, cls, kwargs, use_te, seed, post_process=True):
    from megatron.core import tensor_parallel
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_decoder_block_spec
    from megatron.core.transformer.transformer_block import TransformerBlock

    # Every run starts from the same seed: the same weights and inputs, so MoE layers route the same tokens in the
    # control and the candidates (routing decides the experts' tensor sizes, and the allocator's rounding of them).
    torch.manual_seed(seed)
    tensor_parallel.model_parallel_cuda_manual_seed(seed)
    config = cls(**kwargs)
    spec = get_gpt_decoder_block_spec(config, use_transformer_engine=use_te, normalization=config.normalization)
    block = TransformerBlock(config, spec, pre_process=True, post_process=post_process)
    # In bf16 as a training job's model is (Megatron's Float16Module converts the whole model): PyTorch norms create
    # fp32 weights, which would otherwise promote and keep fp32 copies of their inputs.
    block.cuda().bfloat16()
    block.train()
    return config, block


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


def measure_run(torch, block, request, index, role):
    if os.path.abspath(_BRIDGE_HELPER) not in sys.path:
        sys.path.insert(0, os.path.abspath(_BRIDGE_HELPER))
    from mbridge_lint_memory import measure_step

    s, b = request["seq_length"], request["micro_batch"]
    hidden = block.config.hidden_size
    device = torch.device("cuda", torch.cuda.current_device())
    # The causal mask ([1, 1, s, s], True where masked), allocated before every base like the parameters.
    mask = torch.triu(torch.ones(s, s, dtype=torch.bool, device=device), diagonal=1).view(1, 1, s, s)
    warmup, steps = int(request.get("warmup", 1)), int(request.get("steps", 3))
    total = warmup + steps
    figures = []
    leaked = 0
    for step in range(total):
        torch.cuda.synchronize()
        before_input = torch.cuda.memory_allocated()
        x = torch.randn(s, b, hidden, dtype=torch.bfloat16, device=device, requires_grad=True)
        fig = measure_step(lambda: block(x, attention_mask=mask))
        del x
        torch.cuda.synchronize()
        if step >= warmup:
            figures.append(fig)
            leaked = torch.cuda.memory_allocated() - before_input
        if index is not None:
            emit("step", index=index, role=role, done=step + 1, total=total)
    first = figures[0]
    keys = ("retained_bytes", "forward_peak_bytes", "backward_peak_bytes")
    params = [p for p in block.parameters()]
    return {
        "retained_bytes": first["retained_bytes"],
        "forward_peak_bytes": first["forward_peak_bytes"],
        "backward_peak_bytes": first["backward_peak_bytes"],
        "step_ms": statistics.median(f["step_ms"] for f in figures),
        "steps_ms": [f["step_ms"] for f in figures],
        "param_bytes": sum(p.numel() * p.element_size() for p in params),
        "grad_bytes": sum(p.grad.numel() * p.grad.element_size() for p in params if p.grad is not None),
        "input_bytes": s * b * hidden * 2,
        "leaked_bytes": leaked,
        "stable": all(all(f[k] == first[k] for k in keys) for f in figures),
        "steps": [{k: f[k] for k in keys} for f in figures],
    }


def schedule_order(sched):
    """The stage's passes in Megatron Core's order: [("F" or "B", model chunk, micro-batch)], and the number of
    warm-up forwards (schedules.py get_pp_rank_microbatches, get_schedule_table, get_model_chunk_id)."""
    p, r, v = int(sched["pipeline"]), int(sched["stage"]), int(sched.get("virtual", 1))
    m, group = int(sched["micro_batches"]), int(sched.get("group") or p)
    total = m * v
    if v == 1:
        warmup = min(p - r - 1, m)
        table = [(0, i) for i in range(m)]
    else:
        warmup = (p - r - 1) * 2 + (v - 1) * group + (1 if sched.get("extra_warmup") else 0)
        table = []
        for first in range(0, m, group):
            last = m if first + group >= m else first + group
            table += [(chunk, mb) for chunk in range(v) for mb in range(first, last)]
    warmup = min(warmup, total)
    order = [("F",) + table[k] for k in range(warmup)]
    for k in range(total - warmup):
        order.append(("F",) + table[warmup + k])
        order.append(("B", v - 1 - table[k][0], None))
    for k in range(total - warmup, total):
        order.append(("B", v - 1 - table[k][0], None))
    return order, warmup


def run_schedule(torch, chunks, request, mask):
    """One pass of the schedule over the stage's chunks; returns (retained at the first backward, in flight then)."""
    from megatron.core.pipeline_parallel.schedules import custom_backward

    sched = request["schedule"]
    s, b = request["seq_length"], request["micro_batch"]
    hidden = chunks[0].config.hidden_size
    deallocate = bool(sched.get("deallocate_outputs"))
    order, _ = schedule_order(sched)
    held = [[] for _ in chunks]  # per chunk, FIFO of (input, output) as Megatron keeps input_tensors / output_tensors
    base = torch.cuda.memory_allocated()
    retained, in_flight = None, 0
    for kind, chunk, _ in order:
        if kind == "F":
            x = torch.randn(s, b, hidden, dtype=torch.bfloat16, device="cuda", requires_grad=True)
            out = chunks[chunk](x, attention_mask=mask)
            grad_shape = out.shape
            if deallocate:  # schedules.py deallocate_output_tensor: keep the graph, free the data
                out.data = torch.empty((1,), device=out.device, dtype=out.dtype)
            held[chunk].append((x, out, grad_shape))
            continue
        if retained is None:
            torch.cuda.synchronize()
            retained = torch.cuda.memory_allocated() - base
            in_flight = sum(len(h) for h in held)
        x, out, grad_shape = held[chunk].pop(0)
        grad = torch.randn(grad_shape, dtype=torch.bfloat16, device="cuda")
        # schedules.py backward_step: the C++ engine for a deallocated output, torch.autograd.backward otherwise.
        if deallocate:
            custom_backward(out, grad)
        else:
            torch.autograd.backward(out, grad_tensors=grad)
        del x, out, grad
    return retained, in_flight, ["{}{}".format(kind, chunk) for kind, chunk, _ in order]


def measure_schedule(torch, chunks, request, index, role):
    """Figures of one run of the stage's schedule, after one unmeasured pass (the gradients then exist)."""
    s = request["seq_length"]
    mask = torch.triu(torch.ones(s, s, dtype=torch.bool, device="cuda"), diagonal=1).view(1, 1, s, s)
    run_schedule(torch, chunks, request, mask)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    retained, in_flight, order = run_schedule(torch, chunks, request, mask)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
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
        "peak_allocated_total_bytes": int(torch.cuda.max_memory_allocated()),
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
    torch, megatron = import_stack()
    te_version = optional_version("transformer_engine")
    wants_te = request.get("transformer_impl", "transformer_engine") == "transformer_engine"
    use_te = wants_te and te_version is not None
    cls, kwargs, changes, dropped = prepare_config(torch, request, te_version is not None)
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
    seed = int(request.get("seed", 1234))
    init_single_process(torch, seed)
    try:
        cls(**with_recompute(kwargs, request["runs"][0]["recompute"]))
    except Exception as e:
        raise CannotRun("cannot_build", "Megatron Core {} rejects the config: {}: {}".format(
            environment["megatron_core"], type(e).__name__, e))
    # One unmeasured step of the control first: Megatron Core's global buffers and the allocator's segments then
    # exist before every measured run alike (the first run of a process otherwise keeps tens of MiB more in MoE
    # layers, where the experts' tensor sizes follow the routing).
    schedule = [(None, request["runs"][0])] + list(enumerate(request["runs"]))
    for index, run in schedule:
        try:
            if "schedule" in request:
                # The stage's model chunks: blocks without a final norm, as a pipeline stage that is not the last.
                chunks = [build_block(torch, cls, with_recompute(kwargs, run["recompute"]), use_te, seed + c, False)
                          for c in range(int(request["schedule"].get("virtual", 1)))]
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
