"""The simcloud FastAPI application."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI
from fastapi.responses import JSONResponse

from simcloud import (
    apps,
    compute,
    compute_quotas,
    compute_services,
    control,
    faults,
    flavors,
    identity,
    image,
    interfaces,
    keypairs,
    messaging,
    network,
    octavia,
    server_groups,
    server_updates,
    volume,
    volume_attachments,
)
from simcloud.config import SimConfig
from simcloud.errors import install_error_handlers
from simcloud.network.seed import seed_private_network
from simcloud.notifications import Notifier
from simcloud.state import SimState


def create_app(
    config: SimConfig | None = None, *, notify_transport: httpx.AsyncBaseTransport | None = None
) -> FastAPI:
    """A simulated OpenStack (Keystone, Nova, Neutron, Glance, Cinder, Zaqar, Octavia) with faults.

    Args:
        config: Latencies, credentials and limits; defaults suit local development.
        notify_transport: Transport for notification POSTs (tests inject one).
    """
    config = config or SimConfig()
    state = SimState(config, seeders=(seed_private_network,))
    notifier = Notifier(config.notify_url, notify_transport, token=config.notify_token)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await notifier.aclose()

    app = FastAPI(
        title="simcloud",
        summary="A small simulated OpenStack for Warden",
        version="1.0",
        lifespan=lifespan,
    )
    app.state.sim = state
    app.state.notifier = notifier
    install_error_handlers(app)
    app.add_middleware(faults.ApiFaultMiddleware, state=state)
    services = (
        identity,
        compute,
        compute_quotas,
        compute_services,
        server_updates,
        keypairs,
        server_groups,
        flavors,
        volume_attachments,
        interfaces,
        network,
        image,
        volume,
        messaging,
        octavia,
    )
    for module in (*services, apps, faults, control):
        app.include_router(module.router)

    @app.get("/", include_in_schema=False)
    async def root() -> JSONResponse:
        return JSONResponse({"name": "simcloud", "identity": "/identity/v3"})

    return app
