"""A cluster's load balancer: made at attach, its pool's members following the nodes.

The calls are the generic cloud-object activities (`activities/cloud_objects.py`), each
idempotent (a create is found again by its request id). As Senlin's LBaaS driver
does, every change waits for the load balancer to be ACTIVE before and after it:
Octavia refuses (409) a change while the load balancer is PENDING_UPDATE. Members are
therefore changed one at a time.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.cloud_objects import CloudObjectActivities
    from domain.cloud_objects import CloudCreate, CloudObject, CloudRef, CloudWait, Lookup
    from domain.cluster.nodes import NodeState, NodeStatus
    from domain.cluster.policies.loadbalance import (
        LB_MEMBER,
        LbBinding,
        LbResources,
        LoadBalancePolicyProperties,
        MonitorType,
        PersistenceType,
        lb_names,
        member_address,
        member_name,
        with_member,
    )
    from domain.errors import InvalidRequest
    from workflows.cluster.retries import POLL_RETRY, cloud_call
    from workflows.entity import failure_reason

#: A node's status reasons when its membership could not change (Senlin's words).
ADD_FAILED = "Failed in adding node into lb pool."
REMOVE_FAILED = "Failed in removing node from lb pool."


async def wait_lb_active(loadbalancer_id: str, timeout_s: int, *, gone_ok: bool = False) -> None:
    """Until the load balancer's provisioning_status is ACTIVE (or, with `gone_ok`, it is
    gone); ActivityError after `timeout_s` (the policy's `lb_status_timeout`)."""
    ref = CloudRef(kind="loadbalancer", id=loadbalancer_id)
    if gone_ok:
        found = await cloud_call(CloudObjectActivities.show_cloud_object, ref, "is the LB there")
        if found is None:
            return
    await workflow.execute_activity_method(
        CloudObjectActivities.wait_cloud_object,
        CloudWait(ref=ref, field="provisioning_status", ready=("ACTIVE",), failed=("ERROR",)),
        start_to_close_timeout=timedelta(seconds=30),
        schedule_to_close_timeout=timedelta(seconds=timeout_s),
        retry_policy=POLL_RETRY,
        summary=f"wait for load balancer {loadbalancer_id} ACTIVE",
    )


def _session_persistence(props: LoadBalancePolicyProperties) -> dict[str, Any] | None:
    persistence = props.pool.session_persistence
    if persistence.type in (None, PersistenceType.NONE):
        return None
    # Octavia takes a cookie name only with APP_COOKIE (Senlin passed it as given).
    if persistence.type == PersistenceType.APP_COOKIE and persistence.cookie_name:
        return {"type": persistence.type.value, "cookie_name": persistence.cookie_name}
    return {"type": persistence.type.value}


def _monitor_body(props: LoadBalancePolicyProperties, pool_id: str) -> dict[str, Any] | None:
    monitor = props.health_monitor
    if monitor is None:
        return None
    body: dict[str, Any] = {
        "pool_id": pool_id,
        "type": monitor.type.value,
        "delay": monitor.delay,
        "timeout": monitor.timeout,
        "max_retries": monitor.max_retries,
        "admin_state_up": monitor.admin_state_up,
    }
    if monitor.type in (MonitorType.HTTP, MonitorType.HTTPS):
        optional = {
            "http_method": monitor.http_method.value if monitor.http_method else None,
            "url_path": monitor.url_path,
            "expected_codes": monitor.expected_codes,
        }
        body.update({k: v for k, v in optional.items() if v is not None})
    return body


async def create_lb(
    props: LoadBalancePolicyProperties, cluster_name: str, request_id: str
) -> LbResources:
    """The load balancer, listener, pool and health monitor of an attach (Senlin's
    `lb_create`), or the existing ones the policy names. What a failed create made is
    deleted again before the error is raised."""
    timeout = props.lb_status_timeout
    if props.loadbalancer:
        found: CloudObject | None = await cloud_call(
            CloudObjectActivities.find_cloud_object,
            CloudRef(kind="loadbalancer", id=props.loadbalancer),
            f"find load balancer {props.loadbalancer}",
        )
        if found is None:
            raise InvalidRequest(
                f"The specified loadbalancer '{props.loadbalancer}' could not be found."
            )
        if not props.pool.id:
            raise InvalidRequest("pool.id: required with an existing loadbalancer")
        monitor = props.health_monitor.id if props.health_monitor else None
        return LbResources(
            loadbalancer=found.id,
            pool=props.pool.id,
            healthmonitor=monitor,
            vip_address=props.vip.address or found.body.get("vip_address"),
            preexisting=True,
        )
    names, vip = lb_names(cluster_name), props.vip
    lookups: list[Lookup] = []
    body: dict[str, Any] = {"name": names["loadbalancer"], "admin_state_up": vip.admin_state_up}
    if vip.subnet:
        lookups.append(Lookup(path=("vip_subnet_id",), kind="subnet", ref=vip.subnet))
        body["vip_subnet_id"] = vip.subnet
    if vip.network:
        lookups.append(Lookup(path=("vip_network_id",), kind="network", ref=vip.network))
        body["vip_network_id"] = vip.network
    optional = {
        "vip_address": vip.address,
        "availability_zone": props.availability_zone,
        "flavor_id": props.flavor_id,
    }
    body.update({k: v for k, v in optional.items() if v})
    lb: CloudObject = await cloud_call(
        CloudObjectActivities.create_cloud_object,
        CloudCreate(kind="loadbalancer", body=body, lookups=tuple(lookups), request_id=request_id),
        f"create load balancer {names['loadbalancer']}",
    )
    made = LbResources(loadbalancer=lb.id, pool="", vip_address=lb.body.get("vip_address"))
    try:
        await wait_lb_active(lb.id, timeout)
        listener: CloudObject = await cloud_call(
            CloudObjectActivities.create_cloud_object,
            CloudCreate(
                kind="listener",
                body={
                    "name": names["listener"],
                    "loadbalancer_id": lb.id,
                    "protocol": vip.protocol.value,
                    "protocol_port": vip.protocol_port,
                    "connection_limit": vip.connection_limit,
                    "admin_state_up": vip.admin_state_up,
                },
                request_id=f"{request_id}-listener",
            ),
            f"create listener {names['listener']}",
        )
        made = made.model_copy(update={"listener": listener.id})
        await wait_lb_active(lb.id, timeout)
        pool_body: dict[str, Any] = {
            "name": names["pool"],
            "listener_id": listener.id,
            "protocol": props.pool.protocol.value,
            "lb_algorithm": props.pool.lb_method.value,
            "admin_state_up": props.pool.admin_state_up,
        }
        if persistence := _session_persistence(props):
            pool_body["session_persistence"] = persistence
        pool: CloudObject = await cloud_call(
            CloudObjectActivities.create_cloud_object,
            CloudCreate(kind="pool", body=pool_body, request_id=f"{request_id}-pool"),
            f"create pool {names['pool']}",
        )
        made = made.model_copy(update={"pool": pool.id})
        await wait_lb_active(lb.id, timeout)
        if monitor_body := _monitor_body(props, pool.id):
            monitor_made: CloudObject = await cloud_call(
                CloudObjectActivities.create_cloud_object,
                CloudCreate(kind="healthmonitor", body=monitor_body, request_id=f"{request_id}-hm"),
                f"create the health monitor of {names['pool']}",
            )
            made = made.model_copy(update={"healthmonitor": monitor_made.id})
            await wait_lb_active(lb.id, timeout)
    except ActivityError:
        await delete_lb(made, timeout)
        raise
    return made


async def delete_lb(made: LbResources, timeout_s: int) -> None:
    """Delete what an attach created: health monitor, pool, listener, then the load
    balancer (Senlin's `lb_delete`); what is gone already counts as deleted."""
    parts = [
        ("healthmonitor", made.healthmonitor),
        ("pool", made.pool),
        ("listener", made.listener),
    ]
    await wait_lb_active(made.loadbalancer, timeout_s, gone_ok=True)
    for kind, object_id in parts:
        if not object_id:
            continue
        await cloud_call(
            CloudObjectActivities.delete_cloud_object,
            CloudRef(kind=kind, id=object_id),
            f"delete {kind} {object_id}",
        )
        await wait_lb_active(made.loadbalancer, timeout_s, gone_ok=True)
    ref = CloudRef(kind="loadbalancer", id=made.loadbalancer)
    await cloud_call(CloudObjectActivities.delete_cloud_object, ref, "delete the load balancer")
    await workflow.execute_activity_method(
        CloudObjectActivities.wait_cloud_object_deleted,
        ref,
        start_to_close_timeout=timedelta(seconds=30),
        schedule_to_close_timeout=timedelta(seconds=timeout_s),
        retry_policy=POLL_RETRY,
        summary="wait for the load balancer gone",
    )


def _flagged(node: NodeState, reason: str) -> NodeState:
    return node.model_copy(
        update={"status": NodeStatus.WARNING, "status_reason": reason, "updated_at": workflow.now()}
    )


async def join_pool(binding: LbBinding, nodes: list[NodeState], request_id: str) -> list[NodeState]:
    """`nodes` with each ACTIVE one a member of the pool (`data['lb_member']`), at its
    address on the pool subnet's network; one that could not join is WARNING with
    Senlin's reason. Nodes already members, or without a server, are left as they are."""
    made, props = binding.resources, binding.properties
    joining = [n for n in nodes if n.physical_id and LB_MEMBER not in n.data]
    joining = [n for n in joining if n.status == NodeStatus.ACTIVE]
    if made is None or not joining:
        return nodes
    subnet: CloudObject | None = await cloud_call(
        CloudObjectActivities.find_cloud_object,
        CloudRef(kind="subnet", id=props.pool.subnet),
        f"find subnet {props.pool.subnet}",
    )
    network: CloudObject | None = None
    if subnet is not None:
        network = await cloud_call(
            CloudObjectActivities.show_cloud_object,
            CloudRef(kind="network", id=str(subnet.body.get("network_id"))),
            "show the pool subnet's network",
        )
    joined: dict[str, NodeState] = {}
    for node in joining:
        if subnet is None or network is None:
            joined[node.node_id] = _flagged(node, f"{ADD_FAILED} No subnet {props.pool.subnet}.")
            continue
        joined[node.node_id] = await _join(binding, made, node, subnet, network, request_id)
    return [joined.get(n.node_id, n) for n in nodes]


async def _join(
    binding: LbBinding,
    made: LbResources,
    node: NodeState,
    subnet: CloudObject,
    network: CloudObject,
    request_id: str,
) -> NodeState:
    assert node.physical_id is not None
    try:
        server: CloudObject | None = await cloud_call(
            CloudObjectActivities.show_cloud_object,
            CloudRef(kind="server", id=node.physical_id),
            f"addresses of {node.name}",
        )
        if server is None:
            return _flagged(node, f"{ADD_FAILED} Its server is gone.")
        try:
            address = member_address(
                server.body.get("addresses"),
                str(network.body.get("name")),
                int(subnet.body.get("ip_version") or 4),
            )
        except InvalidRequest as err:
            return _flagged(node, f"{ADD_FAILED} {err.message}")
        await wait_lb_active(made.loadbalancer, binding.timeout_s)
        member: CloudObject = await cloud_call(
            CloudObjectActivities.create_cloud_object,
            CloudCreate(
                kind="member",
                body={
                    "name": member_name(node.name),
                    "address": address,
                    "protocol_port": binding.properties.pool.protocol_port,
                    "subnet_id": subnet.id,
                },
                parent=Lookup(path=(), kind="pool", ref=made.pool),
                request_id=f"{request_id}-{node.node_id}-{node.physical_id}",
            ),
            f"add {node.name} to pool {made.pool}",
        )
        await wait_lb_active(made.loadbalancer, binding.timeout_s)
    except ActivityError as err:
        return _flagged(node, f"{ADD_FAILED} {failure_reason(err)}")
    return node.model_copy(update={"data": with_member(node.data, member.id)})


async def leave_pool(binding: LbBinding, nodes: list[NodeState]) -> list[NodeState]:
    """`nodes` with each member removed from the pool and its `lb_member` dropped; one
    whose member could not be removed is WARNING and keeps it (Senlin's `_remove_member`)."""
    made = binding.resources
    if made is None:
        return nodes
    left: list[NodeState] = []
    for node in nodes:
        member_id = node.data.get(LB_MEMBER)
        if not member_id:
            left.append(node)
            continue
        try:
            await wait_lb_active(made.loadbalancer, binding.timeout_s, gone_ok=True)
            await cloud_call(
                CloudObjectActivities.delete_cloud_object,
                CloudRef(kind="member", id=str(member_id), parent=made.pool),
                f"remove {node.name} from pool {made.pool}",
            )
            await wait_lb_active(made.loadbalancer, binding.timeout_s, gone_ok=True)
        except ActivityError as err:
            left.append(_flagged(node, f"{REMOVE_FAILED} {failure_reason(err)}"))
            continue
        left.append(node.model_copy(update={"data": with_member(node.data, None)}))
    return left
