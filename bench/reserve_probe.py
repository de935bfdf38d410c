#!/usr/bin/env python3
"""Measurement (GPU): device memory a training process holds beside its tensors, for the estimate's reserve.

Usage: bench/reserve_probe.py [--out FILE.json] [--gib N]

Run with PyTorch on a machine with an NVIDIA GPU (one process; with torchrun on several GPUs each rank reports its
own). What PyTorch's allocator reports (`memory_allocated`, the figure the estimate predicts) leaves out:

* the CUDA context and the libraries' own device memory: the device's used memory (`mem_get_info`) minus what the
  caching allocator has reserved, after CUDA starts, after a bf16 GEMM (cuBLAS and its workspace), after scaled dot
  product attention (cuDNN / flash kernels) and after NCCL's communicator exists and has all-reduced once;
* the allocator's own slack: reserved minus allocated at the peak of a training-like step whose tensors come and go
  in many sizes (a stack of linear layers with GELU at several widths, forward then backward, three times), as a share
  of the allocated peak.

Prints each figure in MiB and, with --out, the raw readings as JSON.
"""
import argparse
import json
import os
import sys
import tempfile

MIB = 1024 * 1024


def used_outside_allocator(torch):
    free, total = torch.cuda.mem_get_info()
    return (total - free - torch.cuda.memory_reserved()) / MIB


def training_like_step(torch, widths, tokens, layers):
    """Forward and backward of `layers` linear + GELU layers per width, the activations kept for backward."""
    peaks = []
    for width in widths:
        # Each width starts from an empty cache: segments cached for smaller sizes would count as slack here.
        torch.cuda.empty_cache()
        weights = [(torch.randn(width, width, dtype=torch.bfloat16, device="cuda") / width ** 0.5).requires_grad_()
                   for _ in range(layers)]
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        for _ in range(3):
            x = torch.randn(tokens, width, dtype=torch.bfloat16, device="cuda", requires_grad=True)
            h = x
            for w in weights:
                h = torch.nn.functional.gelu(h @ w)
            h.float().pow(2).mean().backward()
            del x, h
        torch.cuda.synchronize()
        peaks.append({"width": width, "max_allocated_mib": torch.cuda.max_memory_allocated() / MIB,
                      "max_reserved_mib": torch.cuda.max_memory_reserved() / MIB})
        del weights
    return peaks


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument("--tokens", type=int, default=8192)
    parser.add_argument("--layers", type=int, default=24)
    args = parser.parse_args(argv)
    import torch
    import torch.distributed as dist

    readings = {"torch": torch.__version__, "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0),
                "nccl": ".".join(map(str, torch.cuda.nccl.version()))}
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    torch.zeros(1, device="cuda")
    readings["context_mib"] = used_outside_allocator(torch)
    a = torch.randn(4096, 4096, dtype=torch.bfloat16, device="cuda")
    (a @ a).sum().item()
    readings["after_gemm_mib"] = used_outside_allocator(torch)
    q = torch.randn(1, 16, 4096, 128, dtype=torch.bfloat16, device="cuda", requires_grad=True)
    torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
    readings["after_attention_mib"] = used_outside_allocator(torch)
    del a, q
    if "WORLD_SIZE" in os.environ:
        dist.init_process_group("nccl")
    else:
        store = os.path.join(tempfile.mkdtemp(prefix="reserve-probe-"), "store")
        dist.init_process_group("nccl", init_method="file://" + store, world_size=1, rank=0)
    t = torch.ones(64 * MIB // 4, device="cuda")
    dist.all_reduce(t)
    torch.cuda.synchronize()
    readings["world_size"] = dist.get_world_size()
    readings["after_nccl_mib"] = used_outside_allocator(torch)
    del t
    torch.cuda.empty_cache()
    steps = training_like_step(torch, [1024, 3072, 5120], args.tokens, args.layers)
    readings["steps"] = steps
    readings["fragmentation"] = max(s["max_reserved_mib"] / s["max_allocated_mib"] - 1 for s in steps)
    dist.destroy_process_group()
    for key in ("context_mib", "after_gemm_mib", "after_attention_mib", "after_nccl_mib"):
        print(f"{key:22} {readings[key]:9.1f} MiB outside PyTorch's allocator")
    for s in steps:
        print(f"width {s['width']:5}: peak allocated {s['max_allocated_mib']:9.1f} MiB, reserved "
              f"{s['max_reserved_mib']:9.1f} MiB")
    print(f"fragmentation (reserved / allocated - 1 at the peak, largest): {100 * readings['fragmentation']:.2f} %")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(readings, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
