"""`warden cluster …`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.actions import DEFAULT_TIMEOUT_S, finish
from cli.context import FormatOpt, TimeoutOpt, WaitOpt, session
from cli.output import Column

cluster_app = typer.Typer(help="Clusters of servers made from one profile.")

Cluster = Annotated[str, typer.Argument(metavar="CLUSTER", help="Cluster id or name.")]
Count = Annotated[int, typer.Option("--count", "-n", min=1, help="How many nodes.")]
Reason = Annotated[str, typer.Option(help="Why (shown with the status).")]
Operation = Annotated[
    str | None, typer.Option(help="REBOOT, REBUILD or RECREATE (default: the policy's list).")
]
RebootType = Annotated[str | None, typer.Option("--type", help="REBOOT type: SOFT or HARD.")]
CheckFirst = Annotated[
    bool,
    typer.Option(
        "--check",
        help="Ask the cloud first; recover only the nodes it reports unhealthy (or marked).",
    ),
]

CLUSTER_FIELDS = [
    "id", "name", "status", "status_reason", "desired_capacity", "min_size", "max_size",
    "profile_id", "nodes", "policies", "lock", "health", "metadata", "created_at", "updated_at",
]  # fmt: skip
CLUSTER_COLUMNS = [
    Column("ID", "id"),
    Column("Name", "name"),
    Column("Status", "status"),
    Column("Size", lambda c: f"{len(c['nodes'])}/{c['desired_capacity']}"),
    Column("Locked", lambda c: bool(c.get("lock"))),
    Column("Reason", "status_reason"),
]
NODE_COLUMNS = [
    Column("ID", "id"),
    Column("Name", "name"),
    Column("Status", "status"),
    Column("Server", "physical_id"),
    Column("Cluster", "cluster_id"),
    Column("Reason", "status_reason"),
]


def _act(
    ctx: typer.Context,
    cluster: str,
    body: dict[str, Any],
    fmt: FormatOpt,
    *,
    wait: bool = False,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> None:
    client, out = session(ctx, fmt)
    accepted = client.post(f"/v1/clusters/{cluster}/actions", body).json()
    what = f"{next(iter(body))} on cluster {cluster}"
    finish(client, out, accepted["action"], what=what, wait=wait, timeout=timeout)


@cluster_app.command("create")
def create(
    ctx: typer.Context,
    name: str,
    profile: Annotated[str, typer.Option("--profile", "-p", help="Profile id or name.")],
    desired_capacity: Annotated[int, typer.Option("--desired-capacity", "-c", min=0)] = 0,
    min_size: Annotated[int, typer.Option(min=0)] = 0,
    max_size: Annotated[int, typer.Option(min=-1, help="-1: no limit.")] = -1,
    wait: WaitOpt = False,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT_S,
    fmt: FormatOpt = None,
) -> None:
    """Create a cluster and its first nodes."""
    client, out = session(ctx, fmt)
    body = {
        "cluster": {
            "name": name,
            "profile_id": profile,
            "desired_capacity": desired_capacity,
            "min_size": min_size,
            "max_size": max_size,
        }
    }
    response = client.post("/v1/clusters", body)
    what = f"Cluster {name} ({response.json()['cluster']['id']})"
    finish(client, out, client.action_of(response), what=what, wait=wait, timeout=timeout)


@cluster_app.command("update")
def update(
    ctx: typer.Context,
    cluster: Cluster,
    profile: Annotated[str, typer.Option("--profile", "-p", help="New profile id or name.")],
    wait: WaitOpt = False,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT_S,
    fmt: FormatOpt = None,
) -> None:
    """Roll every node onto a new profile, batch by batch (a batch policy sets the batches).

    Failed and marked nodes are replaced first; each replaced node is removed like any
    removal (lifecycle hooks fire). With --wait, each batch is shown as it goes.
    """
    client, out = session(ctx, fmt)
    body = {"cluster": {"profile_id": profile}}
    response = client.request("PATCH", f"/v1/clusters/{cluster}", json=body)
    what = f"Update of cluster {cluster} to profile {profile}"
    finish(client, out, client.action_of(response), what=what, wait=wait, timeout=timeout)


@cluster_app.command("list")
def list_clusters(ctx: typer.Context, fmt: FormatOpt = None) -> None:
    """The project's clusters."""
    client, out = session(ctx, fmt)
    out.rows(client.get("/v1/clusters")["clusters"], CLUSTER_COLUMNS)


@cluster_app.command("show")
def show(ctx: typer.Context, cluster: Cluster, fmt: FormatOpt = None) -> None:
    """One cluster (with its health summary), then its nodes."""
    client, out = session(ctx, fmt)
    record = client.get(f"/v1/clusters/{cluster}")["cluster"]
    if out.fmt == "json":
        out.json(record)
        return
    out.record(record, CLUSTER_FIELDS)
    out.rows(client.get("/v1/nodes", cluster_id=record["id"])["nodes"], NODE_COLUMNS)


@cluster_app.command("delete")
def delete(
    ctx: typer.Context,
    cluster: Cluster,
    wait: WaitOpt = False,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT_S,
    fmt: FormatOpt = None,
) -> None:
    """Delete every node, then the cluster (lifecycle hooks fire)."""
    client, out = session(ctx, fmt)
    action = client.action_of(client.request("DELETE", f"/v1/clusters/{cluster}"))
    finish(client, out, action, what=f"Delete {cluster}", wait=wait, timeout=timeout)


@cluster_app.command("scale-out")
def scale_out(
    ctx: typer.Context,
    cluster: Cluster,
    count: Count = 1,
    wait: WaitOpt = False,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT_S,
    fmt: FormatOpt = None,
) -> None:
    """Add nodes."""
    _act(ctx, cluster, {"scale_out": {"count": count}}, fmt, wait=wait, timeout=timeout)


@cluster_app.command("scale-in")
def scale_in(
    ctx: typer.Context,
    cluster: Cluster,
    count: Count = 1,
    wait: WaitOpt = False,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT_S,
    fmt: FormatOpt = None,
) -> None:
    """Remove nodes (unhealthy first, then by the deletion policy; hooks fire)."""
    _act(ctx, cluster, {"scale_in": {"count": count}}, fmt, wait=wait, timeout=timeout)


@cluster_app.command("resize")
def resize(
    ctx: typer.Context,
    cluster: Cluster,
    capacity: Annotated[int | None, typer.Option(help="Exact new size.")] = None,
    adjustment: Annotated[int | None, typer.Option(help="Add (or, negative, remove).")] = None,
    percentage: Annotated[float | None, typer.Option(help="Change by this percent.")] = None,
    min_size: Annotated[int | None, typer.Option(min=0)] = None,
    max_size: Annotated[int | None, typer.Option(min=-1)] = None,
    min_step: Annotated[int | None, typer.Option(min=0, help="With --percentage.")] = None,
    strict: Annotated[bool, typer.Option(help="Refuse instead of clamping to bounds.")] = True,
    wait: WaitOpt = False,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT_S,
    fmt: FormatOpt = None,
) -> None:
    """Change the size or the bounds (Senlin's resize)."""
    given = [(k, v) for k, v in (
        ("EXACT_CAPACITY", capacity),
        ("CHANGE_IN_CAPACITY", adjustment),
        ("CHANGE_IN_PERCENTAGE", percentage),
    ) if v is not None]  # fmt: skip
    if len(given) > 1:
        raise typer.BadParameter("Give one of --capacity, --adjustment, --percentage.")
    params: dict[str, Any] = {"strict": strict}
    if given:
        params |= {"adjustment_type": given[0][0], "number": given[0][1]}
    extra = {"min_size": min_size, "max_size": max_size, "min_step": min_step}
    params |= {k: v for k, v in extra.items() if v is not None}
    _act(ctx, cluster, {"resize": params}, fmt, wait=wait, timeout=timeout)


@cluster_app.command("del-nodes")
def del_nodes(
    ctx: typer.Context,
    cluster: Cluster,
    nodes: Annotated[list[str], typer.Argument(metavar="NODE_ID...")],
    wait: WaitOpt = False,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT_S,
    fmt: FormatOpt = None,
) -> None:
    """Delete these nodes (hooks fire)."""
    _act(ctx, cluster, {"del_nodes": {"nodes": nodes}}, fmt, wait=wait, timeout=timeout)


@cluster_app.command("attach")
def attach(
    ctx: typer.Context,
    cluster: Cluster,
    policy: Annotated[str, typer.Argument(metavar="POLICY", help="Policy id or name.")],
    enabled: Annotated[bool, typer.Option(help="Attach enabled or disabled.")] = True,
    wait: WaitOpt = False,
    fmt: FormatOpt = None,
) -> None:
    """Attach a policy."""
    body = {"policy_attach": {"policy_id": policy, "enabled": enabled}}
    _act(ctx, cluster, body, fmt, wait=wait)


@cluster_app.command("detach")
def detach(
    ctx: typer.Context,
    cluster: Cluster,
    policy: Annotated[str, typer.Argument(metavar="POLICY")],
    wait: WaitOpt = False,
    fmt: FormatOpt = None,
) -> None:
    """Detach a policy."""
    _act(ctx, cluster, {"policy_detach": {"policy_id": policy}}, fmt, wait=wait)


@cluster_app.command("lock")
def lock(
    ctx: typer.Context,
    cluster: Cluster,
    reason: Reason = "",
    owner: Annotated[str, typer.Option(help="Who holds the lock.")] = "",
    wait: WaitOpt = False,
    fmt: FormatOpt = None,
) -> None:
    """Maintenance mode: refuse every change until unlocked."""
    _act(ctx, cluster, {"lock": {"reason": reason, "owner": owner}}, fmt, wait=wait)


@cluster_app.command("unlock")
def unlock(
    ctx: typer.Context, cluster: Cluster, wait: WaitOpt = False, fmt: FormatOpt = None
) -> None:
    """Leave maintenance mode."""
    _act(ctx, cluster, {"unlock": {}}, fmt, wait=wait)


@cluster_app.command("check")
def check(
    ctx: typer.Context, cluster: Cluster, wait: WaitOpt = False, fmt: FormatOpt = None
) -> None:
    """Check every node's server now."""
    _act(ctx, cluster, {"check": {}}, fmt, wait=wait)


def recover_body(
    operation: str | None, reboot_type: str | None, check: bool = False
) -> dict[str, Any]:
    body: dict[str, Any] = {"check": True} if check else {}
    if operation:
        body["operation"] = operation
    if reboot_type:
        body["operation_params"] = {"type": reboot_type}
    return {"recover": body}


@cluster_app.command("recover")
def recover(
    ctx: typer.Context,
    cluster: Cluster,
    operation: Operation = None,
    reboot_type: RebootType = None,
    check: CheckFirst = False,
    wait: WaitOpt = False,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT_S,
    fmt: FormatOpt = None,
) -> None:
    """Recover the nodes in ERROR or WARNING (with --check: those the cloud finds unhealthy)."""
    body = recover_body(operation, reboot_type, check)
    _act(ctx, cluster, body, fmt, wait=wait, timeout=timeout)
