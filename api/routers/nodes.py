"""`/v1/nodes`: cluster members and standalone nodes (reads from the projection, writes
via the owning workflow: the node's cluster, or the standalone node's own)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request, Response, status
from fastapi.responses import JSONResponse
from sqlmodel import Session

from api.auth import CallerDep, WriterDep
from api.cluster_service import find_cluster, new_action_id, send_cluster_update, versioned_type
from api.deps import DbDep, TemporalDep
from api.node_service import (
    create_node,
    find_node,
    is_standalone,
    send_node_update,
    with_details,
)
from api.paths import NodeId
from api.routers.clusters import (
    OPERATIONS_VERSION,
    accepted_action,
    accepted_without_body,
    action_location,
    one_operation,
)
from api.schemas.actions import ActionAccepted
from api.schemas.clusters import (
    CheckBody,
    NodeActionRequest,
    NodePublic,
    NodeShownEnvelope,
    NodeShownList,
    RecoverBody,
    senlin_bool,
)
from api.schemas.common import ERROR_RESPONSES
from api.schemas.nodes import NodeChanges, NodeCreate, NodePatch
from api.senlin_lists import NodesQuery, filter_and_page
from api.senlin_prefix import requested_version, require_version
from domain.cluster.requests import ClusterOperationRequest, MarkNodeRequest, OperationAccepted
from domain.cluster.server_ops import parse_operation
from domain.cluster.standalone import NodeUpdateRequest
from domain.errors import InvalidRequest, NotFound
from store.clusters import ClusterRecord, NodeRecord, get_cluster, get_node, list_nodes
from store.profiles import ProfileRecord, get_profile, list_profiles
from workflows.cluster.messages import ClusterOperations as ClusterOps
from workflows.node.messages import NodeOperations as NodeOps

router = APIRouter(prefix="/v1", tags=["nodes"], responses=ERROR_RESPONSES)

#: Senlin's node action keys and their operation, on a member's cluster.
_MEMBER_ACTIONS = {"check": ClusterOps.check_node, "recover": ClusterOps.recover}
#: The same on a standalone node.
_STANDALONE_ACTIONS = {"check": NodeOps.check, "recover": NodeOps.recover}


def _node_views(
    session: Session, project_id: str, cluster_id: str | None, node_id: str | None = None
) -> list[NodePublic]:
    names = {p.id: p.name for p in list_profiles(session, project_id, limit=10_000)}
    if node_id is not None:
        found = get_node(session, project_id, node_id)
        records = [found] if found else []
    else:
        records = list_nodes(session, project_id, cluster_id=cluster_id)
    return [NodePublic.of(r, names.get(r.profile_id, "")) for r in records]


async def _view(db: DbDep, caller: CallerDep, node_id: str) -> NodePublic:
    found = await db.run(_node_views, caller.project_id, None, node_id)
    if not found:
        raise NotFound(f"The node '{node_id}' could not be found.")
    view: NodePublic = found[0]
    return view


#: The clustering microversion from which nodes show `tainted`.
TAINTED_VERSION = (1, 13)


def node_document(node: NodePublic, request: Request, *, details: bool = False) -> dict[str, Any]:
    """A node as Senlin shows it: `details` only when asked (`show_details`), `tainted`
    only from API 1.13."""
    document: dict[str, Any] = node.model_dump(mode="json")
    if not details:
        document.pop("details", None)
    if requested_version(request.headers) < TAINTED_VERSION:
        document.pop("tainted", None)
    return document


def _node_response(
    request: Request,
    node: NodePublic,
    *,
    status_code: int = status.HTTP_200_OK,
    accepted: OperationAccepted | None = None,
    details: bool = False,
) -> JSONResponse:
    headers = {"Location": action_location(request, accepted.action_id)} if accepted else None
    body = {"node": node_document(node, request, details=details)}
    return JSONResponse(body, status_code=status_code, headers=headers)


@router.post("/nodes", status_code=status.HTTP_202_ACCEPTED, response_model=NodeShownEnvelope)
async def create_node_route(
    caller: WriterDep, db: DbDep, temporal: TemporalDep, body: NodeCreate, http_request: Request
) -> JSONResponse:
    """A standalone node, or with `cluster_id` a new member of that cluster (202; the
    action in `Location` says when its server is ACTIVE)."""
    node_id, accepted = await create_node(db, temporal, caller, body.node)
    node = await _view(db, caller, node_id)
    return _node_response(http_request, node, status_code=202, accepted=accepted)


@router.get("/nodes", response_model=NodeShownList)
async def list_nodes_route(
    query: NodesQuery,
    caller: CallerDep,
    db: DbDep,
    request: Request,
    cluster_id: Annotated[str | None, Query(max_length=64)] = None,
) -> JSONResponse:
    """Nodes of the caller's project, optionally of one cluster (by id, name or short
    id; an unknown one is Senlin's 400)."""
    if cluster_id:
        found: ClusterRecord | None = await db.run(get_cluster, caller.project_id, cluster_id)
        if found is None:
            raise InvalidRequest(f"Cannot find the given cluster: {cluster_id}.")
        cluster_id = found.id
    views = await db.run(_node_views, caller.project_id, cluster_id)
    query.filters.pop("cluster_id", None)
    listed = [node_document(n, request) for n in filter_and_page(views, query)]
    return JSONResponse({"nodes": listed})


@router.get("/nodes/{node_id}", response_model=NodeShownEnvelope)
async def get_node_route(
    caller: CallerDep,
    db: DbDep,
    temporal: TemporalDep,
    node_id: NodeId,
    request: Request,
    show_details: Annotated[str | None, Query(max_length=8)] = None,
) -> JSONResponse:
    """One node by id, unique name or short id; `show_details=true` adds `details`: its
    server as Nova shows it now (Senlin's `do_get_details`), read by the worker."""
    details = show_details is not None and senlin_bool(show_details)
    node = await _view(db, caller, node_id)
    if details:
        [node] = await with_details(temporal, [node])
    return _node_response(request, node, details=details)


@router.delete(
    "/nodes/{node_id}",
    status_code=status.HTTP_202_ACCEPTED,
    response_class=Response,
    responses={202: {"description": "Accepted: the action is in `Location` (no body)"}},
)
async def delete_node_route(
    caller: WriterDep,
    db: DbDep,
    temporal: TemporalDep,
    node_id: NodeId,
    http_request: Request,
) -> Response:
    """Delete a standalone node, or remove a member from its cluster (lifecycle hooks
    fire; 409 while busy or locked). 202 with no body, as Senlin answers; the action is
    in `Location`."""
    node = await find_node(db, caller, node_id)
    if is_standalone(node):
        request = ClusterOperationRequest(action_id=new_action_id())
        accepted = await send_node_update(temporal, node, NodeOps.delete, request)
    else:
        cluster = await find_cluster(db, caller, node.cluster_id)
        request = ClusterOperationRequest(action_id=new_action_id(), params={"nodes": [node.id]})
        accepted = await send_cluster_update(temporal, cluster, ClusterOps.delete_node, request)
    return accepted_without_body(http_request, accepted.action_id)


@router.post(
    "/nodes/{node_id}/actions",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=ActionAccepted,
)
async def node_action_route(
    caller: WriterDep,
    db: DbDep,
    temporal: TemporalDep,
    node_id: NodeId,
    body: NodeActionRequest,
    http_request: Request,
    response: Response,
) -> ActionAccepted:
    """`check {}` (this node's status, from the cloud) or `recover {operation?, …}`."""
    name, params = body.only_action()
    node = await find_node(db, caller, node_id)
    given = params.model_dump(exclude_none=True)
    if isinstance(params, RecoverBody):
        params.ensure_recognized()
        given = params.known()
    elif isinstance(params, CheckBody):
        given = {}
    if is_standalone(node):
        request = ClusterOperationRequest(action_id=new_action_id(), params=given)
        accepted = await send_node_update(temporal, node, _STANDALONE_ACTIONS[name], request)
        return accepted_action(http_request, response, accepted.action_id)
    cluster = await find_cluster(db, caller, node.cluster_id)
    request = ClusterOperationRequest(
        action_id=new_action_id(), params={**given, "nodes": [node.id]}
    )
    accepted = await send_cluster_update(temporal, cluster, _MEMBER_ACTIONS[name], request)
    return accepted_action(http_request, response, accepted.action_id)


@router.post(
    "/nodes/{node_id}/ops",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=ActionAccepted,
)
async def node_operation_route(
    caller: WriterDep,
    db: DbDep,
    temporal: TemporalDep,
    node_id: NodeId,
    body: Annotated[dict[str, Any], Body()],
    http_request: Request,
    response: Response,
) -> ActionAccepted:
    """Senlin's node operation (API 1.4): `{"reboot": {"type": "HARD"}}`, `{"stop": {}}`, …
    as its profile type lists them (`GET /v1/profile-types/{type}/ops`)."""
    require_version(http_request.headers, OPERATIONS_VERSION)
    name, given = one_operation(body, period=".")
    node = await find_node(db, caller, node_id)
    profile = await db.run(get_profile, caller.project_id, node.profile_id)
    operation = parse_operation(name, given, versioned_type(profile))
    params = {"operation": operation.name, "params": operation.params, "nodes": [node.id]}
    request = ClusterOperationRequest(action_id=new_action_id(), params=params)
    if is_standalone(node):
        accepted = await send_node_update(temporal, node, NodeOps.operation, request)
    else:
        cluster = await find_cluster(db, caller, node.cluster_id)
        accepted = await send_cluster_update(temporal, cluster, ClusterOps.node_operation, request)
    return accepted_action(http_request, response, accepted.action_id)


@router.patch(
    "/nodes/{node_id}",
    response_model=NodeShownEnvelope,
    responses={202: {"model": NodeShownEnvelope, "description": "Senlin's update: accepted"}},
)
async def patch_node_route(
    caller: WriterDep,
    db: DbDep,
    temporal: TemporalDep,
    node_id: NodeId,
    body: NodePatch,
    http_request: Request,
) -> JSONResponse:
    """Senlin's update `{"node": {name?, role?, metadata?, tainted?}}` (202 and the
    action), or Warden's mark `{"mark_unhealthy": bool}` (200): ERROR, and the first
    victim of the next scale-in, or the mark cleared."""
    node = await find_node(db, caller, node_id)
    if body.node is None:
        assert body.mark_unhealthy is not None  # NodePatch allows one form or the other
        await _mark(db, caller, temporal, node, body.mark_unhealthy, body.status_reason)
        return _node_response(http_request, await _view(db, caller, node.id))
    changes = body.node
    if changes.profile_id is not None and not is_standalone(node):
        raise InvalidRequest(
            "profile_id: a member's profile is changed by updating its cluster's profile "
            "(PATCH /v1/clusters/{id}), which rolls every member onto it."
        )
    new_profile = None
    if changes.profile_id is not None:
        new_profile = await db.run(get_profile, caller.project_id, changes.profile_id)
        if new_profile is None:
            raise InvalidRequest(
                f"The specified profile '{changes.profile_id}' could not be found."
            )
        if new_profile.id == node.profile_id:
            new_profile = None  # the same profile: nothing to recreate
    if not is_standalone(node):
        if changes.name is not None or changes.role is not None or changes.metadata is not None:
            raise InvalidRequest(
                "name, role, metadata: a cluster member's are not updated (Warden names "
                "members after their cluster); only `tainted` is."
            )
        if changes.tainted is None:
            raise InvalidRequest("No property needs an update.")
        accepted = await _mark(db, caller, temporal, node, changes.tainted, "")
    else:
        accepted = await _update_standalone(temporal, node, changes, new_profile)
    node_view = await _view(db, caller, node.id)
    return _node_response(http_request, node_view, status_code=202, accepted=accepted)


async def _update_standalone(
    temporal: TemporalDep, node: NodeRecord, changes: NodeChanges, profile: ProfileRecord | None
) -> OperationAccepted:
    """The properties at once, then (with a new profile) the server recreated from it;
    the answer names the last action."""
    simple = (changes.name, changes.role, changes.metadata, changes.tainted)
    if profile is None and all(v is None for v in simple):
        raise InvalidRequest("No property needs an update.")
    accepted = None
    if any(v is not None for v in simple):
        update = NodeUpdateRequest(
            action_id=new_action_id(),
            name=changes.name,
            role=changes.role,
            metadata=changes.metadata,
            tainted=changes.tainted,
        )
        accepted = await send_node_update(temporal, node, NodeOps.update, update)
    if profile is not None:
        params = {"profile_id": profile.id, "profile": profile.spec}
        request = ClusterOperationRequest(action_id=new_action_id(), params=params)
        accepted = await send_node_update(temporal, node, NodeOps.update_profile, request)
    assert accepted is not None
    return accepted


async def _mark(
    db: DbDep,
    caller: CallerDep,
    temporal: TemporalDep,
    node: NodeRecord,
    unhealthy: bool,
    reason: str,
) -> OperationAccepted:
    if is_standalone(node):
        raise InvalidRequest(
            "A standalone node is in no cluster: there is no scale-in to mark it for."
        )
    cluster = await find_cluster(db, caller, node.cluster_id)
    request = MarkNodeRequest(
        action_id=new_action_id(),
        node_id=node.id,
        mark_unhealthy=unhealthy,
        status_reason=reason,
    )
    return await send_cluster_update(temporal, cluster, ClusterOps.mark_unhealthy, request)
