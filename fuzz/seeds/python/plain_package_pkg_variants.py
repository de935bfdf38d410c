from pkg.aliases import tiny_full_alias

from .broken import BROKEN_LABELS


def tiny_block_config():
    cfg = tiny_full_alias()
    cfg.model.recompute_method = "block"
    return cfg


def broken_import_config():  # expect-unresolved
    """A helper module that does not parse: its names are unknown, and the file gets IN002."""
    cfg = tiny_full_alias()
    cfg.model.recompute_granularity = "selective"
    cfg.model.recompute_modules = BROKEN_LABELS
    return cfg
