# Excerpt of NVIDIA/Megatron-LM megatron/core/model_parallel_config.py at b3b1e2d793c596c2fa61076d001ab93f294e4e87: the statements at lines 4-4, 5-5, 7-7, 27-29, 38-38, 49-49, 57-57, 173-173, 371-371, verbatim
# (re-indented where a statement left its block); written by tests/data/mcore_source/make_excerpts.py.

from dataclasses import dataclass, field


from typing import Callable, ContextManager, Literal, Optional, Union


import torch


@dataclass
@experimental_api
class ModelParallelConfig:
    tensor_model_parallel_size: int = 1
    virtual_pipeline_model_parallel_size: Optional[int] = None
    sequence_parallel: bool = False
    params_dtype: torch.dtype = torch.float32
    pipeline_dtype: torch.dtype = None
