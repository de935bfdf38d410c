from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.models import GPTModelProvider


def spin_config() -> ConfigContainer:
    i = 0
    while True:
        i += 1
    return ConfigContainer(model=GPTModelProvider())
