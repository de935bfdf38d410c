# Excerpt of NVIDIA/Megatron-LM megatron/core/transformer/enums.py at 3bec9aa97dda898d16ff5a89bac0ed2b6682b172: the statements at lines 60-67, verbatim
# (re-indented where a statement left its block); written by tests/data/mcore_source/make_excerpts.py.

import enum


class AttnBackend(enum.Enum):
    """Attention Backend"""

    flash = 1
    fused = 2
    unfused = 3
    local = 4
    auto = 5
