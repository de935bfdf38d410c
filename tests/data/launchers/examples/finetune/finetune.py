from lora_knobs import set_lora
from private_knobs import tune

from megatron.bridge.models import GPTModelProvider
from megatron.bridge.training.config import ConfigContainer, TrainingConfig


def finetune_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8), train=TrainingConfig(micro_batch_size=1))
    set_lora(cfg)
    return cfg


def private_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8, recompute_granularity="full"))
    tune(cfg)
    return cfg
