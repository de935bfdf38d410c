# mcore: 0.20.dev
"""A recipe that switched from full to selective recompute and kept the layer count."""


def pretrain_config():
    cfg = _base()
    cfg.model.transformer_impl = "local"
    cfg.model.recompute_granularity = "selective"
    cfg.model.recompute_num_layers = 4  # left from the full-recompute days
    cfg.model.recompute_modules = ["core_attn"]
    return cfg
