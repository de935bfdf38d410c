# mcore: 0.20.dev
def pretrain_config():
    cfg = _base()
    cfg.model.transformer_impl = "local"
    cfg.model.recompute_granularity = "selective"
    cfg.model.recompute_modules = ["core_atn", 'mlp']  # attention and MLP
    return cfg
