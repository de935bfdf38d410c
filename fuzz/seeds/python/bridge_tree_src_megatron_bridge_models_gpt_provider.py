from dataclasses import dataclass

from megatron.core.transformer.transformer_config import TransformerConfig


@dataclass
class GPTModelProvider(TransformerConfig):
    """Fields a recipe does not set take these defaults, then Megatron Core's."""

    seq_length: int = 1024
    make_vocab_size_divisible_by: int = 128
    share_embeddings_and_output_weights: bool = True
    hidden_dropout: float = 0.0
    attention_dropout: float = 0.0
