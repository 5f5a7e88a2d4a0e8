"""REST collections of the cloud's services, and one client for all of them.

Neutron's networks, Glance's images, Cinder's volumes, Nova's keypairs and Octavia's
load balancers are all "a collection of JSON objects": create, show, update, delete,
list with filters. `Collection` says where each lives and how it is spelt; the one
`CollectionClient` does the calls, looks objects up by name or id, and makes creates
idempotent by a request marker each service can filter on (a Neutron or Octavia tag,
Cinder metadata, a Glance property).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import quote

from activities.cloud.errors import json_body
from domain.errors import BackendConflict, BackendError, BackendNotFound, InvalidRequest

if TYPE_CHECKING:
    from activities.cloud.requests import CloudRequests

_UUID = re.compile(r"[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}")
#: Neutron's answer to tags in a create body it does not take them in.
TAGS_NOT_IN_POST: Final = "Attribute 'tags' not allowed in POST"
#: How far a service's clock may trail Warden's when an untagged create is adopted
#: (Neutron's `created_at` is also cut to the second).
CLOCK_SLACK: Final = timedelta(seconds=2)
#: The request marker's name (a tag is `warden-request-<id>`).
REQUEST_MARKER: Final = "warden_request_id"
JSON_PATCH: Final = "application/openstack-images-v2.1-json-patch"
#: How a create carries Warden's request id, so a retry finds what it made.
Marker = Literal["tags", "metadata", "property", "none"]


@dataclass(frozen=True)
class Collection:
    """Where one kind of object lives in the catalog, and its JSON spelling."""

    #: The kind in messages and lookups: `network`, `image`, `volume`, …
    kind: str
    #: Catalog service type.
    service: str
    #: Path under the endpoint; `{parent}` is a parent id (an Octavia pool's members).
    path: str
    #: Member key of a single object (`{"network": {...}}`); None: the body is the object.
    key: str | None
    #: Member key of a list answer.
    plural: str
    #: What the user calls it in "Unable to find …" messages.
    label: str
    marker: Marker = "tags"
    #: Update verb: PUT with the wrapped changes, or Glance's JSON-patch.
    update: Literal["put", "json-patch"] = "put"
    #: Path of a list answering full objects (Cinder's and Nova's `/detail`).
    list_suffix: str = ""
    #: Ids are UUIDs (a name that is not one is not looked up as an id first).
    uuid_ids: bool = True
    #: Tags are a sub-resource (`PUT …/{id}/tags`) that no update body may set, and a
    #: create body only where the service allows (Neutron 29: a port's, no other).
    tag_resource: bool = False
    #: Headers every call sends (a Nova microversion).
    headers: tuple[tuple[str, str], ...] = ()


def _neutron(kind: str, path: str, key: str, label: str) -> Collection:
    plural = path.replace("-", "_")
    return Collection(kind, "network", f"/v2.0/{path}", key, plural, label, tag_resource=True)


def _octavia(kind: str, path: str, key: str) -> Collection:
    plural = path.rsplit("/", 1)[-1]
    return Collection(kind, "load-balancer", f"/v2/lbaas/{path}", key, plural, kind)


COLLECTIONS: Final[dict[str, Collection]] = {
    c.kind: c
    for c in (
        _neutron("network", "networks", "network", "network"),
        _neutron("subnet", "subnets", "subnet", "subnet"),
        _neutron("port", "ports", "port", "port"),
        _neutron("security_group", "security-groups", "security_group", "security_group"),
        _neutron("security_group_rule", "security-group-rules", "security_group_rule", "rule"),
        _neutron("floating_ip", "floatingips", "floatingip", "floatingip"),
        _neutron("router", "routers", "router", "router"),
        _neutron("trunk", "trunks", "trunk", "trunk"),
        Collection(
            "image", "image", "/v2/images", None, "images", "image", "property", "json-patch"
        ),
        Collection(
            "volume",
            "volumev3",
            "/volumes",
            "volume",
            "volumes",
            "volume",
            "metadata",
            list_suffix="/detail",
        ),
        Collection(
            "keypair",
            "compute",
            "/os-keypairs",
            "keypair",
            "keypairs",
            "keypair",
            "none",
            uuid_ids=False,
        ),
        Collection(
            "server",
            "compute",
            "/servers",
            "server",
            "servers",
            "server",
            "none",
            list_suffix="/detail",
        ),
        Collection(
            "flavor",
            "compute",
            "/flavors",
            "flavor",
            "flavors",
            "flavor",
            "none",
            list_suffix="/detail",
            uuid_ids=False,
        ),
        Collection(
            "server_group",
            "compute",
            "/os-server-groups",
            "server_group",
            "server_groups",
            "server group",
            "none",
            # `policy` and `rules` (Nova 2.64), as Heat sends them where Nova has them.
            headers=(("OpenStack-API-Version", "compute 2.64"),),
        ),
        _octavia("loadbalancer", "loadbalancers", "loadbalancer"),
        _octavia("listener", "listeners", "listener"),
        _octavia("pool", "pools", "pool"),
        _octavia("member", "pools/{parent}/members", "member"),
        _octavia("healthmonitor", "healthmonitors", "healthmonitor"),
        Collection(
            "lb_flavor", "load-balancer", "/v2/lbaas/flavors", "flavor", "flavors", "flavor"
        ),
    )
}


def collection(kind: str) -> Collection:
    """The collection of `kind`; a 400 for one this driver does not know (`qos_policy`)."""
    found = COLLECTIONS.get(kind)
    if found is None:
        raise InvalidRequest(f"Warden's cloud driver has no {kind} objects")
    return found


#: The prefix of a request marker tag.
MARKER_PREFIX: Final = "warden-request-"


def marker_tag(request_id: str) -> str:
    """The tag a Neutron or Octavia create carries."""
    return f"{MARKER_PREFIX}{request_id}"


class CollectionClient:
    """CRUD on any `Collection`. Methods raise `domain.errors`, never httpx exceptions."""

    def __init__(self, session: CloudRequests) -> None:
        self._session = session
        #: Kinds whose create refused tags: they are tagged after the create.
        self._tagged_after: set[str] = set()

    def _base(self, coll: Collection, parent: str | None) -> str:
        if "{parent}" in coll.path:
            if not parent:
                raise BackendError(f"a {coll.kind} needs its parent's id")
            return coll.path.replace("{parent}", quote(parent, safe=""))
        return coll.path

    async def _call(self, coll: Collection, method: str, path: str, **options: Any) -> Any:
        if coll.headers:
            options["headers"] = dict(coll.headers) | (options.get("headers") or {})
        response = await self._session.request(coll.service, method, path, **options)
        if response.status_code == 204 or not response.content:
            return None
        return json_body(response, f"{coll.service} {method} {path}")

    def _unwrap(self, coll: Collection, body: Any, what: str) -> dict[str, Any]:
        obj = body.get(coll.key) if coll.key is not None and isinstance(body, dict) else body
        if not isinstance(obj, dict) or ("id" not in obj and "name" not in obj):
            raise BackendError(f"{coll.service} answered {what} without a {coll.kind}")
        return obj

    async def create(
        self, coll: Collection, body: dict[str, Any], *, parent: str | None = None
    ) -> dict[str, Any]:
        """POST one object; the created object as the service shows it.

        Tags go in the body where the service takes them there; where it answers
        "Attribute 'tags' not allowed in POST" (Neutron, for all but ports), the object
        is created without them and tagged at once, and this client remembers to do so.
        """
        tags = body.get("tags") if coll.tag_resource else None
        if tags is None or coll.kind not in self._tagged_after:
            try:
                return await self._post(coll, body, parent)
            except InvalidRequest as err:
                if tags is None or TAGS_NOT_IN_POST not in str(err):
                    raise
                self._tagged_after.add(coll.kind)
        made = await self._post(coll, {k: v for k, v in body.items() if k != "tags"}, parent)
        return made | {"tags": await self.set_tags(coll, str(made["id"]), list(tags))}

    async def _post(
        self, coll: Collection, body: dict[str, Any], parent: str | None
    ) -> dict[str, Any]:
        payload = body if coll.key is None else {coll.key: body}
        answer = await self._call(coll, "POST", self._base(coll, parent), json=payload)
        return self._unwrap(coll, answer, "a create")

    async def set_tags(self, coll: Collection, object_id: str, tags: list[str]) -> list[str]:
        """Replace an object's tags (Neutron's `PUT …/{id}/tags`); the tags it now has."""
        path = f"{self._base(coll, None)}/{quote(object_id, safe='')}/tags"
        answer = await self._call(coll, "PUT", path, json={"tags": tags})
        shown = answer.get("tags") if isinstance(answer, dict) else None
        return [str(t) for t in shown] if isinstance(shown, list) else tags

    async def show(
        self, coll: Collection, object_id: str, *, parent: str | None = None
    ) -> dict[str, Any]:
        """GET one object by id; `BackendNotFound` when it does not exist."""
        path = f"{self._base(coll, parent)}/{quote(object_id, safe='')}"
        return self._unwrap(coll, await self._call(coll, "GET", path), "a show")

    async def update(
        self,
        coll: Collection,
        object_id: str,
        changes: dict[str, Any],
        *,
        parent: str | None = None,
    ) -> dict[str, Any]:
        """Change some fields of one object in place."""
        path = f"{self._base(coll, parent)}/{quote(object_id, safe='')}"
        if coll.tag_resource and "tags" in changes:
            return await self._update_tagged(coll, object_id, changes, parent)
        if coll.update == "json-patch":
            ops = json_patch(await self.show(coll, object_id, parent=parent), changes)
            headers = {"Content-Type": JSON_PATCH}
            answer = await self._call(coll, "PATCH", path, json=ops, headers=headers)
        else:
            answer = await self._call(coll, "PUT", path, json={coll.key: changes})
        return self._unwrap(coll, answer, "an update")

    async def _update_tagged(
        self, coll: Collection, object_id: str, changes: dict[str, Any], parent: str | None
    ) -> dict[str, Any]:
        """The other fields with PUT, then the tags (Warden's own markers kept)."""
        rest = {k: v for k, v in changes.items() if k != "tags"}
        if rest:
            current = await self.update(coll, object_id, rest, parent=parent)
        else:
            current = await self.show(coll, object_id, parent=parent)
        kept = [t for t in current.get("tags") or () if str(t).startswith(MARKER_PREFIX)]
        wanted = [str(t) for t in changes["tags"] or () if t not in kept]
        return current | {"tags": await self.set_tags(coll, object_id, wanted + kept)}

    async def delete(self, coll: Collection, object_id: str, *, parent: str | None = None) -> None:
        """DELETE one object; gone already counts as deleted."""
        path = f"{self._base(coll, parent)}/{quote(object_id, safe='')}"
        try:
            await self._call(coll, "DELETE", path)
        except BackendNotFound:
            return

    async def list(
        self,
        coll: Collection,
        filters: dict[str, str] | None = None,
        *,
        parent: str | None = None,
    ) -> list[dict[str, Any]]:
        """Objects matching `filters` (the service's own query parameters)."""
        path = self._base(coll, parent) + coll.list_suffix
        body = await self._call(coll, "GET", path, params=filters or None)
        items = body.get(coll.plural) if isinstance(body, dict) else None
        if not isinstance(items, list):
            raise BackendError(
                f"{coll.service} answered a {coll.kind} list without '{coll.plural}'"
            )
        # Nova wraps each keypair of a list: {"keypairs": [{"keypair": {...}}]}.
        return [i[coll.key] if coll.key and coll.key in i else i for i in items]

    async def find(
        self, coll: Collection, ref: str, *, parent: str | None = None
    ) -> dict[str, Any]:
        """The object whose id, or else whose unique name, is `ref`.

        `BackendNotFound` when none is; `BackendConflict` when several share the name,
        as Heat's client plugins answer.
        """
        if not coll.uuid_ids or _UUID.fullmatch(ref):
            try:
                return await self.show(coll, ref, parent=parent)
            except BackendNotFound:
                pass
        found = [
            o for o in await self.list(coll, {"name": ref}, parent=parent) if o.get("name") == ref
        ]
        if not found:
            raise BackendNotFound(f"Unable to find {coll.label} with name or id '{ref}'")
        if len(found) > 1:
            raise BackendConflict(
                f"Multiple {coll.label} matches found for name '{ref}', "
                "use an ID to be more specific."
            )
        return found[0]

    async def action(
        self,
        coll: Collection,
        object_id: str,
        method: str,
        suffix: str,
        body: dict[str, Any] | None,
        *,
        parent: str | None = None,
        tolerate: tuple[int, ...] = (),
    ) -> dict[str, Any] | None:
        """`method` on a path below one object; a status in `tolerate` counts as done."""
        path = f"{self._base(coll, parent)}/{quote(object_id, safe='')}{suffix}"
        try:
            answer = await self._call(coll, method, path, json=body if body else None)
        except (BackendNotFound, BackendConflict) as err:
            status = 404 if isinstance(err, BackendNotFound) else 409
            if status in tolerate:
                return None
            raise
        return answer if isinstance(answer, dict) else None

    async def find_created(
        self, coll: Collection, request_id: str, *, parent: str | None = None
    ) -> dict[str, Any] | None:
        """The object an earlier create with `request_id` made, if any."""
        if coll.marker == "tags":
            filters = {"tags": marker_tag(request_id)}
        elif coll.marker == "metadata":
            filters = {"metadata": json.dumps({REQUEST_MARKER: request_id})}
        elif coll.marker == "property":
            filters = {REQUEST_MARKER: request_id}
        else:
            return None
        found = await self.list(coll, filters, parent=parent)
        return found[0] if found else None

    async def find_untagged(
        self, coll: Collection, body: dict[str, Any], since: datetime
    ) -> dict[str, Any] | None:
        """The one object a create that was never tagged made: `body`'s name, no request
        marker, created since `since` (less `CLOCK_SLACK`). None when there is not
        exactly one, so a user's object of the same name is never taken."""
        name = body.get("name")
        if not coll.tag_resource or not isinstance(name, str) or not name:
            return None
        found = [
            o
            for o in await self.list(coll, {"name": name})
            if o.get("name") == name
            and not any(str(t).startswith(MARKER_PREFIX) for t in o.get("tags") or ())
            and _created_since(o, since - CLOCK_SLACK)
        ]
        return found[0] if len(found) == 1 else None

    async def create_once(
        self,
        coll: Collection,
        body: dict[str, Any],
        request_id: str,
        *,
        parent: str | None = None,
        retry_since: datetime | None = None,
    ) -> dict[str, Any]:
        """Create, or adopt the object a previous attempt for `request_id` made.

        `retry_since`, given on a retry, is when the first attempt began: a Neutron
        object it created but could not tag (the answer was lost, or the worker died
        before the tags went on) is then adopted and tagged, not made twice.
        """
        existing = await self.find_created(coll, request_id, parent=parent)
        if existing is not None:
            return existing
        marked = with_marker(coll, body, request_id)
        if retry_since is not None:
            untagged = await self.find_untagged(coll, body, retry_since)
            if untagged is not None:
                tags = await self.set_tags(coll, str(untagged["id"]), list(marked["tags"]))
                return untagged | {"tags": tags}
        return await self.create(coll, marked, parent=parent)


def _created_since(obj: dict[str, Any], since: datetime) -> bool:
    """Whether Neutron's `created_at` (`2026-12-02T03:04:05Z`) is at or after `since`."""
    try:
        created = datetime.fromisoformat(str(obj.get("created_at")))
    except ValueError:
        return False
    if created.tzinfo is None:
        created = created.replace(tzinfo=since.tzinfo)
    return created >= since


def json_patch(current: dict[str, Any], changes: dict[str, Any]) -> list[dict[str, Any]]:
    """Glance's patch from `current` to `changes`: replace what is there, add what is
    not, remove what is set to None."""
    ops = []
    for key, value in changes.items():
        if value is None:
            if key in current:
                ops.append({"op": "remove", "path": f"/{key}"})
            continue
        op = "replace" if key in current else "add"
        ops.append({"op": op, "path": f"/{key}", "value": value})
    return ops


def with_marker(coll: Collection, body: dict[str, Any], request_id: str) -> dict[str, Any]:
    """`body` carrying the request marker the collection can be filtered on."""
    if coll.marker == "tags":
        return body | {"tags": [*body.get("tags", []), marker_tag(request_id)]}
    if coll.marker == "metadata":
        return body | {"metadata": {**body.get("metadata", {}), REQUEST_MARKER: request_id}}
    if coll.marker == "property":
        return body | {REQUEST_MARKER: request_id}
    return body
