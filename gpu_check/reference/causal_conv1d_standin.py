"""A stand-in for the ``causal_conv1d`` package, so Megatron Core's Mamba mixer trains on the GPU machine (issue 37).

Megatron Core's Mamba training path is ``mamba_ssm``'s ``mamba_split_conv1d_scan_combined`` (``ssm/mamba_mixer.py``
``_ssm_training``), a ``torch.autograd.Function`` whose forward calls ``causal_conv1d``'s compiled
``causal_conv1d_fwd_function`` and whose backward recomputes it and calls ``causal_conv1d_bwd_function``
(``mamba_ssm/ops/triton/ssd_combined.py``, ``MambaSplitConv1dScanCombinedFn``). The GPU machine has neither package;
``mamba_ssm``'s Triton kernels are carried as sources, the compiled convolution is replaced by this module's
depthwise causal convolution in PyTorch (``F.conv1d`` padded by ``width - 1`` on the left, SiLU after).

What that leaves exact and what not: which tensors the mixer keeps for backward is decided by the autograd Function's
``ctx.save_for_backward`` (the QKV-like in_proj output ``zxbcdt`` and the scan's output before the gate), not by the
convolution, whose output lives only inside the Function's forward; so retained memory is Megatron Core's and
``mamba_ssm``'s own. The backward's transient memory differs by what this convolution's autograd allocates against the
CUDA kernel's (the real ``causal_conv1d_bwd_function`` writes into the given ``dx``): peaks measured with it are the
stand-in's, and say so.

Only the training path is provided. ``causal_conv1d_fn`` and ``causal_conv1d_update`` (non-memory-efficient training
and inference) raise.
"""

from __future__ import annotations

import sys
import types

VERSION = "0.0+mbridge-lint-standin"


def _conv(torch, x, weight, bias, silu):
    """x [b, d, s], weight [d, w]: the depthwise causal convolution ``causal_conv1d_fwd`` computes."""
    width = weight.shape[-1]
    out = torch.nn.functional.conv1d(x, weight.unsqueeze(1), bias, padding=width - 1, groups=x.shape[1])
    out = out[..., : x.shape[-1]]
    return torch.nn.functional.silu(out) if silu else out


def install(torch):
    """Register ``causal_conv1d`` and ``causal_conv1d.cpp_functions`` in ``sys.modules``: before ``mamba_ssm`` or
    Megatron Core's Mamba mixer is imported (both import it at module level, in one try block each)."""

    def fwd(x, weight, bias, seq_idx, initial_states, final_states_out, silu_activation):
        if seq_idx is not None or initial_states is not None or final_states_out is not None:
            raise NotImplementedError("the causal_conv1d stand-in runs unpacked sequences without states only")
        with torch.no_grad():
            return _conv(torch, x, weight, bias, silu_activation).contiguous()

    def bwd(x, weight, bias, dout, seq_idx, initial_states, dfinal_states, dx, return_dinitial_states,
            silu_activation):
        if seq_idx is not None or initial_states is not None or dfinal_states is not None:
            raise NotImplementedError("the causal_conv1d stand-in runs unpacked sequences without states only")
        with torch.enable_grad():
            x_ = x.detach().requires_grad_(True)
            w_ = weight.detach().requires_grad_(True)
            b_ = bias.detach().requires_grad_(True) if bias is not None else None
            out = _conv(torch, x_, w_, b_, silu_activation)
            inputs = [x_, w_] + ([b_] if b_ is not None else [])
            grads = torch.autograd.grad(out, inputs, dout)
        dx_new, dweight = grads[0], grads[1]
        dbias = grads[2] if b_ is not None else None
        if dx is not None:
            dx.copy_(dx_new)
            dx_new = dx
        return dx_new, dweight, dbias, None

    def refused(*args, **kwargs):
        raise NotImplementedError("the causal_conv1d stand-in provides the memory-efficient training path only")

    package = types.ModuleType("causal_conv1d")
    package.__version__ = VERSION
    package.__path__ = []  # a package, so ``causal_conv1d.cpp_functions`` imports
    package.causal_conv1d_fn = refused
    package.causal_conv1d_update = refused
    cpp = types.ModuleType("causal_conv1d.cpp_functions")
    cpp.causal_conv1d_fwd_function = fwd
    cpp.causal_conv1d_bwd_function = bwd
    cpp.causal_conv1d_update_function = refused
    package.cpp_functions = cpp
    sys.modules["causal_conv1d"] = package
    sys.modules["causal_conv1d.cpp_functions"] = cpp


DESCRIPTION = ("causal_conv1d stand-in (gpu_check/reference/causal_conv1d_standin.py): PyTorch's depthwise conv1d in "
               "place of the compiled kernel inside mamba_ssm's MambaSplitConv1dScanCombinedFn; retained memory is "
               "the Function's saved tensors, the backward's transient memory the stand-in's")
