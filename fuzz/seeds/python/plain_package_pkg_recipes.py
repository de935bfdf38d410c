from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.training.mixed_precision import MixedPrecisionConfig, bf16_with_fp8_delayed_scaling_mixed

from .base import *  # noqa: F403  (BASE_LAYERS, base_model)


def tiny_full_config() -> ConfigContainer:
    """recompute_num_layers comes from the command-line override (2 of 4 layers: even)."""
    cfg = ConfigContainer(model=base_model(), mixed_precision="bf16_mixed")
    cfg.model.recompute_granularity = "full"  # expect: RC115
    cfg.model.recompute_method = "uniform"  # expect: RC108
    return cfg


def fp8_delayed_config() -> ConfigContainer:
    cfg = ConfigContainer(model=base_model(transformer_impl="transformer_engine"))
    cfg.mixed_precision = bf16_with_fp8_delayed_scaling_mixed()  # a recipe the linter knows by name
    cfg.model.recompute_granularity = "selective"
    cfg.model.recompute_modules = ["layernorm"]  # expect: RC013, RC106
    return cfg


def mixed_precision_object_config() -> ConfigContainer:
    cfg = ConfigContainer(model=base_model())
    cfg.mixed_precision = MixedPrecisionConfig(bf16=True, fp8="hybrid", fp8_recipe="delayed")
    cfg.model.recompute_granularity = "selective"
    cfg.model.recompute_modules = ["moe_act"]  # expect: RC009, RC013, RC103
    return cfg
