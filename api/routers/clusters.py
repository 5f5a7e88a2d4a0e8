"""`/v1/clusters` and `/v1/nodes` (reads from the projection, writes via workflows)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Request, Response, status
from jsonpath_ng.exceptions import JSONPathError
from jsonpath_ng.parser import parse as parse_jsonpath
from pydantic import BaseModel
from sqlmodel import Session

from api.auth import CallerDep, WriterDep
from api.cluster_service import (
    add_nodes_request,
    attach_request,
    create_cluster,
    del_nodes_request,
    detach_request,
    find_cluster,
    new_action_id,
    policy_update_request,
    replace_nodes_request,
    send_cluster_update,
    update_request,
    versioned_type,
)
from api.deps import DbDep, TemporalDep
from api.lifecycle import signal_lifecycle
from api.node_service import with_details
from api.paths import ClusterId, ClusterInPath
from api.routers import cluster_policies
from api.schemas.actions import ActionAccepted
from api.schemas.clusters import (
    CheckBody,
    ClusterActionRequest,
    ClusterCreate,
    ClusterEnvelope,
    ClusterList,
    ClusterPublic,
    ClusterUpdate,
    CollectedAttribute,
    CollectedAttributes,
    DelNodesBody,
    LifecycleBody,
    LockBody,
    NodeIdsBody,
    NodePublic,
    PolicyAttachBody,
    PolicyDetachBody,
    PolicyUpdateBody,
    RecoverBody,
    ReplaceNodesBody,
)
from api.schemas.common import ERROR_RESPONSES
from api.senlin_lists import ClustersQuery, filter_and_page
from api.senlin_prefix import requested_version, require_version
from api.temporal import TemporalGateway
from domain.cluster.policies.specs import PolicyType
from domain.cluster.requests import (
    ClusterOperationRequest,
    ClusterPropertiesRequest,
    LockClusterRequest,
    OperationAccepted,
)
from domain.cluster.server_ops import parse_operation
from domain.cluster.state import ClusterState
from domain.errors import InvalidRequest, NotFound
from store.clusters import (
    ClusterRecord,
    get_cluster,
    list_clusters,
    list_nodes,
)
from store.profiles import get_profile, list_profiles
from workflows import ids
from workflows.cluster.messages import ClusterOperations as Ops
from workflows.health.messages import HealthSummary
from workflows.operation import Operation

router = APIRouter(prefix="/v1", tags=["clusters"], responses=ERROR_RESPONSES)
#: The clustering microversion that brought cluster collect.
COLLECT_VERSION = (1, 2)
#: The clustering microversion from which a cluster update honours `profile_only`.
PROFILE_ONLY_VERSION = (1, 6)
#: The clustering microversion that brought cluster and node operations.
OPERATIONS_VERSION = (1, 4)
#: Node fields a cluster operation's `filters` may select on.
OPERATION_FILTERS = ("status", "name", "role")


def one_operation(body: dict[str, Any], *, period: str) -> tuple[str, dict[str, Any]]:
    """The one operation a body names, or Senlin's 400 (its node wording ends in a period)."""
    if not body:
        raise InvalidRequest(f"No operation specified{period}")
    if len(body) > 1:
        raise InvalidRequest(f"Multiple operations specified{period}")
    [(name, given)] = body.items()
    if given is not None and not isinstance(given, dict):
        raise InvalidRequest("The params provided is not a map.")
    return str(name), dict(given or {})


_NodesOperation = Operation[ClusterState, ClusterOperationRequest, OperationAccepted]
#: Senlin's cluster action keys whose body is plain parameters, and their operation.
_CLUSTER_ACTIONS: dict[str, _NodesOperation] = {
    "check": Ops.check,
    "recover": Ops.recover,
    "unlock": Ops.unlock,
    "scale_out": Ops.scale_out,
    "scale_in": Ops.scale_in,
    "resize": Ops.resize,
}
router.include_router(cluster_policies.router)


def _profile_names(session: Session, project_id: str) -> dict[str, str]:
    return {p.id: p.name for p in list_profiles(session, project_id, limit=10_000)}


def _cluster_view(session: Session, project_id: str, cluster_id: str) -> ClusterPublic | None:
    record = get_cluster(session, project_id, cluster_id)
    if record is None:
        return None
    nodes = list_nodes(session, project_id, cluster_id=record.id)
    names = _profile_names(session, project_id)
    return ClusterPublic.of(record, [n.id for n in nodes], names.get(record.profile_id, ""))


def _cluster_views(session: Session, project_id: str) -> list[ClusterPublic]:
    names = _profile_names(session, project_id)
    views = []
    for record in list_clusters(session, project_id):
        nodes = list_nodes(session, project_id, cluster_id=record.id)
        views.append(
            ClusterPublic.of(record, [n.id for n in nodes], names.get(record.profile_id, ""))
        )
    return views


def action_location(request: Request, action_id: str) -> str:
    """`/v1/actions/{id}`, below `/cluster` when the request came that way."""
    return f"{request.scope.get('root_path', '')}/v1/actions/{action_id}"


def accepted_without_body(request: Request, action_id: str) -> Response:
    """Senlin's answer to a delete: 202, no body, the action in `Location`."""
    location = action_location(request, action_id)
    return Response(status_code=status.HTTP_202_ACCEPTED, headers={"Location": location})


def accepted_action(request: Request, response: Response, action_id: str) -> ActionAccepted:
    """202 `{"action": id}` with the action in `Location`."""
    response.headers["Location"] = action_location(request, action_id)
    return ActionAccepted(action=action_id)


@router.post("/clusters", status_code=status.HTTP_202_ACCEPTED, response_model=ClusterEnvelope)
async def create_cluster_route(
    caller: WriterDep,
    db: DbDep,
    temporal: TemporalDep,
    body: ClusterCreate,
    http_request: Request,
    response: Response,
) -> ClusterEnvelope:
    """Create a cluster; its nodes are created by the CLUSTER_CREATE action."""
    cluster_id, accepted = await create_cluster(db, temporal, caller, body.cluster)
    view = await db.run(_cluster_view, caller.project_id, cluster_id)
    if view is None:  # the accepting update writes the row first; this is a broken invariant
        raise NotFound(f"The cluster '{cluster_id}' could not be found.")
    response.headers["Location"] = action_location(http_request, accepted.action_id)
    return ClusterEnvelope(cluster=view)


@router.patch(
    "/clusters/{cluster_id}", status_code=status.HTTP_202_ACCEPTED, response_model=ClusterEnvelope
)
async def update_cluster_route(
    caller: WriterDep,
    db: DbDep,
    temporal: TemporalDep,
    cluster_id: ClusterId,
    body: ClusterUpdate,
    http_request: Request,
    response: Response,
) -> ClusterEnvelope:
    """Change the name, metadata, config or timeout at once, and with `profile_id` roll
    every node onto a new profile (CLUSTER_UPDATE, in the batch policy's batches; with
    `profile_only`, new nodes only). `Location` names the action that does the most."""
    if body.cluster is None:
        raise InvalidRequest("Malformed request data, missing 'cluster' key in request body.")
    changes = body.cluster
    if requested_version(http_request.headers) < PROFILE_ONLY_VERSION:
        changes = changes.model_copy(update={"profile_only": None})  # Senlin ignores it
    record = await find_cluster(db, caller, cluster_id)
    properties = changes.properties()
    if not properties and changes.profile_id is None:
        raise InvalidRequest("No property needs an update.")
    rolling = await update_request(db, caller, record, changes) if changes.profile_id else None
    if properties:
        request = ClusterPropertiesRequest(action_id=new_action_id(), **properties)
        accepted = await send_cluster_update(temporal, record, Ops.update_properties, request)
    if rolling is not None:
        accepted = await send_cluster_update(temporal, record, Ops.update, rolling)
    view = await db.run(_cluster_view, caller.project_id, record.id)
    if view is None:  # deleted in between: the update was refused before this
        raise NotFound(f"The cluster '{cluster_id}' could not be found.")
    response.headers["Location"] = action_location(http_request, accepted.action_id)
    return ClusterEnvelope(cluster=view)


@router.get("/clusters", response_model=ClusterList)
async def list_clusters_route(caller: CallerDep, db: DbDep, query: ClustersQuery) -> ClusterList:
    """Clusters of the caller's project, filtered, sorted and paged as Senlin does."""
    views = await db.run(_cluster_views, caller.project_id)
    return ClusterList(clusters=filter_and_page(views, query))


@router.get("/clusters/{cluster_id}", response_model=ClusterEnvelope)
async def get_cluster_route(
    caller: CallerDep, db: DbDep, temporal: TemporalDep, cluster_id: ClusterId
) -> ClusterEnvelope:
    """One cluster by id or unique name, with its health summary when a policy watches it."""
    view = await db.run(_cluster_view, caller.project_id, cluster_id)
    if view is None:
        raise NotFound(f"The cluster '{cluster_id}' could not be found.")
    if any(p.get("type") == PolicyType.HEALTH.value for p in view.policies):
        health = await temporal.describe(ids.health_manager(view.id), HealthSummary)
        view = view.model_copy(update={"health": health})
    return ClusterEnvelope(cluster=view)


@router.get("/clusters/{cluster_id}/attrs/{path:path}", response_model=CollectedAttributes)
async def collect_route(
    cluster: ClusterInPath,
    temporal: TemporalDep,
    path: Annotated[str, Path(max_length=255)],
    request: Request,
) -> CollectedAttributes:
    """Senlin's cluster collect (API 1.2): one attribute of every member, found by the
    JSONPath `path` in the node as `GET /v1/nodes/{id}` shows it (`name`,
    `metadata.role`, `details.status` from its server, …); members without it are left
    out."""
    require_version(request.headers, COLLECT_VERSION)
    stripped = path.strip()
    if stripped in ("", "None"):
        raise InvalidRequest("Required path attribute is missing.")
    try:
        finder = parse_jsonpath(stripped)
    except JSONPathError as err:
        raise InvalidRequest(f"Invalid attribute path - {err}") from err
    record = await cluster.load()
    views = await cluster.db.run(_member_views, cluster.caller.project_id, record.id)
    if stripped.startswith("details"):
        views = await with_details(temporal, views)
    found = []
    for view in views:
        matches = [m.value for m in finder.find(view.model_dump(mode="json"))]
        if matches:
            found.append(CollectedAttribute(id=view.id, value=matches[0]))
    return CollectedAttributes(cluster_attributes=found)


def _member_views(session: Session, project_id: str, cluster_id: str) -> list[NodePublic]:
    names = _profile_names(session, project_id)
    return [
        NodePublic.of(n, names.get(n.profile_id, ""))
        for n in list_nodes(session, project_id, cluster_id=cluster_id)
    ]


@router.post(
    "/clusters/{cluster_id}/ops",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=ActionAccepted,
)
async def cluster_operation_route(
    caller: WriterDep,
    cluster: ClusterInPath,
    temporal: TemporalDep,
    body: Annotated[dict[str, Any], Body()],
    http_request: Request,
    response: Response,
) -> ActionAccepted:
    """Senlin's cluster operation (API 1.4): `{"reboot": {"filters"?: {status?, name?,
    role?}, "params"?: {...}}}` on every member the filters keep."""
    require_version(http_request.headers, OPERATIONS_VERSION)
    name, given = one_operation(body, period="")
    record = await cluster.load()
    filters = given.get("filters") or {}
    if not isinstance(filters, dict):
        raise InvalidRequest("The filters provided is not a map.")
    unknown = sorted(set(filters) - set(OPERATION_FILTERS))
    if unknown:
        raise InvalidRequest(f"Invalid filter key(s): {unknown}.")
    profile = await cluster.db.run(get_profile, caller.project_id, record.profile_id)
    operation = parse_operation(name, given.get("params") or {}, versioned_type(profile))
    members = await cluster.db.run(list_nodes, caller.project_id, cluster_id=record.id)
    chosen = [
        n.id for n in members if all(str(getattr(n, k)) == str(v) for k, v in filters.items())
    ]
    if not chosen:
        raise InvalidRequest("No node (in the specified cluster) is selected.")
    params = {"operation": operation.name, "params": operation.params, "nodes": chosen}
    request = ClusterOperationRequest(action_id=new_action_id(), params=params)
    accepted = await send_cluster_update(temporal, record, Ops.operation, request)
    return accepted_action(http_request, response, accepted.action_id)


@router.delete(
    "/clusters/{cluster_id}",
    status_code=status.HTTP_202_ACCEPTED,
    response_class=Response,
    responses={202: {"description": "Accepted: the action is in `Location` (no body)"}},
)
async def delete_cluster_route(
    caller: WriterDep, cluster: ClusterInPath, temporal: TemporalDep, http_request: Request
) -> Response:
    """Delete every node, then the cluster (409 while busy or locked). 202 with no body,
    as Senlin answers; the action is in `Location`."""
    record = await cluster.load()
    request = ClusterOperationRequest(action_id=new_action_id())
    accepted = await send_cluster_update(temporal, record, Ops.delete, request)
    return accepted_without_body(http_request, accepted.action_id)


@router.post(
    "/clusters/{cluster_id}/actions",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=ActionAccepted,
)
async def cluster_action_route(
    caller: WriterDep,
    db: DbDep,
    temporal: TemporalDep,
    cluster_id: ClusterId,
    body: ClusterActionRequest,
    http_request: Request,
    response: Response,
) -> ActionAccepted:
    """Run one action on a cluster (exactly one key; docs/api-contract.md §Clusters)."""
    name, params = body.only_action()
    if isinstance(params, NodeIdsBody):  # Senlin checks the list before the cluster
        keys = params.ids()
        destroy = params.destroy() if isinstance(params, DelNodesBody) else None
    if isinstance(params, ReplaceNodesBody):
        pairs = params.pairs()
    if isinstance(params, LifecycleBody):
        token = await signal_lifecycle(
            db, temporal, caller, cluster_id, name, params.lifecycle_action_token
        )
        return accepted_action(http_request, response, token)
    record = await find_cluster(db, caller, cluster_id)
    if isinstance(params, LockBody):
        lock = LockClusterRequest(
            action_id=new_action_id(), reason=params.reason, owner=params.owner
        )
        accepted = await send_cluster_update(temporal, record, Ops.lock, lock)
    elif isinstance(params, PolicyAttachBody):
        attach = await attach_request(db, caller, record, params)
        accepted = await send_cluster_update(temporal, record, Ops.policy_attach, attach)
    elif isinstance(params, PolicyDetachBody):
        detach = await detach_request(db, caller, params)
        accepted = await send_cluster_update(temporal, record, Ops.policy_detach, detach)
    elif isinstance(params, PolicyUpdateBody):
        rebind = await policy_update_request(db, caller, params)
        accepted = await send_cluster_update(temporal, record, Ops.policy_update, rebind)
    elif isinstance(params, DelNodesBody):
        found = await del_nodes_request(db, caller, record, keys)
        given = {"nodes": found} | ({} if destroy is None else {"destroy_after_deletion": destroy})
        request = ClusterOperationRequest(action_id=new_action_id(), params=given)
        accepted = await send_cluster_update(temporal, record, Ops.del_nodes, request)
    elif isinstance(params, ReplaceNodesBody):
        replacing = await replace_nodes_request(db, caller, record, pairs)
        request = ClusterOperationRequest(action_id=new_action_id(), params={"nodes": replacing})
        accepted = await send_cluster_update(temporal, record, Ops.replace_nodes, request)
    elif isinstance(params, NodeIdsBody):
        found = await add_nodes_request(db, caller, record, keys)
        request = ClusterOperationRequest(action_id=new_action_id(), params={"nodes": found})
        accepted = await send_cluster_update(temporal, record, Ops.add_nodes, request)
    else:
        return await run_cluster_action(temporal, record, name, params, http_request, response)
    return accepted_action(http_request, response, accepted.action_id)


async def run_cluster_action(
    temporal: TemporalGateway,
    record: ClusterRecord,
    name: str,
    params: BaseModel,
    http_request: Request,
    response: Response,
) -> ActionAccepted:
    """One of `_CLUSTER_ACTIONS` with its checked parameters: 202 and `Location`."""
    given = params.model_dump(exclude_none=True)
    if isinstance(params, RecoverBody):
        params.ensure_recognized()
        given = params.known()
    elif isinstance(params, CheckBody):
        given = {}
    request = ClusterOperationRequest(action_id=new_action_id(), params=given)
    accepted = await send_cluster_update(temporal, record, _CLUSTER_ACTIONS[name], request)
    return accepted_action(http_request, response, accepted.action_id)
