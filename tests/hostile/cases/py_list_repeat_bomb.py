from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.models import GPTModelProvider


def rep_config() -> ConfigContainer:
    x = [0] * 10**12
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=len(x)))
    return cfg
