"""A real simcloud over HTTP for driver tests, with a notification receiver.

`simcloud` (session) serves it on a free port; `sim` resets it before each test and
gives its `/sim/*` controls; `cloud` is a `CloudSession` authenticated against it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from activities.cloud import CloudSession
from simcloud.config import SimConfig
from tests.support.simcloud_server import (
    NotificationReceiver,
    RunningSimcloud,
    SimControl,
    running_receiver,
    running_simcloud,
)


@pytest.fixture(scope="session")
def notification_receiver() -> Iterator[NotificationReceiver]:
    """Collects the Nova notifications the session's simcloud sends."""
    with running_receiver() as receiver:
        yield receiver


@pytest.fixture(scope="session")
def simcloud(notification_receiver: NotificationReceiver) -> Iterator[RunningSimcloud]:
    """simcloud over real HTTP (latencies 0), notifying `notification_receiver`."""
    with running_simcloud(SimConfig(notify_url=notification_receiver.url, seed=3)) as sim:
        yield sim


@pytest.fixture
async def sim(
    simcloud: RunningSimcloud, notification_receiver: NotificationReceiver
) -> AsyncIterator[SimControl]:
    """The session's simcloud, reset to empty for this test."""
    async with httpx.AsyncClient(base_url=simcloud.url, timeout=10) as client:
        control = SimControl(client)
        await control.reset()
        notification_receiver.clear()
        yield control


@pytest.fixture
async def cloud(simcloud: RunningSimcloud, sim: SimControl) -> AsyncIterator[CloudSession]:
    """A driver session against the (reset) simcloud."""
    async with CloudSession(simcloud.cloud_config()) as session:
        yield session
