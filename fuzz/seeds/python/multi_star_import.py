from megatron.bridge.training.config import ConfigContainer

from .m0 import *
from pkg.m1 import tune as tune_model


def starred_config() -> ConfigContainer:
    cfg = ConfigContainer(model=make_model(layers=LAYERS), mixed_precision="bf16_mixed")
    tune_model(cfg, modules=["core_attn", "mlp"])
    return cfg


def branch_config() -> ConfigContainer:
    cfg = starred_config()
    if cfg.model.num_layers > 2:
        cfg.model.recompute_granularity = "full"
    return cfg
#=== m0
from megatron.bridge.models import GPTModelProvider

__all__ = ["LAYERS", "make_model"]
LAYERS = 2 * 2


def make_model(layers, **overrides):
    return GPTModelProvider(num_layers=layers, hidden_size=256, num_attention_heads=4, **overrides)
#=== m1
def tune(cfg, modules=None):
    cfg.model.recompute_granularity = "selective"
    cfg.model.recompute_modules = list(modules or []) + ["layernorm"]
