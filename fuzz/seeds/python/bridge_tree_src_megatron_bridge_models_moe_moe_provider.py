from dataclasses import dataclass, field

from megatron.bridge.models.gpt_provider import GPTModelProvider


@dataclass
class TinyMoEProvider(GPTModelProvider):
    num_layers: int = 16
    hidden_size: int = 1024
    num_attention_heads: int = 8
    num_moe_experts: int = 8
    moe_grouped_gemm: bool = False
    # The first layer is dense, the other fifteen are MoE.
    moe_layer_freq: list = field(default_factory=lambda: [0] + [1] * 15)
