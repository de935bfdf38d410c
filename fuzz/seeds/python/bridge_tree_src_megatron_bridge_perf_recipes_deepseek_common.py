# Re-exports a recipe of another package under a shorter name, as Bridge's perf helpers do.
from megatron.bridge.perf_recipes._common import _benchmark_common, _perf_precision  # noqa: F401
from megatron.bridge.recipes.deepseek.deepseek_v3 import deepseek_v3_pretrain_config as base_recipe  # noqa: F401
from megatron.bridge.recipes.deepseek.deepseek_v3 import set_pipeline_layout  # noqa: F401
from megatron.bridge.training.config import ConfigContainer  # noqa: F401


def _deepseek_v3_common(cfg: ConfigContainer) -> None:
    cfg.model.moe_router_fusion = True
    cfg.model.recompute_granularity = "selective"
    cfg.model.moe_router_force_load_balancing = True
