def set_lora(cfg):
    cfg.train.micro_batch_size = 4
