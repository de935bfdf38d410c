from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.models import GPTModelProvider


def srep_config() -> ConfigContainer:
    s = 'x' * 10**12
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=len(s)))
    return cfg
