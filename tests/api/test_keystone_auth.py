"""Keystone mode: tokens validated by the real simcloud Keystone, cached, mapped to roles."""

from __future__ import annotations

import copy
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from pydantic import SecretStr

from api.app import create_app
from api.auth import Caller, Role
from api.keystone import NEGATIVE_TTL_S, KeystoneConfig, KeystoneValidator, caller_of
from api.token_cache import Answer, AnswerCache
from config import Settings
from domain.errors import BackendUnavailable, Forbidden, Unauthenticated
from simcloud.app import create_app as create_simcloud
from simcloud.config import SimConfig
from tests.support.processes import free_port
from tests.support.simcloud_server import (
    PASSWORD_AUTH,
    RunningSimcloud,
    SimControl,
    login,
    running_simcloud,
)

CACHE_TTL_S = 300.0


class Clock:
    """The validator's wall clock, moved by hand."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@dataclass
class Counting(httpx.AsyncBaseTransport):
    """The real simcloud app in process, counting what the validator asks it."""

    inner: httpx.AsyncBaseTransport
    calls: list[tuple[str, str]] = field(default_factory=list)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.calls.append((request.method, request.url.path))
        return await self.inner.handle_async_request(request)

    def count(self, method: str) -> int:
        return sum(1 for m, path in self.calls if m == method and path.endswith("/auth/tokens"))


@dataclass
class Keystone:
    """A simcloud, a client of it, and a validator asking it."""

    sim: httpx.AsyncClient
    transport: Counting
    clock: Clock
    validator: KeystoneValidator
    project_id: str

    async def token(self, body: dict[str, Any] | None = None) -> str:
        return (await login(self.sim, body))["X-Auth-Token"]


def config(url: str = "http://simcloud/identity/v3", **overrides: Any) -> KeystoneConfig:
    fields: dict[str, Any] = {
        "url": url,
        "username": "warden",
        "password": SecretStr("warden-secret"),
        "project_name": "demo",
        "cache_ttl_s": CACHE_TTL_S,
    }
    return KeystoneConfig(**(fields | overrides))


@pytest.fixture
async def keystone() -> AsyncIterator[Keystone]:
    app = create_simcloud(SimConfig(token_ttl_s=3600))
    async with app.router.lifespan_context(app):
        transport = Counting(httpx.ASGITransport(app=app))
        clock = Clock()
        validator = KeystoneValidator(config(), transport=transport, clock=clock)
        asgi = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=asgi, base_url="http://simcloud") as sim:
            yield Keystone(sim, transport, clock, validator, app.state.sim.project_id)
        await validator.aclose()


async def test_keystone_token_names_its_project_and_member_role(keystone: Keystone) -> None:
    caller = await keystone.validator.caller(await keystone.token())

    assert caller == Caller(project_id=keystone.project_id, roles=frozenset({Role.MEMBER}))


async def test_validated_token_is_cached_until_the_cache_ttl(keystone: Keystone) -> None:
    token = await keystone.token()

    for _ in range(3):
        await keystone.validator.caller(token)
    assert keystone.transport.count("GET") == 1
    assert keystone.transport.count("POST") == 1  # one service token

    keystone.clock.now += CACHE_TTL_S + 1
    await keystone.validator.caller(token)
    assert keystone.transport.count("GET") == 2


async def test_cached_token_is_asked_again_at_its_expiry_and_then_refused() -> None:
    app = create_simcloud(SimConfig(token_ttl_s=60))
    async with app.router.lifespan_context(app):
        asgi = httpx.ASGITransport(app=app)
        clock = Clock()
        validator = KeystoneValidator(config(), transport=asgi, clock=clock)
        async with httpx.AsyncClient(transport=asgi, base_url="http://simcloud") as sim:
            token = (await login(sim))["X-Auth-Token"]
            await validator.caller(token)

            clock.now += 61  # past expires_at, well within the 300 s cache time
            await SimControl(sim).advance_clock(61)
            with pytest.raises(Unauthenticated, match="expired or revoked"):
                await validator.caller(token)
        await validator.aclose()


async def test_revoked_token_gets_401_and_the_refusal_is_cached_briefly(
    keystone: Keystone,
) -> None:
    token = await keystone.token()
    revoked = await keystone.sim.delete(
        "/identity/v3/auth/tokens", headers={"X-Auth-Token": token, "X-Subject-Token": token}
    )
    assert revoked.status_code == 204

    for _ in range(2):
        with pytest.raises(Unauthenticated, match="not valid"):
            await keystone.validator.caller(token)
    assert keystone.transport.count("GET") == 1

    keystone.clock.now += NEGATIVE_TTL_S + 1
    with pytest.raises(Unauthenticated):
        await keystone.validator.caller(token)
    assert keystone.transport.count("GET") == 2


async def test_token_revoked_after_validation_is_trusted_only_until_the_cache_ttl(
    keystone: Keystone,
) -> None:
    token = await keystone.token()
    await keystone.validator.caller(token)
    await keystone.sim.delete(
        "/identity/v3/auth/tokens", headers={"X-Auth-Token": token, "X-Subject-Token": token}
    )

    await keystone.validator.caller(token)  # keystonemiddleware's token_cache_time
    keystone.clock.now += CACHE_TTL_S + 1
    with pytest.raises(Unauthenticated):
        await keystone.validator.caller(token)


async def test_service_token_is_renewed_when_keystone_answers_401(keystone: Keystone) -> None:
    await keystone.validator.caller(await keystone.token())
    await SimControl(keystone.sim).revoke_tokens()  # the service token goes too
    fresh = await keystone.token()

    caller = await keystone.validator.caller(fresh)

    assert caller.project_id == keystone.project_id
    assert keystone.transport.count("POST") == 2
    assert keystone.transport.count("GET") == 3  # first, refused with 401, repeated


async def test_service_token_is_renewed_before_it_expires(keystone: Keystone) -> None:
    await keystone.validator.caller(await keystone.token())
    keystone.clock.now += 3600 - 30  # inside the renewal margin of a one-hour token

    await keystone.validator.caller(await keystone.token())

    assert keystone.transport.count("POST") == 2


async def test_unscoped_token_gets_401_saying_so(keystone: Keystone) -> None:
    unscoped = copy.deepcopy(PASSWORD_AUTH)
    del unscoped["auth"]["scope"]

    with pytest.raises(Unauthenticated, match="not scoped to a project"):
        await keystone.validator.caller(await keystone.token(unscoped))


async def test_keystone_down_is_503_not_500() -> None:
    validator = KeystoneValidator(config(f"http://127.0.0.1:{free_port()}/identity/v3"))
    try:
        with pytest.raises(BackendUnavailable, match="cannot be reached"):
            await validator.caller("some-token")
    finally:
        await validator.aclose()


async def test_keystone_answering_5xx_is_503(keystone: Keystone) -> None:
    token = await keystone.token()
    await SimControl(keystone.sim).api_faults(1.0, status=500)

    with pytest.raises(BackendUnavailable, match="HTTP 500"):
        await keystone.validator.caller(token)


async def test_wrong_service_credentials_are_503_for_the_operator_to_fix() -> None:
    app = create_simcloud(SimConfig())
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        wrong = config(password=SecretStr("wrong"))
        validator = KeystoneValidator(wrong, transport=transport)
        with pytest.raises(BackendUnavailable, match="service user"):
            await validator.caller("some-token")
        await validator.aclose()


def token_body(roles: list[str], project_id: str | None = "p1") -> dict[str, Any]:
    body: dict[str, Any] = {"roles": [{"id": f"{r}-id", "name": r} for r in roles]}
    if project_id:
        body["project"] = {"id": project_id, "name": "demo"}
    return body


@pytest.mark.parametrize(
    ("keystone_roles", "warden_roles"),
    [
        (["admin"], {Role.ADMIN}),
        (["member"], {Role.MEMBER}),
        (["_member_"], {Role.MEMBER}),
        (["reader"], {Role.READER}),
        (["member", "reader", "heat_stack_owner"], {Role.MEMBER, Role.READER}),
    ],
)
def test_keystone_roles_map_to_warden_roles(
    keystone_roles: list[str], warden_roles: set[Role]
) -> None:
    assert caller_of(token_body(keystone_roles)) == Caller("p1", frozenset(warden_roles))


def test_token_without_a_warden_role_is_403_naming_its_roles() -> None:
    with pytest.raises(Forbidden, match=r"\(heat_stack_user\) include none of admin, member"):
        caller_of(token_body(["heat_stack_user"]))


# --- the API in Keystone mode, simcloud over HTTP ---


@pytest.fixture(scope="module")
def simcloud() -> Iterator[RunningSimcloud]:
    with running_simcloud() as sim:
        yield sim


def keystone_settings(tmp_path: Path, keystone_url: str) -> Settings:
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(yaml.safe_dump({"tokens": {"static": {"project": "demo"}}}))
    return Settings(
        var_dir=tmp_path,
        tokens_file=tokens,
        temporal_address="127.0.0.1:1",
        temporal_rpc_timeout_s=1.0,
        keystone_url=keystone_url,
    )


@pytest.fixture
async def api(tmp_path: Path, simcloud: RunningSimcloud) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(keystone_settings(tmp_path, simcloud.auth_url))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield client


async def simcloud_token(sim: RunningSimcloud, body: dict[str, Any] | None = None) -> str:
    async with httpx.AsyncClient(base_url=sim.url) as client:
        return (await login(client, body))["X-Auth-Token"]


async def test_api_accepts_keystone_and_static_tokens_side_by_side(
    api: httpx.AsyncClient, simcloud: RunningSimcloud
) -> None:
    token = await simcloud_token(simcloud)

    keystone = await api.get("/v1/whoami", headers={"X-Auth-Token": token})
    static = await api.get("/v1/whoami", headers={"X-Auth-Token": "static"})

    assert keystone.status_code == 200, keystone.text
    assert keystone.json()["roles"] == ["member"]
    assert len(keystone.json()["project_id"]) == 32  # Keystone's project id, not its name
    assert static.json() == {"project_id": "demo", "roles": ["member"]}


async def test_api_answers_401_for_unknown_and_unscoped_keystone_tokens(
    api: httpx.AsyncClient, simcloud: RunningSimcloud
) -> None:
    unscoped = copy.deepcopy(PASSWORD_AUTH)
    del unscoped["auth"]["scope"]
    token = await simcloud_token(simcloud, unscoped)

    bogus = await api.get("/v1/whoami", headers={"X-Auth-Token": "bogus"})
    not_scoped = await api.get("/v1/whoami", headers={"X-Auth-Token": token})

    assert bogus.status_code == 401
    assert "expired or revoked" in bogus.json()["error"]["message"]
    assert not_scoped.status_code == 401
    assert "not scoped to a project" in not_scoped.json()["error"]["message"]


async def test_api_answers_503_when_keystone_is_down(tmp_path: Path) -> None:
    app = create_app(keystone_settings(tmp_path, f"http://127.0.0.1:{free_port()}/v3"))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            down = await client.get("/v1/whoami", headers={"X-Auth-Token": "unknown"})
            static = await client.get("/v1/whoami", headers={"X-Auth-Token": "static"})

    assert down.status_code == 503
    assert down.json()["error"]["title"] == "Service Unavailable"
    assert "Keystone cannot be reached" in down.json()["error"]["message"]
    assert static.status_code == 200  # the tokens file needs no Keystone


def test_answer_cache_is_bounded_and_forgets_the_least_recently_used() -> None:
    cache = AnswerCache(max_entries=2)
    caller = Caller("p1", frozenset({Role.MEMBER}))
    for key in ("a", "b"):
        cache.put(key, Answer(until=100.0, caller=caller))
    assert cache.get("a", now=0.0) is not None  # "b" is now the least recently used

    cache.put("c", Answer(until=100.0, caller=caller))

    assert len(cache) == 2
    assert cache.get("b", now=0.0) is None
    assert cache.get("a", now=100.0) is None  # expired
