"""The ``lumen`` command line (typer): ``cli.app`` builds the app, one module per command group.

Every group module exposes ``register(app)``; ``cli.app`` calls them all in one place. Heavy
imports (langchain, langgraph, chromadb, llama.cpp) happen inside the commands that need them.
Nothing below ``cli`` (graph, nodes, state, kernel) imports it.
"""
