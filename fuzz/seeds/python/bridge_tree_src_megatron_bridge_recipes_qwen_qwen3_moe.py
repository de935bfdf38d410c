from megatron.bridge import AutoBridge
from megatron.bridge.recipes.common import _pretrain_common
from megatron.bridge.training.config import ConfigContainer

TINY = "fixture-org/tiny-qwen-moe"  # only in the fixture's Hugging Face cache (hf_cache/)


def tiny_qwen_moe_pretrain_config() -> ConfigContainer:
    """Every layer is MoE: recomputing the dense "mlp" does nothing."""
    cfg = _pretrain_common()
    cfg.model = AutoBridge.from_hf_pretrained(TINY).to_megatron_provider(load_weights=False)
    cfg.model.recompute_granularity = "selective"
    cfg.model.recompute_modules = ["moe_act", "mlp"]  # expect: RC102
    return cfg


def mystery_pretrain_config() -> ConfigContainer:
    """An unknown model: its architecture stays unknown and the linter says how to supply it."""
    cfg = _pretrain_common()
    cfg.model = AutoBridge.from_hf_pretrained("unknown-org/mystery-7b").to_megatron_provider()  # expect: IN010
    cfg.model.recompute_granularity = "selective"
    cfg.model.recompute_modules = ["moe_act"]  # moe_grouped_gemm is unknown: no RC009
    return cfg
