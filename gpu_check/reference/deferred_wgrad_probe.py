"""Issue 37: what the last pipeline stage keeps per micro-batch under ``defer_embedding_wgrad_compute``, measured on
Megatron Core's own output layer (``tensor_parallel.ColumnParallelLinear`` with the embedding-activation and
gradient-output buffers GPTModel hands it, gpt_model.py) for rank 0 of TP 4 + SP on the last of 2 pipeline stages,
over a fake process group (fake_group.py).

Micro-batches run forward and backward through the output layer (a random gradient of the logits' shape stands in for the
loss's), each leaving its input and its logits' gradient in the buffers; then
``drain_embedding_wgrad_compute`` (utils.py), which the pipeline flush runs, computes the weight gradients and pops
them. apex's ``fused_weight_gradient_mlp_cuda`` (absent here) is stood in for by the same accumulation in torch
(``main_grad += grad_outputᵀ · input``); it allocates nothing the buffers would hold. Prints one JSON line.
"""

from __future__ import annotations

import json
import sys
import types

import fake_group

SHAPE = dict(hidden=8192, vocab=128256, seq=4096, micro_batch=1, tp=4, micro_batches=6)


def stand_in_for_apex_wgrad(torch):
    """``fused_weight_gradient_mlp_cuda``'s two accumulations, in torch, before Megatron Core imports it."""
    module = types.ModuleType("fused_weight_gradient_mlp_cuda")

    def accumulate(total_input, grad_output, main_grad):
        x = total_input.reshape(-1, total_input.shape[-1])
        g = grad_output.reshape(-1, grad_output.shape[-1])
        main_grad.add_(torch.matmul(g.t(), x).to(main_grad.dtype))

    module.wgrad_gemm_accum_fp32 = accumulate
    module.wgrad_gemm_accum_fp16 = accumulate
    sys.modules["fused_weight_gradient_mlp_cuda"] = module


def main():
    import torch

    sh = SHAPE
    stand_in_for_apex_wgrad(torch)
    fake_group.fill_gathers_with_peer_copies(torch)
    from megatron.core import parallel_state, tensor_parallel
    from megatron.core.transformer import TransformerConfig
    from megatron.core.utils import drain_embedding_wgrad_compute

    placed = fake_group.init(torch, {"tp": sh["tp"], "cp": 1, "ep": 1, "etp": 1, "pp": 2, "stage": 1}, seed=1234)
    config = TransformerConfig(num_layers=2, hidden_size=sh["hidden"], num_attention_heads=64,
                               tensor_model_parallel_size=sh["tp"], pipeline_model_parallel_size=2,
                               sequence_parallel=True, defer_embedding_wgrad_compute=True,
                               gradient_accumulation_fusion=True, bf16=True, params_dtype=torch.bfloat16,
                               pipeline_dtype=torch.bfloat16, perform_initialization=False)
    activations, gradients = [], []
    layer = tensor_parallel.ColumnParallelLinear(
        sh["hidden"], sh["vocab"], config=config, init_method=torch.nn.init.zeros_, bias=False, gather_output=False,
        skip_bias_add=False, embedding_activation_buffer=activations, grad_output_buffer=gradients).cuda()
    layer.weight.main_grad = torch.zeros(layer.weight.shape, dtype=torch.float32, device="cuda")
    rows = sh["seq"] // sh["tp"]

    def micro_batch(through_node):
        # The stage's received input: a leaf that requires its gradient (p2p_communication.py allocates it so), whose
        # gradient backward_step keeps on it. Through a node (the layers between it and the output layer, here one
        # multiplication that saves nothing), the output layer's input is not a leaf.
        received = torch.randn(rows, sh["micro_batch"], sh["hidden"], dtype=torch.bfloat16, device="cuda",
                               requires_grad=True)
        x = received * 1.0 if through_node else received
        logits, _ = layer(x)
        logits.backward(torch.randn_like(logits))  # the loss's gradient: a tensor of the logits' shape

    micro_batch(False)  # unmeasured: the all-gather buffer ("mpu") and the CUDA context's first allocations
    activations.clear()
    gradients.clear()
    out = {"shape": sh, "placed": placed, "rows": rows, "vocab_per_rank": layer.weight.shape[0]}
    for mode in ("leaf_input", "through_node"):
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        held = []
        for _ in range(sh["micro_batches"]):
            micro_batch(mode == "through_node")
            torch.cuda.synchronize()
            held.append(torch.cuda.memory_allocated() - base)
        with torch.no_grad():  # the fake group's all-gather writes into the global buffer's view: no autograd here
            drain_embedding_wgrad_compute(config, activations, gradients, layer.weight,
                                          parallel_state.get_tensor_model_parallel_group())
        torch.cuda.synchronize()
        out[mode] = {"held_after_each_micro_batch": held, "after_drain": torch.cuda.memory_allocated() - base,
                     "buffers_after_drain": [len(activations), len(gradients)]}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
