"""The API's connect to Temporal: bounded by the RPC timeout, never waited on twice."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

import api.temporal
from api.temporal import TemporalGateway
from config import Settings
from domain.errors import TemporalUnavailable
from healthcheck.manager import HealthManager


class SlowConnect:
    """Stands in for Temporal's native connect: answers (or fails) once released."""

    def __init__(self, fails: bool) -> None:
        self.fails, self.calls = fails, 0
        self.release, self.answered = asyncio.Event(), asyncio.Event()

    async def __call__(self, settings: Settings) -> Any:
        self.calls += 1
        await self.release.wait()
        self.answered.set()
        if self.fails:
            raise OSError("connection refused")
        return f"client {self.calls}"

    async def answer_late(self) -> None:
        """Let the pending attempt answer, with nobody waiting on it."""
        self.release.set()
        await self.answered.wait()
        await asyncio.sleep(0)  # the attempt's done callbacks run
        self.release.clear()
        self.answered.clear()


def gateway() -> TemporalGateway:
    return TemporalGateway(Settings(temporal_rpc_timeout_s=0.05), HealthManager("t", "test"))


async def test_a_connect_that_answers_after_the_timeout_serves_the_next_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    connect = SlowConnect(fails=False)
    monkeypatch.setattr(api.temporal, "connect_temporal", connect)
    temporal = gateway()
    with pytest.raises(TemporalUnavailable):
        await temporal.client()
    await connect.answer_late()
    assert await temporal.client() == "client 1"  # type: ignore[comparison-overlap]
    assert connect.calls == 1


async def test_a_connect_that_fails_late_is_tried_again_and_its_failure_is_not_left_unseen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    connect = SlowConnect(fails=True)
    monkeypatch.setattr(api.temporal, "connect_temporal", connect)
    unseen: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: unseen.append(context))
    try:
        temporal = gateway()
        for _ in range(2):
            with pytest.raises(TemporalUnavailable):
                await temporal.client()
            await connect.answer_late()
        gc.collect()
    finally:
        loop.set_exception_handler(previous)
    assert connect.calls == 2
    assert not unseen, unseen
