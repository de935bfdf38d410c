from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.models import GPTModelProvider


def pow_config() -> ConfigContainer:
    x = 2 ** (2 ** 40)
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=x))
    return cfg
