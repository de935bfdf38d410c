# Excerpt of NVIDIA/Megatron-LM megatron/core/package_info.py at b3b1e2d793c596c2fa61076d001ab93f294e4e87: the statements at lines 1-8, verbatim
# (re-indented where a statement left its block); written by tests/data/mcore_source/make_excerpts.py.
# Copyright (c) 2023, NVIDIA CORPORATION.  All rights reserved.
# isort: skip_file


MAJOR = 0
MINOR = 19
PATCH = 0
PRE_RELEASE = ''
