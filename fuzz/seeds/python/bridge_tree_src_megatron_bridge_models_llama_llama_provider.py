from dataclasses import dataclass, field

from megatron.bridge.models.gpt_provider import GPTModelProvider


@dataclass
class LlamaModelProvider(GPTModelProvider):
    normalization: str = "RMSNorm"
    gated_linear_unit: bool = True
    add_bias_linear: bool = False


@dataclass
class Llama3ModelProvider8B(LlamaModelProvider):
    num_layers: int = 32
    hidden_size: int = 4096
    num_attention_heads: int = 32
    num_query_groups: int = 8
    ffn_hidden_size: int = 14336
    # Inherited by every recipe that builds this provider without overriding it.
    recompute_granularity: str = "full"  # expect: RC004
    recompute_method: str = "uniform"
    recompute_num_layers: int = 1
    distribute_saved_activations: bool = field(default=True)  # expect: RC007
