#!/bin/bash
MBRIDGE_ROOT="${MBRIDGE_ROOT:-/opt/Megatron-Bridge}"
export PYTHONPATH="${MBRIDGE_ROOT}/shared${PYTHONPATH:+:$PYTHONPATH}"
cd "${MBRIDGE_ROOT}"
python tools/standalone.py
