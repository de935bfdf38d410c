# A call the linter does not follow, made in a loop with a config holding 50,000 lists: each call may change all of
# it, so the first makes it unknown and the rest have nothing left to walk.
from megatron.bridge.models import GPTModelProvider
from megatron.bridge.training.config import ConfigContainer
from somewhere_else import poke


def big_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8))
    cfg.model.extra = [[i, i] for i in range(50000)]
    i = 0
    while i < 5000:
        poke(cfg)
        i += 1
    return cfg


def wide_config() -> ConfigContainer:
    cfg = ConfigContainer(model=GPTModelProvider(num_layers=8))
    for i in range(20000):
        setattr(cfg.model, f"field_{i}", i)
    i = 0
    while i < 5000:
        poke(cfg)
        i += 1
    return cfg
