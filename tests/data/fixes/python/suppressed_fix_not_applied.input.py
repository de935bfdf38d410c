# mcore: 0.20.dev
def pretrain_config():
    cfg = _base()
    cfg.model.transformer_impl = "local"
    cfg.model.recompute_granularity = "selective"
    cfg.model.recompute_method = "block"  # mbridge-lint: disable=RC108 -- kept for the next experiment
    return cfg
