"""`python -m memory_lake.cli`."""

from . import run

run()
