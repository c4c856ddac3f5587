"""Pydantic schemas and persistence for the Lumen self (no behaviour beyond validation and I/O)."""
