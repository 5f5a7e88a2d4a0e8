"""Software config activities: the config resources store their config here, a server
reads the config its `user_data` names, and the deployment resources keep their records
(the derived config of each step, the agent's signal) here."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import Session
from temporalio import activity
from temporalio.exceptions import ApplicationError

from domain.errors import InvalidRequest
from domain.stack.types.software_config import (
    UNGROUPED,
    ConfigRef,
    ConfigRequest,
    SoftwareConfig,
    config_body,
)
from domain.stack.types.software_deployment import (
    COMPLETE,
    FAILED,
    IN_PROGRESS,
    DeploymentSignal,
    DeploymentStart,
    SoftwareDeployment,
    derived_inputs,
    replacing_inputs,
    signalled,
    structured_config,
    transport,
)
from healthcheck import healthcheck
from store.columns import now_utc
from store.db import session_scope
from store.software_configs import delete_config, get_config, save_config
from store.software_deployments import (
    config_in_use,
    delete_deployment,
    get_deployment,
    save_deployment,
    update_deployment,
)


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

    # ---- deployments ----

    @activity.defn(name="start_software_deployment")
    @healthcheck("database", [SQLAlchemyError])
    def start_software_deployment(self, start: DeploymentStart) -> SoftwareDeployment:
        """Derive the config for this step and point the deployment record at it (Heat's
        `_handle_action`); the previous step's derived config is deleted. A retry finds
        the record already on the derived config, and gives it back."""
        with session_scope(self._engine) as session:
            known = get_deployment(session, start.project_id, start.deployment_id)
            if known is not None and known.config_id == start.derived_config_id:
                return known
            derived = _derived_config(session, start)
            save_config(session, derived)
            waits = transport(start.properties) != "NO_SIGNAL"
            fields: dict[str, Any] = {
                "config_id": derived.id,
                "action": start.action,
                "input_values": start.properties.get("input_values"),
                "status": IN_PROGRESS if waits else COMPLETE,
                "status_reason": "Deploy data available"
                if waits
                else "Not waiting for outputs signal",
            }
            if known is None:
                return save_deployment(
                    session,
                    SoftwareDeployment(
                        id=start.deployment_id,
                        project_id=start.project_id,
                        server_id=str(start.properties.get("server") or ""),
                        stack_id=start.stack_id,
                        resource_name=start.resource_name,
                        created_at=now_utc(),
                        **fields,
                    ),
                )
            updated = update_deployment(
                session, start.project_id, start.deployment_id, fields | {"updated_at": now_utc()}
            )
            if not config_in_use(session, known.config_id):
                delete_config(session, start.project_id, known.config_id)
            assert updated is not None
            return updated

    @activity.defn(name="software_deployment_replaced_by")
    @healthcheck("database", [SQLAlchemyError])
    def software_deployment_replaced_by(self, start: DeploymentStart) -> list[str]:
        """The `replace_on_change` inputs this update changes (none: update in place)."""
        with session_scope(self._engine) as session:
            known = get_deployment(session, start.project_id, start.deployment_id)
            old = get_config(session, start.project_id, known.config_id) if known else None
            if old is None:
                return []
            return replacing_inputs(list(old.inputs), _derived_config(session, start).inputs)

    @activity.defn(name="signal_software_deployment")
    @healthcheck("database", [SQLAlchemyError])
    def signal_software_deployment(self, signal: DeploymentSignal) -> SoftwareDeployment | None:
        """Apply the agent's signal to the record (Heat's `signal_software_deployment`;
        a deployment not IN_PROGRESS keeps what it has), or only read it (`refresh`)."""
        with session_scope(self._engine) as session:
            found = get_deployment(session, signal.project_id, signal.deployment_id)
            if found is None or signal.refresh:
                return found
            config = get_config(session, signal.project_id, found.config_id)
            changes = signalled(found, config.outputs if config else [], signal.details)
            if changes is None:
                return found
            changes["updated_at"] = now_utc()
            return update_deployment(session, signal.project_id, found.id, changes)

    @activity.defn(name="cancel_software_deployment")
    @healthcheck("database", [SQLAlchemyError])
    def cancel_software_deployment(self, ref: ConfigRef) -> None:
        """A deployment whose wait stopped (cancel_update, the stack's timeout) is FAILED
        `Deployment cancelled.`, as Heat's `_handle_cancel` leaves it."""
        with session_scope(self._engine) as session:
            found = get_deployment(session, ref.project_id, ref.id)
            if found is not None and found.status == IN_PROGRESS:
                changes = {"status": FAILED, "status_reason": "Deployment cancelled."}
                update_deployment(
                    session, ref.project_id, ref.id, changes | {"updated_at": now_utc()}
                )

    @activity.defn(name="remove_software_deployment")
    @healthcheck("database", [SQLAlchemyError])
    def remove_software_deployment(self, ref: ConfigRef) -> None:
        """Delete the deployment record and its derived config (gone already is fine)."""
        with session_scope(self._engine) as session:
            found = get_deployment(session, ref.project_id, ref.id)
            if found is None:
                return
            delete_deployment(session, ref.project_id, ref.id)
            session.flush()
            if not config_in_use(session, found.config_id):
                delete_config(session, ref.project_id, found.config_id)


def _derived_config(session: Session, start: DeploymentStart) -> SoftwareConfig:
    """Heat's `_build_derived_config_params`: the source config with this step's inputs."""
    source_id = start.properties.get("config")
    source = get_config(session, start.project_id, str(source_id)) if source_id else None
    if source_id and source is None:
        raise ApplicationError(
            f"Software config with id {source_id} not found", type="NotFound", non_retryable=True
        )
    inputs = derived_inputs(list(source.inputs) if source else [], start)
    config = source.config if source else None
    if start.structured:
        try:
            config = structured_config(config, inputs, start.properties)
        except InvalidRequest as err:
            raise ApplicationError(err.message, type="InvalidRequest", non_retryable=True) from None
    return SoftwareConfig(
        id=start.derived_config_id,
        project_id=start.project_id,
        name=start.properties.get("name")
        or (source.name if source else None)
        or start.resource_name,
        group=(source.group if source else None) or UNGROUPED,
        config=config if config is not None else "",
        inputs=inputs,
        outputs=list(source.outputs) if source else [],
        options=dict(source.options) if source and source.options else {},
        created_at=now_utc(),
    )
