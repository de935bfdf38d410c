from knobs.workload import apply_workload
from vendored_knobs import set_tp

from megatron.bridge.models import GPTModelProvider
from megatron.bridge.training.config import ConfigContainer, TrainingConfig


def tuned_config() -> ConfigContainer:
    cfg = ConfigContainer(
        model=GPTModelProvider(num_layers=52, num_moe_experts=128, tensor_model_parallel_size=2),
        train=TrainingConfig(global_batch_size=3072, micro_batch_size=2),
    )
    apply_workload(cfg)
    return cfg


def vendored_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8, tensor_model_parallel_size=2))
    set_tp(cfg)
    return cfg
