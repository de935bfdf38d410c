from knobs.workload import apply_workload

from megatron.bridge.models import GPTModelProvider
from megatron.bridge.training.config import ConfigContainer, TrainingConfig


def container_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8), train=TrainingConfig(global_batch_size=64))
    apply_workload(cfg)
    return cfg
