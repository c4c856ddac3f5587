"""nodes/turn."""
