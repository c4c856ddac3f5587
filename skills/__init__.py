"""Built-in skills: standalone programs speaking JSON over stdin/stdout."""
