import torch

from megatron.bridge import AutoBridge
from megatron.bridge.models import Llama3ModelProvider8B
from megatron.bridge.recipes.common import DEFAULT_SEQ_LENGTH, _parallelism, _pretrain_common
from megatron.bridge.training.config import ConfigContainer

from ._llama_common import _enable_sequence_parallel, _llama_recompute

__all__ = ["llama3_8b_pretrain_config", "llama3_70b_pretrain_config", "llama3_8b_finetune_config",
           "llama3_8b_provider_config", "llama3_8b_sp_config"]

SEQUENCE_LENGTH_16K: int = DEFAULT_SEQ_LENGTH * 4


def llama3_8b_pretrain_config() -> ConfigContainer:
    """Llama 3 8B from its Hugging Face config (bundled catalog): no recompute."""
    cfg = _pretrain_common()
    cfg.model = AutoBridge.from_hf_pretrained("meta-llama/Meta-Llama-3-8B").to_megatron_provider(load_weights=False)
    cfg.model.tensor_model_parallel_size, cfg.model.pipeline_model_parallel_size = _parallelism(8)
    cfg.model.seq_length = SEQUENCE_LENGTH_16K
    cfg.model.pipeline_dtype = torch.bfloat16
    cfg.model.recompute_granularity = None
    cfg.model.recompute_modules = None
    return cfg


def llama3_70b_pretrain_config() -> ConfigContainer:
    cfg = _pretrain_common()
    cfg.model = AutoBridge.from_hf_pretrained("meta-llama/Meta-Llama-3-70B").to_megatron_provider(load_weights=False)
    cfg.model.tensor_model_parallel_size = 4
    cfg.model.pipeline_model_parallel_size = 4  # 80 layers: 20 per stage
    cfg.model.recompute_granularity = "full"
    cfg.model.recompute_method = "uniform"
    cfg.model.recompute_num_layers = 3  # expect: RC112
    return cfg


def llama3_8b_finetune_config(peft_scheme: str = "lora", packed: bool = False) -> ConfigContainer:
    """A parameter with a default chooses the branch."""
    cfg = llama3_8b_pretrain_config()
    if peft_scheme == "lora":
        cfg.peft = {"dim": 16, "alpha": 32}
        _llama_recompute(cfg)
    else:
        cfg.model.recompute_granularity = "full"
    if packed:
        cfg.model.recompute_granularity = "unused-branch"
    return cfg


def llama3_8b_provider_config() -> ConfigContainer:
    """A provider class built directly: its dataclass defaults (full, uniform, 1) apply."""
    cfg = _pretrain_common()
    cfg.model = Llama3ModelProvider8B(
        tensor_model_parallel_size=2,
        recompute_method=None,
    )
    return cfg


def llama3_8b_sp_config() -> ConfigContainer:
    cfg = llama3_8b_provider_config()
    cfg.model.recompute_method = "block"
    cfg.model.recompute_num_layers = 4
    _enable_sequence_parallel(cfg)  # TP 2 > 1, so sequence parallel: clashes with the provider's default
    return cfg


def llama3_8b_labels_config() -> ConfigContainer:
    """Found by its *_config name (no annotation). The helper gets keyword overrides through **kwargs."""
    cfg = llama3_8b_pretrain_config()
    _llama_recompute(cfg, labels=["core_attn"], recompute_num_layers=2)  # expect: RC101
    return cfg
