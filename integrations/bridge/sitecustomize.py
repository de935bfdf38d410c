# Loaded by every Python process when integrations/bridge is on PYTHONPATH: with MBRIDGE_LINT_MEMORY_JSON set, each
# rank writes its peak allocated device memory on exit (see mbridge_lint_memory). Does nothing otherwise.
import os

if os.environ.get("MBRIDGE_LINT_MEMORY_JSON"):
    try:
        import mbridge_lint_memory

        mbridge_lint_memory.install_exit_report()
    except Exception:  # pragma: no cover - never break the user's interpreter
        pass
