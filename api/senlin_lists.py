"""Senlin's list parameters: which a list takes, how each is checked, and in what words.

Senlin's `index` handlers refuse a parameter outside their whitelist ("Invalid parameter
bogus"), parse `global_project` as a strict boolean, then validate the rest as its
`*ListRequest` objects do: `limit` a non-negative integer, `marker` a UUID, `sort` keys
(and `:asc`/`:desc`) from the resource's sort keys, `status` from its statuses.
`filter_and_page` then applies them to the objects a route lists: each filter keeps
objects whose attribute is one of its values, `sort` orders, `marker` starts after that
object, `limit` cuts (Senlin's `senlin/api/openstack/v1/*.py`, `senlin/objects/fields.py`).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, TypeVar

from fastapi import Depends, Request

from api.auth import Caller, CallerDep, Role
from domain.errors import Forbidden, InvalidRequest

T = TypeVar("T")

#: Parameters every paged list takes besides its filters.
PAGING: Final = ("limit", "marker", "sort", "global_project")
NOT_AUTHORIZED: Final = "You are not authorized to complete this operation."
#: An action's name, as events carry it: Senlin's (CLUSTER_SCALE_IN, NODE_DELETE) and
#: Warden's event kinds (HEALTH_CHECK, LIFECYCLE_HOOK; RECOVER_ and a recovery step's
#: name, a user workflow's included).
ACTION_NAME: Final = re.compile(r"RECOVER_[A-Za-z0-9_.:-]+|[A-Z][A-Z0-9_]*")


@dataclass(frozen=True)
class ListRules:
    """What one Senlin list takes."""

    #: Filters, each matched against the object's attribute of the same name.
    filters: tuple[str, ...]
    sort_keys: tuple[str, ...]
    #: The values `status` may take (None: the list has no status filter).
    statuses: tuple[str, ...] | None = None
    #: The values `level` may take (events; None: no such filter).
    levels: tuple[str, ...] | None = None
    #: Whether `action` must be an action's name (events: Senlin's enum of cluster and
    #: node actions; Warden's own event kinds, RECOVER_REBOOT say, are names too).
    action_names: bool = False
    #: Boolean filters (a cluster's policies: `enabled`).
    flags: tuple[str, ...] = ()
    #: Whether it pages (`limit`, `marker`, `global_project`); a cluster's policies do not.
    paged: bool = True
    #: The clusters list quotes the parameter it refuses ("Invalid parameter 'bogus'").
    quoted: bool = False

    def allowed(self) -> tuple[str, ...]:
        paging = PAGING if self.paged else ("sort",)
        return (*self.filters, *self.flags, *paging)


@dataclass(frozen=True)
class ListQuery:
    """A list request's parameters, checked."""

    filters: dict[str, list[Any]] = field(default_factory=dict)
    limit: int | None = None
    marker: str | None = None
    sort: tuple[tuple[str, bool], ...] = ()  # (key, descending)


def parse_bool(name: str, value: str) -> bool:
    """Senlin's `parse_bool_param`: `true` or `false`, any case."""
    if value.lower() not in ("true", "false"):
        raise InvalidRequest(f"Invalid value '{value}' specified for '{name}'")
    return value.lower() == "true"


def _limit(value: str) -> int:
    try:
        limit = int(value)
    except ValueError:
        raise InvalidRequest(f"The value for limit must be an integer: '{value}'.") from None
    if limit < 0:
        raise InvalidRequest("Value must be >= 0 for field 'limit'.")
    return limit


def _marker(value: str) -> str:
    try:
        uuid.UUID(value)
    except ValueError:
        raise InvalidRequest(f"The value for marker is not a valid UUID: '{value}'.") from None
    return value


def _sort(value: str, keys: Sequence[str]) -> tuple[tuple[str, bool], ...]:
    order = []
    for item in value.split(","):
        key, _, direction = item.partition(":")
        if not key:
            raise InvalidRequest("Missing sort key for 'sort'.")
        if key not in keys:
            raise InvalidRequest(f"Unsupported sort key '{key}' for 'sort'.")
        if direction and direction not in ("asc", "desc"):
            raise InvalidRequest(f"Unsupported sort dir '{direction}' for 'sort'.")
        order.append((key, direction == "desc"))
    return tuple(order)


def parse_list_query(
    params: Sequence[tuple[str, str]], rules: ListRules, caller: Caller
) -> ListQuery:
    """`params` (as the query string gave them, repeats included) checked as Senlin does."""
    allowed = rules.allowed()
    for key, _ in params:
        if key not in allowed:
            shown = f"'{key}'" if rules.quoted else key
            raise InvalidRequest(f"Invalid parameter {shown}")
    single = dict(params)
    if "global_project" in single and parse_bool("global_project", single["global_project"]):
        if Role.ADMIN not in caller.roles:
            raise Forbidden(NOT_AUTHORIZED)
        raise InvalidRequest("Listing every project's objects (global_project) is not supported.")
    filters: dict[str, list[Any]] = {}
    for key, value in params:
        if key in rules.filters:
            filters.setdefault(key, []).append(value)
    for key in rules.flags:
        if key in single:
            filters[key] = [parse_bool(key, single[key])]
    for key, choices in (("status", rules.statuses), ("level", rules.levels)):
        given = filters.get(key)
        wrong = [v for v in given or () if choices is not None and v not in choices]
        if wrong:  # oslo's enum field names the first value it cannot take, as given
            raise InvalidRequest(f"Field value {wrong[0]} is invalid")
    if rules.action_names:
        wrong = [v for v in filters.get("action", ()) if not ACTION_NAME.fullmatch(v)]
        if wrong:
            raise InvalidRequest(f"Field value {wrong[0]} is invalid")
    return ListQuery(
        filters=filters,
        limit=_limit(single["limit"]) if "limit" in single else None,
        marker=_marker(single["marker"]) if "marker" in single else None,
        sort=_sort(single["sort"], rules.sort_keys) if "sort" in single else (),
    )


def _checked(rules: ListRules) -> Callable[..., Any]:
    """A route dependency: the request's list parameters, checked before FastAPI's own."""

    async def dependency(request: Request, caller: CallerDep) -> ListQuery:
        return parse_list_query(list(request.query_params.multi_items()), rules, caller)

    return dependency


def _sort_value(value: Any) -> tuple[int, Any]:
    """None last, then the value (as text when types differ)."""
    if value is None:
        return (1, "")
    return (0, value if isinstance(value, int | float) else str(value))


def filter_and_page(items: Sequence[T], query: ListQuery) -> list[T]:
    """`items` kept by the query's filters, in its order, after its marker, cut to its limit.

    Each parameter names the object's attribute (an object without it has None there);
    an object whose attribute is a list matches when any element is a wanted value.
    """
    kept = [
        item
        for item in items
        if all(_matches(attribute(item, key), wanted) for key, wanted in query.filters.items())
    ]
    for key, descending in reversed(query.sort):  # stable sorts, last key first

        def by(item: T, key: str = key) -> tuple[int, Any]:
            return _sort_value(attribute(item, key))

        kept.sort(key=by, reverse=descending)
    if query.marker is not None:
        ids = [str(attribute(item, "id")) for item in kept]
        if query.marker in ids:
            kept = kept[ids.index(query.marker) + 1 :]
    if query.limit is not None:
        kept = kept[: query.limit]
    return kept


def _matches(value: Any, wanted: list[Any]) -> bool:
    if isinstance(value, list | tuple):
        return any(v in wanted for v in value)
    return value in wanted


def attribute(item: Any, key: str) -> Any:
    """An object's attribute by Senlin's name (None when it has none)."""
    return getattr(item, key, None)


#: The lists, with Senlin's whitelists, sort keys and statuses (`senlin/common/consts.py`).
CLUSTERS: Final = ListRules(
    filters=("name", "status"),
    sort_keys=("name", "status", "init_at", "created_at", "updated_at"),
    statuses=(
        "INIT", "ACTIVE", "CREATING", "UPDATING", "RESIZING", "DELETING", "CHECKING",
        "RECOVERING", "CRITICAL", "ERROR", "WARNING", "OPERATING",
    ),
    quoted=True,
)  # fmt: skip
NODES: Final = ListRules(
    filters=("cluster_id", "name", "status"),
    sort_keys=("index", "name", "status", "init_at", "created_at", "updated_at"),
    statuses=(
        "INIT", "ACTIVE", "ERROR", "WARNING", "CREATING", "UPDATING", "DELETING",
        "RECOVERING", "OPERATING",
    ),
)  # fmt: skip
PROFILES: Final = ListRules(
    filters=("name", "type"), sort_keys=("type", "name", "created_at", "updated_at")
)
POLICIES: Final = ListRules(
    filters=("name", "type"), sort_keys=("type", "name", "created_at", "updated_at")
)
RECEIVERS: Final = ListRules(
    filters=("name", "type", "cluster_id", "user_id", "action"),
    sort_keys=("name", "type", "action", "cluster_id", "created_at", "user_id"),
)
ACTIONS: Final = ListRules(
    filters=("name", "cluster_id", "target", "action", "status"),
    sort_keys=("name", "target", "action", "created_at", "status"),
    statuses=(
        "INIT", "WAITING", "READY", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED",
        "WAITING_LIFECYCLE_COMPLETION", "SUSPENDED",
    ),
)  # fmt: skip
EVENTS: Final = ListRules(
    filters=("oname", "otype", "oid", "cluster_id", "action", "level"),
    sort_keys=(
        "timestamp", "level", "otype", "oname", "action", "status", "oid", "cluster_id",
    ),
    # Senlin's names, and Warden's WARNING (its events' level) beside Senlin's WARN.
    levels=("CRITICAL", "ERROR", "WARN", "WARNING", "INFO", "DEBUG"),
    action_names=True,
)  # fmt: skip
CLUSTER_POLICIES: Final = ListRules(
    filters=("policy_name", "policy_type"), sort_keys=("enabled",), flags=("enabled",), paged=False
)

WARDEN_EVENTS: Final = ListRules(
    filters=(*EVENTS.filters, "obj_id", "obj_type", "action_id"),
    sort_keys=EVENTS.sort_keys,
    levels=EVENTS.levels,
    action_names=True,
)
"""Senlin's event filters, and Warden's own names for three of them."""

#: Route parameters: each list's query, checked.
ClustersQuery = Annotated[ListQuery, Depends(_checked(CLUSTERS))]
NodesQuery = Annotated[ListQuery, Depends(_checked(NODES))]
ProfilesQuery = Annotated[ListQuery, Depends(_checked(PROFILES))]
PoliciesQuery = Annotated[ListQuery, Depends(_checked(POLICIES))]
ReceiversQuery = Annotated[ListQuery, Depends(_checked(RECEIVERS))]
ActionsQuery = Annotated[ListQuery, Depends(_checked(ACTIONS))]
EventsQuery = Annotated[ListQuery, Depends(_checked(WARDEN_EVENTS))]
ClusterPoliciesQuery = Annotated[ListQuery, Depends(_checked(CLUSTER_POLICIES))]
