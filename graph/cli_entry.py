"""``python -m graph.cli_entry`` runs ``lumen chat`` (the REPL) — used by tests and scripts."""

import sys

from graph.cli import main

if __name__ == "__main__":
    sys.exit(main(["chat", *sys.argv[1:]]))
