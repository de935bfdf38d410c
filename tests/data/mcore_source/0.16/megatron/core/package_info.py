# Excerpt of NVIDIA/Megatron-LM megatron/core/package_info.py at 3bec9aa97dda898d16ff5a89bac0ed2b6682b172: the statements at lines 1-8, verbatim
# (re-indented where a statement left its block); written by tests/data/mcore_source/make_excerpts.py.
# Copyright (c) 2023, NVIDIA CORPORATION.  All rights reserved.


MAJOR = 0
MINOR = 16
PATCH = 0
PRE_RELEASE = ""

