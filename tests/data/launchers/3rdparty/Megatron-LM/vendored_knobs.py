def set_tp(cfg):
    cfg.model.tensor_model_parallel_size = 8
