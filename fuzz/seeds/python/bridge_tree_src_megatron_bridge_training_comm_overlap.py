from dataclasses import dataclass
from typing import Optional


@dataclass
class CommOverlapConfig:
    tp_comm_overlap: bool = False
    overlap_moe_expert_parallel_comm: Optional[bool] = None
    delay_wgrad_compute: bool = False
    overlap_grad_reduce: bool = True
