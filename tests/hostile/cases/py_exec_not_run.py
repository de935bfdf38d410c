import os
from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.models import GPTModelProvider

os.system('touch RAN')
exec("open('RAN2', 'w')")


def side_config() -> ConfigContainer:
    return ConfigContainer(model=GPTModelProvider(num_layers=2))
