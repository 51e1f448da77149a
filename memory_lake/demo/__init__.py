"""The demo generator: deterministic snapshots (seeded) for `memory-lake demo`, the notebook and tests."""

from .generator import DEMO_AS_OF, DEMO_TENANTS, MALFORMED_REASONS, DemoData, generate_demo

__all__ = ["DEMO_AS_OF", "DEMO_TENANTS", "MALFORMED_REASONS", "DemoData", "generate_demo"]
