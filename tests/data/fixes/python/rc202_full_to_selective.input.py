# unsafe-fixes
# gpu-memory: 80GiB
# mcore: 0.20.dev
def pretrain_config():
    cfg = _base()
    cfg.train.micro_batch_size = 1
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
    cfg.model.recompute_method = "uniform"
    cfg.model.recompute_num_layers = 1
    return cfg
