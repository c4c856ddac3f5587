"""nodes/cycle."""
