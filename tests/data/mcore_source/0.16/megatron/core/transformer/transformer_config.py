# Excerpt of NVIDIA/Megatron-LM megatron/core/transformer/transformer_config.py at 3bec9aa97dda898d16ff5a89bac0ed2b6682b172: the statements at lines 4-4, 5-5, 7-7, 8-8, 12-12, 16-16, 33-34, 45-45, 110-110, 173-173, 205-205, 237-237, 383-383, 411-411, 429-431, 705-705, 784-784, 894-894, 906-906, 1193-1194, 1198-1206, 1207-1207, 2005-2006, 2013-2013, 2016-2016, 2031-2031, 2037-2037, verbatim
# (re-indented where a statement left its block); written by tests/data/mcore_source/make_excerpts.py.

from dataclasses import dataclass, field


from typing import Callable, List, Literal, Optional, Tuple, Union


import torch


import torch.nn.functional as F


from megatron.core.transformer.enums import AttnBackend, CudaGraphScope


from ..model_parallel_config import ModelParallelConfig


@dataclass
class TransformerConfig(ModelParallelConfig):
    num_layers: int = field(default=0, metadata={"argparse_meta": {"default": None}})
    attention_backend: AttnBackend = AttnBackend.auto
    activation_func: Callable = F.gelu
    normalization: Literal['LayerNorm', 'RMSNorm'] = "LayerNorm"
    multi_latent_attention: bool = False
    recompute_granularity: Optional[Literal['full', 'selective']] = None
    recompute_modules: Optional[List[str]] = None
    fp8: Optional[Literal['e4m3', 'hybrid']] = field(
        default=None, metadata={"argparse_meta": {"arg_names": ["--fp8-format"]}}
    )
    moe_layer_recompute: bool = False
    cuda_graph_scope: Union[str, CudaGraphScope, List[str], List[CudaGraphScope]] = "full"
    offload_modules: Optional[list[str]] = field(default_factory=list)
    min_offloaded_tensor_size: int = 1024 * 1024
    def __post_init__(self):
        if self.recompute_modules is None:
            self.recompute_modules = ["core_attn"]
        allowed_modules = {
            "core_attn",
            "moe_act",
            "layernorm",
            "mla_up_proj",
            "mlp",
            "moe",
            "shared_experts",
        }
        invalid_modules = set(self.recompute_modules) - allowed_modules


@dataclass
class MLATransformerConfig(TransformerConfig):
    multi_latent_attention: bool = True
    q_lora_rank: int = 512
    normalization: str = "RMSNorm"
    rotary_base: float = 10000
