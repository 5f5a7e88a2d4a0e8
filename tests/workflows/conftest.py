"""Fixtures of the workflow tests (the harness lives in tests/workflows/support.py)."""

from tests.workflows.support import harness, own_harness, unhurried_harness

__all__ = ["harness", "own_harness", "unhurried_harness"]
