"""The demo generator: deterministic snapshots (seeded) for `memory-lake demo`, the notebook and tests:
the first night (`generate_demo`), the later nights (`generate_night`) and the searches of the days
between them (`demo_searches`)."""

from .generator import DEMO_AS_OF, DEMO_TENANTS, MALFORMED_REASONS, DemoData, generate_demo
from .nights import MAX_NIGHTS, NightData, generate_night, last_nightly_as_of, night_as_of
from .searches import SEARCH_HOUR, DemoSearches, demo_searches

__all__ = ["DEMO_AS_OF", "DEMO_TENANTS", "MALFORMED_REASONS", "DemoData", "generate_demo",
           "MAX_NIGHTS", "NightData", "generate_night", "last_nightly_as_of", "night_as_of",
           "SEARCH_HOUR", "DemoSearches", "demo_searches"]
