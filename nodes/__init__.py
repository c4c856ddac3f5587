"""One module per graph step, plus ``kernel`` for the pure math."""
