"""One rank of an N-rank Megatron Core job in one process, over PyTorch's ``fake`` process-group backend (issue 37).

``torch.distributed.init_process_group("fake", store=FakeStore(), rank=r, world_size=N)`` makes every collective and
point-to-point operation a no-op that leaves its output as allocated; Megatron Core's parallel state initialised over
it (``initialize_model_parallel(..., create_gloo_process_groups=False)``) then builds rank r's own tensor-, sequence-,
expert- and pipeline-parallel modules, whose tensors have exactly the shapes rank r of N gives them.

What a fake group cannot give, and what this module supplies instead (``describe`` says so in the output):

* Values. Where a received value decides a shape -- the MoE token dispatchers exchange per-expert token counts before
  their all-to-all -- the peers' values are needed. Every all-gather's output is filled with this rank's input once
  per peer ("every peer sends what this rank sends"). Routing is made exactly balanced: Megatron Core's own
  ``moe_router_force_load_balancing`` path (router.py ``apply_random_logits`` -> ``moe_utils.RandomSTE``), with the
  random logits it draws (``logits.clone().normal_()``) replaced by a round-robin pattern of the same tensor: token i
  prefers experts i*k, ..., i*k+k-1 (mod E), so each expert receives T*k/E tokens from every rank.
* The norm under sequence parallelism. The local spec's ``WrappedTorchNorm`` asserts that sequence parallelism is off
  (``transformer/torch_norm.py`` line 52 at d98e8a64). Under SP a norm normalises this rank's sequence shard exactly as
  without SP (only its weight's gradient is all-reduced, by the optimizer), so the same torch norm is built with that
  field read as false.
* Received pipeline tensors hold whatever the allocator gave them: their values decide no shape here.
* Communication buffers (NCCL's, per peer and channel) are not allocated by a fake group: not measured.
"""

from __future__ import annotations

import math


def world_and_rank(parallel):
    """The smallest world that holds the shape (tp*cp*dp == etp*ep*edp per pipeline stage) and the global rank of
    tensor-, expert- and data-parallel rank 0 on the shape's pipeline stage (Megatron Core's default order
    tp-cp-ep-dp-pp: pipeline outermost)."""
    per_stage = math.lcm(parallel["tp"] * parallel["cp"], parallel["ep"] * parallel["etp"])
    per_stage *= parallel.get("dp_factor", 1)  # a larger data-parallel size than the smallest world has
    return per_stage * parallel["pp"], per_stage * parallel.get("stage", 0)


def needed(parallel):
    """Whether the shape needs more than one rank (else a plain one-process group does)."""
    return parallel is not None and world_and_rank(parallel)[0] > 1


def fill_gathers_with_peer_copies(torch):
    """A fake all-gather leaves its output as allocated; fill it with this rank's input once per peer. Must run before
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


def init(torch, parallel, seed):
    """Rank r of the shape's world over a fake group, and Megatron Core's parallel state over it. The gathers must
    have been patched (fill_gathers_with_peer_copies) before Megatron Core was imported."""
    from torch.testing._internal.distributed.fake_pg import FakeStore

    from megatron.core import parallel_state, tensor_parallel

    torch.cuda.set_device(0)
    world, rank = world_and_rank(parallel)
    torch.distributed.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world)
    parallel_state.initialize_model_parallel(
        tensor_model_parallel_size=parallel["tp"], pipeline_model_parallel_size=parallel["pp"],
        virtual_pipeline_model_parallel_size=parallel.get("vpp"), context_parallel_size=parallel["cp"],
        expert_model_parallel_size=parallel["ep"], expert_tensor_parallel_size=parallel["etp"],
        create_gloo_process_groups=False)
    tensor_parallel.model_parallel_cuda_manual_seed(seed)
    norm_without_sp_assertion()
    return {"world_size": world, "rank": rank, "tp_rank": parallel_state.get_tensor_model_parallel_rank(),
            "pp_rank": parallel_state.get_pipeline_model_parallel_rank(),
            "ep_rank": parallel_state.get_expert_model_parallel_rank(),
            "cp_rank": parallel_state.get_context_parallel_rank()}


def describe(moe, sp):
    """What was simulated or supplied, for the environment event."""
    return {
        "collectives": "simulated: fake process group; all-gathers filled with this rank's input per peer; "
                       "communication buffers not allocated",
        "routing": ("balanced: moe_router_force_load_balancing with round-robin logits (token i -> experts "
                    "i*k..i*k+k-1 mod E), every peer routing as this rank" if moe else None),
        "norm": "torch norm built without the sequence-parallel assertion" if sp else "torch norm",
    }


def local_rows(parallel, seq_length):
    """The sequence rows of this rank's input: the sequence split over context parallelism, and over tensor
    parallelism under sequence parallelism (Megatron Core's tensor_shape in schedules.py)."""
    rows = seq_length // parallel.get("cp", 1)
    if parallel.get("sp"):
        rows //= parallel.get("tp", 1)
    return rows
