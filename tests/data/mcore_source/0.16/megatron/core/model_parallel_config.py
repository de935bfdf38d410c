# Excerpt of NVIDIA/Megatron-LM megatron/core/model_parallel_config.py at 3bec9aa97dda898d16ff5a89bac0ed2b6682b172: the statements at lines 4-4, 5-5, 7-7, 10-11, 20-20, 31-31, 39-39, 112-112, 288-288, verbatim
# (re-indented where a statement left its block); written by tests/data/mcore_source/make_excerpts.py.

from dataclasses import dataclass, field


from typing import Callable, ContextManager, Literal, Optional


import torch


@dataclass
class ModelParallelConfig:
    tensor_model_parallel_size: int = 1
    virtual_pipeline_model_parallel_size: Optional[int] = None
    sequence_parallel: bool = False
    params_dtype: torch.dtype = torch.float32
    pipeline_dtype: torch.dtype = None
