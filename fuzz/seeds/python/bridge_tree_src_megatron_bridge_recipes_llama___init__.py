from .llama3 import *  # noqa: F401,F403
from .llama3 import llama3_8b_pretrain_config as llama3_8b  # an alias of a recipe
