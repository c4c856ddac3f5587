"""Graph assembly, routing, configuration and the command line."""
