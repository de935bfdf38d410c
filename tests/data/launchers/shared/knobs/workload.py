def apply_workload(cfg):
    cfg.train.global_batch_size = 1024
    cfg.model.recompute_granularity = "selective"
    cfg.model.recompute_modules = ["moe", "layernorm"]
    return cfg
