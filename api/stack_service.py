"""Commands on stack entity workflows (routes stay thin by calling these)."""

from __future__ import annotations

import uuid
from typing import Any, TypeVar

from temporalio.client import WithStartWorkflowOperation
from temporalio.common import WorkflowIDConflictPolicy

from api.auth import Caller
from api.deps import Database
from api.remote_stacks import RemoteHeat
from api.schemas.stacks import HeatInputs, StackCreate
from api.temporal import TemporalGateway
from domain.errors import Conflict, InvalidRequest, NotFound
from domain.hot.cloud_lookups import ConstraintCheck, template_lookups
from domain.hot.environment import (
    environment_breakpoints,
    expand_template,
    merge_environments,
    parse_environment,
    stack_parameters,
    template_data,
)
from domain.hot.template import conditioned, load_template, resolve_parameters
from domain.stack.event_sinks import parse_event_sinks
from domain.stack.requests import StackAccepted, StackOperationRequest
from domain.stack.rules import ensure_supported, template_object
from domain.stack.state import StackSpec, StackState
from store.stacks import StackRecord, find_stacks_named, get_stack
from workflows import ids
from workflows.operation import ActionRequest, Operation
from workflows.search_attributes import warden_attributes
from workflows.stack.messages import STACK_WORKFLOW, StackInput, StackOperations

RequestT = TypeVar("RequestT", bound=ActionRequest)


def new_action_id() -> str:
    """A fresh action id (also the update id, so client retries dedup)."""
    return str(uuid.uuid4())


def validated_template(
    template: dict[str, Any] | str, parameters: dict[str, Any]
) -> dict[str, Any]:
    """The template as an object, after every check that needs no state (400 otherwise)."""
    loaded = load_template(template)
    ensure_supported(loaded)
    conditioned(loaded, resolve_parameters(loaded, parameters))
    return template_object(template)


def heat_environment(inputs: HeatInputs) -> dict[str, Any]:
    """The request's environment files (in order) and `environment`, merged (400 if bad)."""
    inputs.refuse_unsupported()
    envs = []
    for name in inputs.environment_files or ():
        if name not in inputs.files:
            raise InvalidRequest(f'environment_files: "{name}" is not in "files"')
        envs.append(parse_environment(inputs.files[name]))
    envs.append(parse_environment(inputs.environment))
    return merge_environments(envs)


def prepared_template(
    raw: dict[str, Any] | str, inputs: HeatInputs, env: dict[str, Any], given: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """`(template, parameters)` with files and environment applied, fully checked (400)."""
    template = expand_template(template_data(raw), inputs.files, env)
    declared = template.get("parameters") if isinstance(template.get("parameters"), dict) else {}
    parameters = stack_parameters(declared or {}, env, given)
    return validated_template(template, parameters), parameters


def constraint_checks(
    template: dict[str, Any], parameters: dict[str, Any], pseudo: dict[str, Any]
) -> list[ConstraintCheck]:
    """The named cloud objects (flavors, images, networks…) a checked template needs."""
    loaded = load_template(template)
    return template_lookups(loaded, resolve_parameters(loaded, parameters, pseudo=pseudo))


def stack_pseudo(project_id: str, name: str, stack_id: str) -> dict[str, Any]:
    """The pseudo parameters of a stack (`OS::stack_name`…)."""
    return {"OS::stack_name": name, "OS::stack_id": stack_id, "OS::project_id": project_id}


async def ensure_cloud_has(temporal: TemporalGateway, checks: list[ConstraintCheck]) -> None:
    """A 400 naming the first flavor, image, key pair… the cloud does not have."""
    problem = await temporal.cloud_problem(checks)
    if problem is not None:
        raise InvalidRequest(problem)


async def ensure_update_cloud_has(
    temporal: TemporalGateway, record: StackRecord, template: dict[str, Any], params: dict[str, Any]
) -> None:
    """`ensure_cloud_has` for the values an update changes: a field that keeps its
    value is not looked up again (Heat would, and refuse an update of a stack whose
    image has since been deleted, though nothing is to boot from it)."""
    pseudo = stack_pseudo(record.project_id, record.name, record.id)
    checks = constraint_checks(template, params, pseudo)
    try:
        kept = {
            (c.field, c.value)
            for c in constraint_checks(record.template, record.parameters, pseudo)
        }
    except InvalidRequest:
        kept = set()  # the current values read otherwise now: check every field
    await ensure_cloud_has(temporal, [c for c in checks if (c.field, c.value) not in kept])


def patched_template(
    raw: dict[str, Any] | str, inputs: HeatInputs, env: dict[str, Any]
) -> dict[str, Any]:
    """A PATCH's new template with files and environment applied, its structure checked.

    Its parameters are checked against the stack's current values by the stack's
    workflow: hidden values live there only (the database holds them masked).
    """
    template = expand_template(template_data(raw), inputs.files, env)
    ensure_supported(load_template(template))
    return template_object(template)


async def create_stack(
    db: Database,
    temporal: TemporalGateway,
    caller: Caller,
    body: StackCreate,
    remote_heat: RemoteHeat,
) -> tuple[str, StackAccepted]:
    """Start the stack's entity workflow with its `create` update."""
    if body.template is None:
        raise InvalidRequest("Need more arguments: a template is required")
    env = heat_environment(body)
    template, parameters = prepared_template(body.template, body, env, body.parameters)
    taken: list[StackRecord] = await db.run(find_stacks_named, caller.project_id, body.stack_name)
    if any(s.parent_id is None for s in taken):
        raise Conflict(f"The Stack ({body.stack_name}) already exists.")
    stack_id, action_id = str(uuid.uuid4()), new_action_id()
    pseudo = stack_pseudo(caller.project_id, body.stack_name, stack_id)
    await ensure_cloud_has(temporal, constraint_checks(template, parameters, pseudo))
    await remote_heat.check(caller, template, parameters)
    spec = StackSpec(stack_id=stack_id, project_id=caller.project_id, name=body.stack_name)
    client = await temporal.client()
    start: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
        STACK_WORKFLOW,
        StackInput(
            state=StackState(
                spec=spec,
                timeout_mins=body.timeout_mins,
                disable_rollback=body.disable_rollback,
                tags=body.tag_list(),
            )
        ),
        id=ids.stack(stack_id),
        result_type=StackState,
        task_queue=temporal.settings.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        search_attributes=warden_attributes(caller.project_id, "stack", stack_id, "INIT_COMPLETE"),
        static_summary=f"stack {body.stack_name}",
        static_details=f"Stack `{stack_id}` of project `{caller.project_id}`, "
        f"{len(template.get('resources') or {})} resource(s)",
    )
    accepted = await temporal.call(
        client.execute_update_with_start_workflow(
            StackOperations.create.name,
            StackOperationRequest(
                action_id=action_id,
                template=template,
                parameters=parameters,
                hooks=environment_breakpoints(env),
                event_sinks=parse_event_sinks(env.get("event_sinks")),
            ),
            start_workflow_operation=start,
            id=action_id,
            result_type=StackOperations.create.answer,
            rpc_timeout=temporal.rpc_timeout,
        ),
        subject=f"Stack {body.stack_name}",
    )
    return stack_id, accepted


async def find_stack(db: Database, caller: Caller, stack_name: str, stack_id: str) -> StackRecord:
    """The caller's stack named by both name and id (404 otherwise)."""
    record: StackRecord | None = await db.run(get_stack, caller.project_id, stack_id)
    if record is None or stack_name not in (record.name, record.id):
        raise NotFound(f"The Stack ({stack_name}) could not be found.")
    return record


async def find_stack_by_identity(db: Database, caller: Caller, identity: str) -> StackRecord:
    """A stack by id, or by a top-level name (for the redirect)."""
    record: StackRecord | None = await db.run(get_stack, caller.project_id, identity)
    if record is not None:
        return record
    named: list[StackRecord] = await db.run(find_stacks_named, caller.project_id, identity)
    top = [s for s in named if s.parent_id is None] or named
    if not top:
        raise NotFound(f"The Stack ({identity}) could not be found.")
    return top[0]


async def send_stack_update(
    temporal: TemporalGateway,
    record: StackRecord,
    operation: Operation[StackState, RequestT, StackAccepted],
    request: RequestT,
) -> StackAccepted:
    """Send one of `StackOperations` to the stack's workflow; rejections become 409/400/404."""
    return await temporal.update(
        ids.stack(record.id), operation, request, subject=f"Stack {record.name}"
    )
