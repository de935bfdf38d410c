import os

from megatron.bridge.training.config import ConfigContainer, TokenizerConfig, TrainingConfig
from megatron.core.distributed import DistributedDataParallelConfig

DEFAULT_SEQ_LENGTH = 4096


def _pretrain_common() -> ConfigContainer:
    """Base of every pre-training recipe: no model yet, bf16."""
    checkpoint_dir = os.path.join(os.getcwd(), "nemo_experiments", "checkpoints")
    cfg = ConfigContainer(
        model=None,
        train=TrainingConfig(train_iters=300000, global_batch_size=32, micro_batch_size=2),
        tokenizer=TokenizerConfig(tokenizer_type="HuggingFaceTokenizer", tokenizer_model=None),
        ddp=DistributedDataParallelConfig(check_for_nan_in_grad=True, grad_reduce_in_fp32=True),
        comm_overlap=None,
        mixed_precision="bf16_mixed",
    )
    cfg.checkpoint_dir = checkpoint_dir  # not a ConfigContainer section: the linter ignores it
    return cfg


def _parallelism(gpus: int, tp: int = 1):
    """Returns (tensor, pipeline) sizes: a helper result recipes unpack."""
    pp = gpus // (tp * 2) if gpus >= 8 else 1
    return tp, pp
