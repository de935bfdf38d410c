# Excerpt of NVIDIA/Megatron-LM megatron/core/transformer/transformer_config.py at b3b1e2d793c596c2fa61076d001ab93f294e4e87: the statements at lines 7-7, 8-8, 10-10, 11-11, 23-29, 35-35, 56-58, 69-69, 148-148, 211-211, 243-243, 294-294, 570-570, 598-598, 623-625, 985-985, 1176-1180, 1209-1209, 1235-1235, 1398-1398, 1411-1411, 2172-2173, 2177-2187, 2188-2188, 3530-3532, 3539-3539, 3542-3542, 3559-3559, 3565-3565, verbatim
# (re-indented where a statement left its block); written by tests/data/mcore_source/make_excerpts.py.

from dataclasses import dataclass, field


from typing import Callable, List, Literal, Optional, Tuple, Union


import torch


import torch.nn.functional as F


from megatron.core.transformer.enums import (
    AttnBackend,
    CudaGraphModule,
    CudaGraphScope,
    InferenceCudaGraphScope,
    LayerType,
)


from ..model_parallel_config import ModelParallelConfig


@dataclass
@experimental_api
class TransformerConfig(ModelParallelConfig):
    num_layers: int = field(default=0, metadata={"argparse_meta": {"default": None}})
    attention_backend: AttnBackend = AttnBackend.auto
    activation_func: Callable[[torch.Tensor], torch.Tensor] = F.gelu
    normalization: Literal['LayerNorm', 'RMSNorm'] = "LayerNorm"
    multi_latent_attention: bool = False
    recompute_granularity: Optional[Literal['full', 'selective']] = None
    recompute_modules: Optional[List[str]] = None
    fp8: Optional[Literal['e4m3', 'hybrid']] = field(
        default=None, metadata={"argparse_meta": {"arg_names": ["--fp8-format"]}}
    )
    moe_layer_recompute: bool = False
    cuda_graph_scope: Optional[
        Union[
            str, CudaGraphModule, CudaGraphScope, List[Union[str, CudaGraphModule, CudaGraphScope]]
        ]
    ] = None
    enable_hyper_connections: bool = False
    mhc_recompute_layer_num: Optional[int] = None
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
            "mhc",
            "gdn",
        }
        invalid_modules = set(self.recompute_modules) - allowed_modules


@dataclass
@experimental_api
class MLATransformerConfig(TransformerConfig):
    multi_latent_attention: bool = True
    q_lora_rank: int = 512
    normalization: str = "RMSNorm"
    rotary_base: float = 10000
