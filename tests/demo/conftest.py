"""The demo lake after three nights is the session's `three_nights` (tests/conftest.py), shared
with the notebooks' tests."""
