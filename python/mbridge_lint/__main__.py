"""`python -m mbridge_lint ARGS` runs mbridge-lint like the `mbridge-lint` command."""

from mbridge_lint import main

main()
