"""nodes/reflect."""
