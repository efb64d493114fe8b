"""Mutation testing of the trust-critical modules: `make mutation` (docs/testing.md)."""
