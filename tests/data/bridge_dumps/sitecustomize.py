# Installs the import-only stand-ins (standins.py) in every Python process make_dumps.py starts.
import os

if os.environ.get("MBL_STANDINS") == "1":
    import standins

    standins.install()
