from megatron.bridge.models import GPTModelProvider  # outside this root: Megatron Core defaults apply

__all__ = ["BASE_LAYERS", "base_model"]

BASE_LAYERS = 2 * 2
_PRIVATE = "not exported by *"


def base_model(**overrides):
    return GPTModelProvider(num_layers=BASE_LAYERS, hidden_size=256, num_attention_heads=4, **overrides)
