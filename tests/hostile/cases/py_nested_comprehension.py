from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.models import GPTModelProvider


def nest_config() -> ConfigContainer:
    x = [a * b for a in range(3000) for b in range(3000)]
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=len(x)))
    return cfg
