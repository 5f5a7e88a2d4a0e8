"""The REST API: `create_app(settings)` (run by `uvicorn api.app:create_app --factory`)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from api.auth import Caller, Role, TokenStore
from api.codec import install_codec_server
from api.deps import Database
from api.errors import install_error_handlers
from api.keystone import keystone_validator
from api.limits import BodySizeLimit
from api.remote_stacks import RemoteHeat
from api.routers import (
    actions,
    clusters,
    heat_info,
    nodes,
    notifications,
    policies,
    profiles,
    receivers,
    services,
    signals,
    software_configs,
    software_deployments,
    spec_types,
    stack_lookup,
    stack_resources,
    stacks,
    unsupported,
    whoami,
)
from api.routers import health as health_routes
from api.senlin_prefix import install_clustering
from api.temporal import TemporalGateway
from config import Settings, get_settings
from config.codec import CodecKeys
from config.temporal_client import load_codec_keys, temporal_connect_config
from healthcheck import configure
from store.db import make_engine, migrate

logger = logging.getLogger(__name__)

#: How often the API re-records whether Temporal answers (not per request).
TEMPORAL_PING_INTERVAL_S = 30.0


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the API for `settings` (default: from the environment)."""
    settings = settings or get_settings()
    health = configure(
        str(uuid.uuid4()),
        "warden-api",
        ttl=settings.healthcheck_ttl,
        cache_control=settings.healthcheck_cache_control,
    )
    # Fail at start, not on the first request, when Temporal's configuration is unusable.
    codec_keys = load_codec_keys(settings)
    temporal_connect_config(settings)
    engine = make_engine(settings.resolved_database_url)
    temporal = TemporalGateway(settings, health)
    keystone = keystone_validator(settings)
    remote_heat = RemoteHeat(
        keystone, region=settings.cloud_region_name, interface=settings.cloud_interface
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await asyncio.to_thread(migrate, engine)
        pinger = asyncio.create_task(_ping_forever(temporal))
        try:
            yield
        finally:
            pinger.cancel()
            temporal.close()
            # The pinger never waits on Temporal's native connect (TemporalGateway._connect),
            # so it ends at once; the bound only guards against a ping stuck elsewhere.
            await asyncio.wait({pinger}, timeout=2)
            engine.dispose()
            if keystone is not None:
                await keystone.aclose()
            await remote_heat.aclose()

    app = FastAPI(
        title="Warden",
        version="1.0",
        summary="Durable orchestration of cloud stacks and server clusters on Temporal",
        lifespan=lifespan,
    )
    extra = {}
    if settings.dev_token:
        extra[settings.dev_token] = Caller(
            project_id=settings.dev_project_id, roles=frozenset({Role.ADMIN})
        )
    app.state.settings = settings
    app.state.health = health
    app.state.tokens = TokenStore(settings.resolved_tokens_file, extra)
    app.state.keystone = keystone
    app.state.remote_heat = remote_heat
    app.state.db = Database(engine)
    app.state.temporal = temporal
    _install_routes(app, settings, codec_keys)
    return app


#: The routers, in the order their routes are matched.
_ROUTERS = (
    health_routes.router,
    actions.router,
    profiles.router,
    policies.router,
    spec_types.router,
    services.router,
    receivers.router,
    clusters.router,
    nodes.router,
    notifications.router,
    heat_info.versions_router,
    stack_lookup.subpath_router,  # before the stack routes: see stack_lookup
    stacks.router,
    stack_resources.router,
    stack_lookup.name_router,
    heat_info.router,
    software_configs.router,
    signals.router,
    software_deployments.router,
    whoami.router,
    unsupported.router,  # last: only paths no route above serves
)


def _install_routes(app: FastAPI, settings: Settings, codec_keys: CodecKeys | None) -> None:
    """Error handlers, routes, Senlin's `/cluster` prefix, the codec server, body limit."""
    install_error_handlers(app)
    for router in _ROUTERS:
        app.include_router(router)
    install_clustering(app)
    install_codec_server(app, settings, codec_keys)
    app.add_middleware(BodySizeLimit, max_bytes=settings.api_max_body_bytes)


async def _ping_forever(temporal: TemporalGateway) -> None:
    while True:
        await temporal.ping()
        await asyncio.sleep(TEMPORAL_PING_INTERVAL_S)
