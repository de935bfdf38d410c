# mcore: 0.20.dev
def pretrain_config():
    cfg = _base()
    cfg.model.hidden_dropout = 0.0
    cfg.model.attention_dropout = 0.0
    cfg.model.tensor_model_parallel_size = 4
    cfg.model.sequence_parallel = True
    cfg.model.recompute_granularity = "full"
    cfg.model.recompute_method = "uniform"
    cfg.model.recompute_num_layers = 1
    cfg.model.distribute_saved_activations = False
    return cfg
