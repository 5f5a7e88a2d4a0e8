"""`warden stack …`: Heat-compatible stacks."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from cli.client import ApiError, WardenClient
from cli.context import FormatOpt, TimeoutOpt, WaitOpt, session
from cli.output import Column, Output
from cli.progress import wait_stack
from domain.stack.state import LockLevel

stack_app = typer.Typer(help="Stacks: Heat templates run as durable workflows.")

DEFAULT_TIMEOUT_S = 3600.0
Stack = Annotated[str, typer.Argument(metavar="STACK", help="Stack name (or name/id).")]
TemplateOpt = Annotated[
    Path,
    typer.Option("--template", "-t", exists=True, dir_okay=False, help="Template YAML file."),
]
ParamOpt = Annotated[
    list[str] | None,
    typer.Option("--parameter", "-P", help="KEY=VALUE, repeatable."),
]
TimeoutMinsOpt = Annotated[
    int | None, typer.Option(min=1, max=10_080, help="Fail the operation after this long.")
]

STACK_FIELDS = [
    "id", "stack_name", "stack_status", "stack_status_reason", "parameters", "outputs",
    "lock", "parent", "disable_rollback", "timeout_mins", "creation_time", "updated_time",
]  # fmt: skip
STACK_COLUMNS = [
    Column("ID", "id"),
    Column("Name", "stack_name"),
    Column("Status", "stack_status"),
    Column("Locked", lambda s: bool(s.get("lock"))),
    Column("Updated", "updated_time"),
]
RESOURCE_COLUMNS = [
    Column("Resource", "resource_name"),
    Column("Type", "resource_type"),
    Column("Status", "resource_status"),
    Column("Physical id", "physical_resource_id"),
    Column("Stack", "stack_name"),
    Column("Reason", "resource_status_reason"),
]
EVENT_COLUMNS = [
    Column("Time", "event_time"),
    Column("Resource", "resource_name"),
    Column("Status", "resource_status"),
    Column("Reason", "resource_status_reason"),
]


def parse_parameters(pairs: list[str] | None) -> dict[str, str]:
    """`-P key=value` options as a mapping."""
    params: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"'{pair}' is not KEY=VALUE.", param_hint="--parameter")
        params[key] = value
    return params


def readable(stack: dict[str, Any]) -> dict[str, Any]:
    """Outputs as `{key: value}`, as people read them (JSON keeps Heat's list)."""
    outputs = {o["output_key"]: o["output_value"] for o in stack.get("outputs", [])}
    return {**stack, "outputs": outputs}


def stack_path(client: WardenClient, stack: str) -> str:
    """`/v1/{project}/stacks/{name}/{id}` of a stack given by name (or name/id)."""
    if "/" in stack:
        return f"{client.stacks_path()}/{stack}"
    found = client.get(f"{client.stacks_path()}/{stack}")["stack"]
    return f"{client.stacks_path()}/{found['stack_name']}/{found['id']}"


def _read_template(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as err:
        raise ApiError(f"Cannot read the template {path}: {err}") from err


def _follow(
    client: WardenClient,
    out: Output,
    path: str,
    action: str,
    *,
    wait: bool,
    timeout: float,
) -> None:
    name = path.rsplit("/", 2)[-2]
    if not wait:
        out.done(f"{action.lower()} of stack {name} started.", {"stack": path.rsplit("/", 1)[-1]})
        return
    stack = wait_stack(client, out, path, action, timeout)
    if stack is None:
        out.done(f"Stack {name} deleted.", {"stack": path.rsplit("/", 1)[-1], "deleted": True})
        return
    out.record(stack if out.fmt == "json" else readable(stack), STACK_FIELDS)
    if not str(stack["stack_status"]).endswith("_COMPLETE") or stack["stack_status"].startswith(
        "ROLLBACK_"
    ):
        raise typer.Exit(1)


@stack_app.command("create")
def create(
    ctx: typer.Context,
    name: str,
    template: TemplateOpt,
    parameter: ParamOpt = None,
    timeout_mins: TimeoutMinsOpt = None,
    rollback: Annotated[bool, typer.Option(help="Roll back when the create fails.")] = False,
    wait: WaitOpt = False,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT_S,
    fmt: FormatOpt = None,
) -> None:
    """Create a stack from a template."""
    client, out = session(ctx, fmt)
    body: dict[str, Any] = {
        "stack_name": name,
        "template": _read_template(template),
        "parameters": parse_parameters(parameter),
        "disable_rollback": not rollback,
    }
    if timeout_mins:
        body["timeout_mins"] = timeout_mins
    created = client.post(client.stacks_path(), body).json()["stack"]
    path = f"{client.stacks_path()}/{name}/{created['id']}"
    _follow(client, out, path, "CREATE", wait=wait, timeout=timeout)


@stack_app.command("list")
def list_stacks(ctx: typer.Context, fmt: FormatOpt = None) -> None:
    """The project's stacks."""
    client, out = session(ctx, fmt)
    out.rows(client.get(client.stacks_path())["stacks"], STACK_COLUMNS)


@stack_app.command("show")
def show(ctx: typer.Context, stack: Stack, fmt: FormatOpt = None) -> None:
    """One stack with its outputs and lock."""
    client, out = session(ctx, fmt)
    found = client.get(stack_path(client, stack))["stack"]
    out.record(found if out.fmt == "json" else readable(found), STACK_FIELDS)


@stack_app.command("update")
def update(
    ctx: typer.Context,
    stack: Stack,
    template: Annotated[
        Path | None,
        typer.Option("--template", "-t", exists=True, dir_okay=False, help="New template."),
    ] = None,
    parameter: ParamOpt = None,
    existing: Annotated[
        bool, typer.Option("--existing", help="Keep the current template; merge parameters.")
    ] = False,
    timeout_mins: TimeoutMinsOpt = None,
    wait: WaitOpt = False,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT_S,
    fmt: FormatOpt = None,
) -> None:
    """Update a stack. With no template (or --existing) the current one is kept, so an
    update replaces resources marked unhealthy and nothing else."""
    client, out = session(ctx, fmt)
    path = stack_path(client, stack)
    body: dict[str, Any] = {"parameters": parse_parameters(parameter)}
    if timeout_mins:
        body["timeout_mins"] = timeout_mins
    if template is not None:
        body["template"] = _read_template(template)
    method = "PATCH" if existing or template is None else "PUT"
    client.request(method, path, json=body)
    _follow(client, out, path, "UPDATE", wait=wait, timeout=timeout)


@stack_app.command("delete")
def delete(
    ctx: typer.Context,
    stack: Stack,
    wait: WaitOpt = False,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT_S,
    fmt: FormatOpt = None,
) -> None:
    """Delete a stack and everything it made."""
    client, out = session(ctx, fmt)
    path = stack_path(client, stack)
    client.request("DELETE", path)
    _follow(client, out, path, "DELETE", wait=wait, timeout=timeout)


@stack_app.command("resources")
def resources(
    ctx: typer.Context,
    stack: Stack,
    nested_depth: Annotated[int, typer.Option(min=0, max=10, help="Also nested stacks'.")] = 0,
    fmt: FormatOpt = None,
) -> None:
    """The stack's resources and their states."""
    client, out = session(ctx, fmt)
    found = client.get(f"{stack_path(client, stack)}/resources", nested_depth=nested_depth)
    out.rows(found["resources"], RESOURCE_COLUMNS)


@stack_app.command("events")
def events(ctx: typer.Context, stack: Stack, fmt: FormatOpt = None) -> None:
    """What happened to the stack, oldest first."""
    client, out = session(ctx, fmt)
    out.rows(client.get(f"{stack_path(client, stack)}/events")["events"], EVENT_COLUMNS)


@stack_app.command("mark-unhealthy")
def mark_unhealthy(
    ctx: typer.Context,
    stack: Stack,
    resource: Annotated[str, typer.Argument(help="Resource name or physical id.")],
    reason: Annotated[str, typer.Option(help="Shown as the resource's status reason.")] = "",
    reset: Annotated[bool, typer.Option("--reset", help="Clear the mark instead.")] = False,
    fmt: FormatOpt = None,
) -> None:
    """Mark a resource CHECK_FAILED: the next update replaces it."""
    client, out = session(ctx, fmt)
    body: dict[str, Any] = {"mark_unhealthy": not reset}
    if reason:
        body["resource_status_reason"] = reason
    client.request("PATCH", f"{stack_path(client, stack)}/resources/{resource}", json=body)
    state = "cleared" if reset else "marked unhealthy"
    out.done(f"Resource {resource} of stack {stack} {state}.", {"resource": resource})


def _action(
    ctx: typer.Context, stack: str, body: dict[str, Any], fmt: FormatOpt
) -> tuple[WardenClient, Output, str]:
    client, out = session(ctx, fmt)
    path = stack_path(client, stack)
    client.post(f"{path}/actions", body)
    return client, out, path


@stack_app.command("lock")
def lock(
    ctx: typer.Context,
    stack: Stack,
    level: Annotated[LockLevel, typer.Option(help="stacks, or all (also locks servers).")] = (
        LockLevel.ALL
    ),
    reason: Annotated[str, typer.Option(help="Why (shown to whoever is refused).")] = "",
    owner: Annotated[str, typer.Option(help="Who holds the lock.")] = "",
    fmt: FormatOpt = None,
) -> None:
    """Maintenance mode: refuse updates, deletes, actions and scaling signals."""
    body = {"lock": {"level": level.value, "reason": reason, "owner": owner}}
    out = _action(ctx, stack, body, fmt)[1]
    out.done(f"Stack {stack} locked (level {level.value}).", {"locked": True})


@stack_app.command("unlock")
def unlock(ctx: typer.Context, stack: Stack, fmt: FormatOpt = None) -> None:
    """Leave maintenance mode."""
    out = _action(ctx, stack, {"unlock": None}, fmt)[1]
    out.done(f"Stack {stack} unlocked.", {"locked": False})


def _operation_command(name: str, help_text: str) -> None:
    """Register `warden stack <name>`: a stack action that `--wait` can follow."""

    def command(
        ctx: typer.Context,
        stack: Stack,
        wait: WaitOpt = False,
        timeout: TimeoutOpt = DEFAULT_TIMEOUT_S,
        fmt: FormatOpt = None,
    ) -> None:
        client, out, path = _action(ctx, stack, {name: None}, fmt)
        _follow(client, out, path, name.upper(), wait=wait, timeout=timeout)

    stack_app.command(name, help=help_text)(command)


for _name, _help in (
    ("check", "Check every resource against the cloud; failed ones become CHECK_FAILED."),
    ("suspend", "Suspend every server of the stack."),
    ("resume", "Resume a suspended stack."),
):
    _operation_command(_name, _help)


@stack_app.command("cancel-update")
def cancel_update(ctx: typer.Context, stack: Stack, fmt: FormatOpt = None) -> None:
    """Stop a running update (it then fails, or rolls back if rollback is on)."""
    out = _action(ctx, stack, {"cancel_update": None}, fmt)[1]
    out.done(f"cancel_update sent to stack {stack}.", {"cancelled": True})
