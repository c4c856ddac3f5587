"""``python -m cli ARGS`` runs ``lumen ARGS`` (e.g. ``python -m cli chat``): tests, scripts."""

import sys

from cli.app import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
