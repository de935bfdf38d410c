# Excerpt of NVIDIA/Megatron-LM megatron/core/transformer/enums.py at b3b1e2d793c596c2fa61076d001ab93f294e4e87: the statements at lines 51-58, verbatim
# (re-indented where a statement left its block); written by tests/data/mcore_source/make_excerpts.py.

import enum


class AttnBackend(enum.Enum):
    """Attention Backend"""

    flash = 1
    fused = 2
    unfused = 3
    local = 4
    auto = 5
