"""Issue 37: what a rank holds between iterations -- its parameters, Megatron Core's gradient buffers and its
distributed optimizer's shards -- measured on Megatron Core's own GPTModel, DistributedDataParallel and
``get_megatron_optimizer`` for rank r of an N-rank job, over a fake process group (fake_group.py).

No forward pass runs: the optimizer's first step creates Adam's moments whatever the gradients hold (zeros here), and
the states do not depend on the data. One shape per process: ``python3 state_probe.py SHAPE`` prints one JSON line
with the bytes allocated after each step (the model, the DDP wrapper, the optimizer, its first step) and the
parameter counts. Without Transformer Engine or apex Megatron Core falls back to torch's AdamW
(``megatron/core/optimizer/__init__.py``), whose states are the same two fp32 moments per parameter of the shard.
"""

from __future__ import annotations

import json
import sys

import fake_group

# Gemma 4 26B-A4B's language model as tests/data/memory/gemma4_vl_26b_sft_8gpu_h100_bf16.yaml writes it (every layer
# sliding-window attention: the estimate's shape), and Qwen3 30B-A3B's and Llama 3 70B's first stage, as their
# fixtures in tests/data/memory write them (bf16 parameters: fp8 needs Transformer Engine).
GEMMA4 = dict(num_layers=30, hidden_size=2816, ffn_hidden_size=2112, num_attention_heads=16, num_query_groups=8,
              kv_channels=256, qk_layernorm=True, num_moe_experts=128, moe_router_topk=8, moe_ffn_hidden_size=704,
              moe_shared_expert_intermediate_size=2112, vocab=262144, tied=True)
QWEN3 = dict(num_layers=48, hidden_size=2048, ffn_hidden_size=6144, num_attention_heads=32, num_query_groups=4,
             kv_channels=128, qk_layernorm=True, num_moe_experts=128, moe_router_topk=8, moe_ffn_hidden_size=768,
             vocab=151936, tied=False)
LLAMA70 = dict(num_layers=80, hidden_size=8192, ffn_hidden_size=28672, num_attention_heads=64, num_query_groups=8,
               kv_channels=128, vocab=128256, tied=False)

SHAPES = {
    # 8 H100: TP 4 + SP, EP 8, ETP 1: data parallel 2, expert data parallel 1; gradients reduced in fp32.
    "gemma4-tp4-ep8": dict(arch=GEMMA4, tp=4, ep=8, etp=1, pp=1, dp_factor=1, grad_fp32=True),
    "gemma4-tp4-ep8-bf16grads": dict(arch=GEMMA4, tp=4, ep=8, etp=1, pp=1, dp_factor=1, grad_fp32=False),
    # 16 H100: TP 1, EP 16: data parallel 16, expert data parallel 1.
    "qwen3-ep16": dict(arch=QWEN3, tp=1, ep=16, etp=1, pp=1, dp_factor=1, grad_fp32=False),
    # 32 H100: TP 4 + SP, PP 4 (the first stage, 20 layers and the embedding), DP 2.
    "llama70-tp4-pp4-dp2": dict(arch=LLAMA70, tp=4, ep=1, etp=1, pp=4, dp_factor=2, grad_fp32=False),
}


def main(name):
    import torch

    sh = SHAPES[name]
    a = sh["arch"]
    parallel = {"tp": sh["tp"], "cp": 1, "ep": sh["ep"], "etp": sh["etp"], "pp": sh["pp"], "stage": 0,
                "dp_factor": sh["dp_factor"]}
    fake_group.fill_gathers_with_peer_copies(torch)
    from megatron.core import parallel_state
    from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig
    from megatron.core.models.gpt import GPTModel
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer
    from megatron.core.transformer import TransformerConfig

    placed = fake_group.init(torch, parallel, seed=1234)
    moe = "num_moe_experts" in a
    config = TransformerConfig(
        num_layers=a["num_layers"], hidden_size=a["hidden_size"], ffn_hidden_size=a["ffn_hidden_size"],
        num_attention_heads=a["num_attention_heads"], num_query_groups=a["num_query_groups"],
        kv_channels=a["kv_channels"], qk_layernorm=a.get("qk_layernorm", False), gated_linear_unit=True,
        add_bias_linear=False, normalization="RMSNorm", tensor_model_parallel_size=sh["tp"],
        pipeline_model_parallel_size=sh["pp"], expert_model_parallel_size=sh["ep"],
        expert_tensor_parallel_size=sh["etp"], sequence_parallel=sh["tp"] > 1, bf16=True,
        params_dtype=torch.bfloat16, pipeline_dtype=torch.bfloat16, use_cpu_initialization=False,
        perform_initialization=False,
        **({"num_moe_experts": a["num_moe_experts"], "moe_router_topk": a["moe_router_topk"],
            "moe_ffn_hidden_size": a["moe_ffn_hidden_size"], "moe_token_dispatcher_type": "alltoall",
            "moe_router_dtype": "fp32",
            **({"moe_shared_expert_intermediate_size": a["moe_shared_expert_intermediate_size"]}
               if "moe_shared_expert_intermediate_size" in a else {})} if moe else {}))
    spec = get_gpt_layer_local_spec(num_experts=a.get("num_moe_experts"), moe_grouped_gemm=False,
                                    qk_layernorm=a.get("qk_layernorm", False), normalization="RMSNorm")
    pp_rank = parallel_state.get_pipeline_model_parallel_rank()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    model = GPTModel(config, spec, vocab_size=a["vocab"], max_sequence_length=4096,
                     pre_process=pp_rank == 0, post_process=pp_rank == sh["pp"] - 1,
                     share_embeddings_and_output_weights=a["tied"], position_embedding_type="rope")
    model.cuda()
    after_model = torch.cuda.memory_allocated()
    params = sum(p.numel() for p in model.parameters())
    expert_params = sum(p.numel() for p in model.parameters() if not getattr(p, "allreduce", True))
    ddp_config = DistributedDataParallelConfig(grad_reduce_in_fp32=sh["grad_fp32"], overlap_grad_reduce=True,
                                               overlap_param_gather=True, use_distributed_optimizer=True)
    model = DistributedDataParallel(config, ddp_config, model)
    after_ddp = torch.cuda.memory_allocated()
    opt_config = OptimizerConfig(optimizer="adam", lr=1e-4, bf16=True, use_distributed_optimizer=True,
                                 clip_grad=1.0, params_dtype=torch.bfloat16)
    optimizer = get_megatron_optimizer(opt_config, [model], use_gloo_process_groups=False)
    after_optimizer = torch.cuda.memory_allocated()
    model.zero_grad_buffer()
    optimizer.zero_grad()
    optimizer.step()
    after_step = torch.cuda.memory_allocated()
    optimizer.zero_grad()
    optimizer.step()
    after_second_step = torch.cuda.memory_allocated()
    # What the optimizers hold by name: Adam's moments (and its step counts), and the fp32 main-parameter shards.
    held = {}
    for opt in getattr(optimizer, "chained_optimizers", [optimizer]):
        for state in opt.optimizer.state.values():
            for key, t in state.items():
                if torch.is_tensor(t):
                    held[key] = held.get(key, 0) + t.numel() * t.element_size()
        for group in getattr(opt, "shard_fp32_from_float16_groups", []):
            for t in group:
                held["fp32_main_params"] = held.get("fp32_main_params", 0) + t.numel() * t.element_size()
    print(json.dumps({
        "shape": name, "placed": placed, "world": torch.distributed.get_world_size(),
        "data_parallel": parallel_state.get_data_parallel_world_size(),
        "expert_data_parallel": parallel_state.get_expert_data_parallel_world_size(),
        "params": params, "expert_params": expert_params, "grad_reduce_in_fp32": sh["grad_fp32"],
        "bytes": {"model": after_model - base, "ddp_buffers": after_ddp - after_model,
                  "optimizer_at_construction": after_optimizer - after_ddp,
                  "optimizer_first_step": after_step - after_optimizer, "total": after_step - base,
                  "second_step": after_second_step - after_step, "optimizer_tensors": held,
                  "peak": torch.cuda.max_memory_allocated() - base},
    }), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
