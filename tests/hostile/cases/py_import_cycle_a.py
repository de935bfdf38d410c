from py_import_cycle_b import B
from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.models import GPTModelProvider
A = 2


def cyc_config() -> ConfigContainer:
    return ConfigContainer(model=GPTModelProvider(num_layers=A))
