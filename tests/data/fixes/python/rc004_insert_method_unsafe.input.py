# unsafe-fixes
# mcore: 0.20.dev
def pretrain_config():
    cfg = _base()
    cfg.model.hidden_dropout = 0.0
    cfg.model.attention_dropout = 0.0
    cfg.model.recompute_granularity = "full"
    cfg.model.recompute_num_layers = 1
    return cfg
