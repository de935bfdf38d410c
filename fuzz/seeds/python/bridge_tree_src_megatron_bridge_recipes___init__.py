# Re-export chain: megatron.bridge.recipes.llama3_8b -> recipes/llama/__init__.py -> recipes/llama/llama3.py
from megatron.bridge.recipes.llama import *  # noqa: F401,F403
