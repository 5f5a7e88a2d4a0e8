"""Activities on the cloud's objects: networks, ports, images, volumes, keypairs, LBs.

Each is idempotent as Temporal needs: a create finds what an earlier attempt with the
same request id made (`CollectionClient.create_once`), a delete of what is gone
succeeds, a wait is retried by Temporal until the object is ready.
"""

from __future__ import annotations

from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.attempts import retry_since
from activities.cloud.collections import CollectionClient, collection
from activities.errors import application_error
from domain.cloud_objects import (
    BodyPath,
    CloudAction,
    CloudCreate,
    CloudObject,
    CloudRef,
    CloudUpdate,
    CloudWait,
    Lookup,
)
from domain.errors import BackendNotFound, WardenError


class ObjectNotReady(Exception):
    """Raised while an object is still on its way; Temporal retries the activity."""


def _put(body: dict[str, Any], path: BodyPath, value: Any) -> dict[str, Any]:
    """A copy of `body` with `value` at `path` (lists and maps along it copied)."""
    root: Any = _copy(body)
    node = root
    for step in path[:-1]:
        node[step] = _copy(node[step])
        node = node[step]
    node[path[-1]] = value
    result: dict[str, Any] = root
    return result


def _copy(node: Any) -> Any:
    return list(node) if isinstance(node, list) else dict(node)


class CloudObjectActivities:
    """CRUD, actions and waits on any kind `activities.cloud.collections` knows."""

    def __init__(self, objects: CollectionClient) -> None:
        self._objects = objects

    async def _resolved(self, body: dict[str, Any], lookups: tuple[Lookup, ...]) -> dict[str, Any]:
        for lookup in lookups:
            found = await self._objects.find(collection(lookup.kind), lookup.ref)
            body = _put(body, lookup.path, found.get(lookup.field))
        return body

    async def _parent(self, parent: Lookup | None) -> str | None:
        if parent is None:
            return None
        found = await self._objects.find(collection(parent.kind), parent.ref)
        return str(found[parent.field])

    @activity.defn(name="create_cloud_object")
    async def create_cloud_object(self, request: CloudCreate) -> CloudObject:
        """Resolve the names in the body, then create (or adopt the earlier create)."""
        coll = collection(request.kind)
        try:
            parent = await self._parent(request.parent)
            body = await self._resolved(request.body, request.lookups)
            made = await self._objects.create_once(
                coll, body, request.request_id, parent=parent, retry_since=retry_since()
            )
        except WardenError as err:
            raise application_error(err) from err
        return CloudObject(
            kind=request.kind, id=str(made.get("id") or made.get("name")), body=made, parent=parent
        )

    @activity.defn(name="show_cloud_object")
    async def show_cloud_object(self, ref: CloudRef) -> CloudObject | None:
        """The object as its service shows it; None once it is gone."""
        try:
            found = await self._objects.show(collection(ref.kind), ref.id, parent=ref.parent)
        except BackendNotFound:
            return None
        except WardenError as err:
            raise application_error(err) from err
        return CloudObject(kind=ref.kind, id=ref.id, body=found, parent=ref.parent)

    @activity.defn(name="find_cloud_object")
    async def find_cloud_object(self, ref: CloudRef) -> CloudObject | None:
        """The object whose id or unique name is `ref.id`; None when there is none."""
        try:
            found = await self._objects.find(collection(ref.kind), ref.id, parent=ref.parent)
        except BackendNotFound:
            return None
        except WardenError as err:
            raise application_error(err) from err
        return CloudObject(kind=ref.kind, id=str(found["id"]), body=found, parent=ref.parent)

    @activity.defn(name="update_cloud_object")
    async def update_cloud_object(self, request: CloudUpdate) -> CloudObject:
        """Apply changes in place (an update is idempotent by nature)."""
        ref = request.ref
        try:
            changes = await self._resolved(request.changes, request.lookups)
            updated = await self._objects.update(
                collection(ref.kind), ref.id, changes, parent=ref.parent
            )
        except WardenError as err:
            raise application_error(err) from err
        return CloudObject(kind=ref.kind, id=ref.id, body=updated, parent=ref.parent)

    @activity.defn(name="delete_cloud_object")
    async def delete_cloud_object(self, ref: CloudRef) -> None:
        """Delete; one that is gone already counts as deleted."""
        try:
            await self._objects.delete(collection(ref.kind), ref.id, parent=ref.parent)
        except WardenError as err:
            raise application_error(err) from err

    @activity.defn(name="wait_cloud_object_deleted")
    async def wait_cloud_object_deleted(self, ref: CloudRef) -> None:
        """Return once the object is gone; retried by Temporal while it is deleting."""
        try:
            await self._objects.show(collection(ref.kind), ref.id, parent=ref.parent)
        except BackendNotFound:
            return
        except WardenError as err:
            raise application_error(err) from err
        raise ObjectNotReady(f"{ref.kind} {ref.id} is still being deleted")

    @activity.defn(name="wait_cloud_object")
    async def wait_cloud_object(self, wait: CloudWait) -> CloudObject:
        """Return once the object's status is ready; a failed status ends the wait."""
        ref = wait.ref
        try:
            found = await self._objects.show(collection(ref.kind), ref.id, parent=ref.parent)
        except WardenError as err:
            raise application_error(err) from err
        status = str(found.get(wait.field))
        if status in wait.failed:
            raise ApplicationError(
                f"{ref.kind} {ref.id} went to {status} instead of {'/'.join(wait.ready)}",
                type="BackendError",
                non_retryable=True,
            )
        if status not in wait.ready:
            raise ObjectNotReady(f"{ref.kind} {ref.id} is {status}")
        return CloudObject(kind=ref.kind, id=ref.id, body=found, parent=ref.parent)

    @activity.defn(name="act_on_cloud_object")
    async def act_on_cloud_object(self, action: CloudAction) -> dict[str, Any]:
        """A call beside CRUD (a router interface, a volume attachment).

        Returns `{"target": the object's id, "answer": the JSON answer or None}`.
        """
        ref = action.ref
        coll = collection(ref.kind)
        try:
            target = ref.id
            if action.find_target:
                target = str((await self._objects.find(coll, ref.id, parent=ref.parent))["id"])
            body = await self._resolved(action.body, action.lookups)
            answer = await self._objects.action(
                coll,
                target,
                action.method,
                action.suffix,
                body,
                parent=ref.parent,
                tolerate=action.tolerate,
            )
        except WardenError as err:
            raise application_error(err) from err
        return {"target": target, "answer": answer}
