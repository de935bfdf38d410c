"""Evaluator shapes: conditions, loops, comprehensions, unknowns, recursion."""
import os

from megatron.bridge.models import GPTModelProvider, TinyMoEProvider
from megatron.bridge.recipes.common import _pretrain_common
from megatron.bridge.training.config import ConfigContainer

from . import cycle_a

LABELS = {"dense": ["mlp"], "moe": ["moe_act"]}  # expect: RC009
SCHEDULE = [("full", "uniform", 2), ("selective", None, None)]


def _apply(cfg, granularity, method, layers):
    cfg.model.recompute_granularity, cfg.model.recompute_method, cfg.model.recompute_num_layers = (
        granularity, method, layers)


def conditional_on_value_config() -> ConfigContainer:
    """An `if` on another config value that is known."""
    cfg = _pretrain_common()
    cfg.model = GPTModelProvider(num_layers=24, hidden_size=2048, num_attention_heads=16,
                                 pipeline_model_parallel_size=4)
    cfg.model.recompute_granularity = "full"
    if cfg.model.pipeline_model_parallel_size > 1:
        cfg.model.recompute_method = "block"
        cfg.model.recompute_num_layers = 6  # expect: RC113
    else:
        cfg.model.recompute_method = "uniform"
    return cfg


def loop_and_comprehension_config() -> ConfigContainer:
    cfg = _pretrain_common()
    cfg.model = TinyMoEProvider()
    for name, labels in LABELS.items():
        if name == "moe":
            cfg.model.recompute_modules = [label for label in labels if label != "core_attn"]
    cfg.model.recompute_granularity = "selective"
    return cfg


def schedule_config() -> ConfigContainer:
    cfg = _pretrain_common()
    cfg.model = GPTModelProvider(num_layers=8, hidden_size=1024, num_attention_heads=8)
    granularity, method, layers = SCHEDULE[0]
    _apply(cfg, granularity, method, layers)  # 8 layers, uniform 2: even
    return cfg


def environment_dependent_config() -> ConfigContainer:  # expect-unresolved
    """Both branches run and merge: the granularity becomes unknown, so no rule reasons about it."""
    cfg = _pretrain_common()
    cfg.model = GPTModelProvider(num_layers=8, hidden_size=1024, num_attention_heads=8)
    if os.environ.get("USE_FULL_RECOMPUTE"):
        cfg.model.recompute_granularity = "full"
    else:
        cfg.model.recompute_granularity = "selective"
    cfg.model.recompute_modules = ["core_attn"]  # selective or full is unknown: no RC101/RC109
    return cfg


def same_either_way_config() -> ConfigContainer:
    """Unknown condition, same value on both branches: still known."""
    cfg = _pretrain_common()
    cfg.model = GPTModelProvider(num_layers=8, hidden_size=1024, num_attention_heads=8)
    if os.environ.get("DEBUG"):
        cfg.model.recompute_granularity = "selective"
        cfg.train.train_iters = 10
    else:
        cfg.model.recompute_granularity = "selective"
    cfg.model.recompute_modules = ["moe"]  # expect: RC103
    return cfg


def guard_clause(cfg, layout=None):
    if layout is None:
        raise ValueError("a layout is required")
    cfg.model.recompute_method = "uniform"


def raising_guard_config() -> ConfigContainer:
    """A path that raises is not a run: the other path is the only outcome."""
    cfg = _pretrain_common()
    cfg.model = GPTModelProvider(num_layers=8, hidden_size=1024, num_attention_heads=8)
    cfg.model.recompute_granularity = "full"
    cfg.model.recompute_num_layers = 1
    guard_clause(cfg, layout=os.environ.get("LAYOUT"))
    return cfg


def _deepen(cfg, depth):
    return _deepen(cfg, depth + 1)


def recursive_helper_config() -> ConfigContainer:  # expect-unresolved
    """A recursive helper stops at the call-depth limit with an unknown result, never a crash."""
    cfg = _pretrain_common()
    cfg.model = GPTModelProvider(num_layers=8, hidden_size=1024, num_attention_heads=8)
    _deepen(cfg.model, 0)
    return cfg


def import_cycle_config() -> ConfigContainer:
    cfg = _pretrain_common()
    cfg.model = GPTModelProvider(num_layers=8, hidden_size=1024, num_attention_heads=8)
    cfg.model.recompute_granularity = cycle_a.GRANULARITY
    cfg.model.recompute_modules = cycle_a.MODULES
    return cfg


def typo_config() -> ConfigContainer:
    cfg = _pretrain_common()
    cfg.model = GPTModelProvider(num_layers=8, hidden_size=1024, num_attention_heads=8)
    cfg.model.recompute_granularty = "full"  # expect: IN004
    return cfg


def not_a_recipe_config():
    """Named like a recipe but returns no config: skipped."""
    return {"recompute_granularity": "full"}
