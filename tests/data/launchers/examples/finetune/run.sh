#!/bin/sh
PYTHONPATH=$(dirname "$0")/lib:$HOME/private python3 -u "$(dirname "$0")/finetune.py" --config base
