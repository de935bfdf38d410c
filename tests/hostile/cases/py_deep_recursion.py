from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.models import GPTModelProvider


def f(n):
    return f(n + 1)


def rec_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=f(1)))
    return cfg
