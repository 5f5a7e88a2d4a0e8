"""Software config activities: the config resources store their config here, and a
server reads the config its `user_data` names."""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from temporalio import activity

from domain.stack.types.software_config import (
    ConfigRef,
    ConfigRequest,
    SoftwareConfig,
    config_body,
)
from healthcheck import healthcheck
from store.columns import now_utc
from store.db import session_scope
from store.software_configs import delete_config, get_config, save_config


class SoftwareConfigActivities:
    """Idempotent config writes and reads; holds the process's engine."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @activity.defn(name="store_software_config")
    @healthcheck("database", [SQLAlchemyError])
    def store_software_config(self, request: ConfigRequest) -> SoftwareConfig:
        """Work out the resource's config and store it under the request's id (a
        retry finds the first attempt's, and gives it back)."""
        with session_scope(self._engine) as session:
            known = get_config(session, request.project_id, request.id)
            if known is not None:
                return known

            def show(config_id: str) -> object:
                found = get_config(session, request.project_id, config_id)
                return None if found is None else found.config

            body = config_body(request.type, request.properties, request.id, show)
            config = SoftwareConfig(
                id=request.id,
                project_id=request.project_id,
                name=request.name,
                created_at=now_utc(),
                **body,
            )
            return save_config(session, config)

    @activity.defn(name="show_software_config")
    @healthcheck("database", [SQLAlchemyError])
    def show_software_config(self, ref: ConfigRef) -> SoftwareConfig | None:
        """The config, or None when the project has none of that id."""
        with session_scope(self._engine) as session:
            return get_config(session, ref.project_id, ref.id)

    @activity.defn(name="delete_software_config")
    @healthcheck("database", [SQLAlchemyError])
    def delete_software_config(self, ref: ConfigRef) -> None:
        """Delete the config (gone already is fine)."""
        with session_scope(self._engine) as session:
            delete_config(session, ref.project_id, ref.id)
