from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.models import GPTModelProvider


def rng_config() -> ConfigContainer:
    x = list(range(10**12))
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=len(x)))
    return cfg
