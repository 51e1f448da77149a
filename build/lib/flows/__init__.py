"""Prefect flows: thin wiring of `memory_lake` library steps (the library never imports Prefect)."""
