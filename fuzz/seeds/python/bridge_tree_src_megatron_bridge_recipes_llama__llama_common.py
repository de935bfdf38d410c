# A helper in a sibling module that mutates the config in place.
SELECTIVE_LABELS = ("layernorm",)  # expect: RC106
EXTRA_LABELS = ["mlp"]


def _llama_recompute(cfg, labels=SELECTIVE_LABELS, **overrides):
    model = cfg.model  # a local alias: writes through it change cfg.model
    model.recompute_granularity = "selective"
    model.recompute_modules = [*labels, *EXTRA_LABELS]
    for key, value in overrides.items():
        setattr(model, key, value)  # expect: RC006


def _enable_sequence_parallel(cfg):
    cfg.model.sequence_parallel = cfg.model.tensor_model_parallel_size > 1
