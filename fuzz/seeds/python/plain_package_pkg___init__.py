from .recipes import *  # noqa: F401,F403
