from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class MixedPrecisionConfig:
    bf16: bool = False
    fp16: bool = False
    params_dtype: object = None
    fp8: Optional[str] = None
    fp8_recipe: str = "tensorwise"
    grad_reduce_in_fp32: bool = True
    first_last_layers_bf16: bool = False


# The linter knows these recipes by name (schemas/precision.json) and does not read their bodies.
def bf16_mixed() -> MixedPrecisionConfig:
    return MixedPrecisionConfig(bf16=True, params_dtype=torch.bfloat16)


def bf16_with_fp8_delayed_scaling_mixed() -> MixedPrecisionConfig:
    return MixedPrecisionConfig(bf16=True, params_dtype=torch.bfloat16, fp8="hybrid", fp8_recipe="delayed")


def bf16_with_fp8_current_scaling_mixed() -> MixedPrecisionConfig:
    return MixedPrecisionConfig(bf16=True, params_dtype=torch.bfloat16, fp8="hybrid", fp8_recipe="tensorwise")
