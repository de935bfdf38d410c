# An alias module: recipes re-exported under other names.
from pkg.recipes import tiny_full_config as tiny_full_alias  # noqa: F401
