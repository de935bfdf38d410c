# unsafe-fixes
# gpu-memory: 80GiB
# mcore: 0.20.dev
# RC203: no recompute and over the budget; the fix sets the cheapest option predicted to fit where the recipe sets
# recompute_granularity, and adds the fields full recompute needs after it.
def pretrain_config():
    cfg = _base()
    cfg.model.transformer_impl = "local"
    cfg.model.num_layers = 32
    cfg.model.hidden_size = 4096
    cfg.model.num_attention_heads = 32
    cfg.model.num_query_groups = 8
    cfg.model.ffn_hidden_size = 14336
    cfg.model.gated_linear_unit = True
    cfg.model.vocab_size = 128256
    cfg.model.bf16 = True
    cfg.model.tensor_model_parallel_size = 8
    cfg.model.seq_length = 8192
    cfg.model.recompute_granularity = "full"
    cfg.model.recompute_method = "block"
    cfg.model.recompute_num_layers = 7
    cfg.model.fine_grained_activation_offloading = False
    return cfg
