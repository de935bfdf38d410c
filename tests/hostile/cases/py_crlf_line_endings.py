from megatron.bridge.training.config import ConfigContainer
from megatron.bridge.models import GPTModelProvider


def crlf_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=2))
    cfg.model.recompute_granularity = "full"
    return cfg
