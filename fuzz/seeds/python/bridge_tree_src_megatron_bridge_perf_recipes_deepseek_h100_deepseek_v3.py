"""H100 performance recipes for DeepSeek V3 (shapes of Bridge's flat perf recipes)."""

from ..common import ConfigContainer, _benchmark_common, _deepseek_v3_common, _perf_precision, base_recipe
from ..common import set_pipeline_layout


def deepseek_v3_pretrain_1024gpu_h100_bf16_config() -> ConfigContainer:
    cfg = base_recipe()
    cfg.mixed_precision = _perf_precision("bf16")
    _deepseek_v3_common(cfg)
    cfg.model.virtual_pipeline_model_parallel_size = 4
    cfg.model.recompute_modules = ["mla_up_proj", "mlp"]
    set_pipeline_layout(cfg.model, "Et|(tt|)*30mL")
    _benchmark_common(cfg)
    return cfg


def deepseek_v3_pretrain_1024gpu_h100_fp8cs_config() -> ConfigContainer:
    cfg = base_recipe()
    cfg.mixed_precision = _perf_precision("fp8_cs")
    _deepseek_v3_common(cfg)
    cfg.model.recompute_modules = ["mla_up_proj", "moe_act"]  # expect: RC013, RC105
    _benchmark_common(cfg)
    return cfg


def deepseek_v3_pretrain_1024gpu_h100_fp8ds_config() -> ConfigContainer:
    """Delayed scaling discards moe_act's output: Megatron Core rejects it."""
    cfg = deepseek_v3_pretrain_1024gpu_h100_fp8cs_config()
    cfg.mixed_precision = _perf_precision("fp8_ds")
    return cfg


def deepseek_v3_pretrain_1024gpu_h100_fp8sc_config() -> ConfigContainer:
    cfg = deepseek_v3_pretrain_1024gpu_h100_fp8cs_config()
    cfg.mixed_precision.fp8_recipe = "blockwise"
    cfg.comm_overlap.overlap_moe_expert_parallel_comm = True
    cfg.model.recompute_modules += ["moe"]  # expect: RC027, RC114
    return cfg


def deepseek_v3_pretrain_64gpu_h100_bf16_config() -> ConfigContainer:
    cfg = deepseek_v3_pretrain_1024gpu_h100_bf16_config()
    cfg.train.global_batch_size = 1024
    return cfg
