"""mbridge-lint as a Python package: the wheel carries the self-contained mbridge-lint binary, and this module finds
and runs it. The linter itself is C++; nothing here parses or checks a recipe.

    >>> import mbridge_lint
    >>> mbridge_lint.binary_path()          # the executable inside the installed package
    >>> mbridge_lint.main()                 # what the `mbridge-lint` command runs: the binary with sys.argv[1:]
"""

import os
import sys
from importlib import metadata
from pathlib import Path

__all__ = ["__version__", "binary_path", "main"]

try:
    __version__ = metadata.version("mbridge-lint")
except metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "unknown"


def binary_path() -> Path:
    """The mbridge-lint executable this package carries."""
    return Path(__file__).resolve().parent / "bin" / "mbridge-lint"


def main() -> None:
    """Runs mbridge-lint with this process's arguments, replacing the Python process (the exit code, standard streams
    and signals are the binary's own, so `mbridge-lint lsp` talks to an editor directly)."""
    binary = binary_path()
    if not os.access(binary, os.X_OK):
        sys.exit(f"mbridge-lint: the package lacks its binary ({binary}); reinstall the mbridge-lint wheel")
    os.execv(binary, ["mbridge-lint", *sys.argv[1:]])
