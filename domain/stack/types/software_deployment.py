"""Heat's software deployments (`/software_deployments`): a config applied to a server,
with the status the in-guest agent reports back."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from domain.errors import InvalidRequest
from domain.hot.properties import ResourceType
from domain.stack.types.heat_schema import heat_type

#: Heat's deployment statuses.
IN_PROGRESS: Final = "IN_PROGRESS"
COMPLETE: Final = "COMPLETE"
FAILED: Final = "FAILED"


class SoftwareDeployment(BaseModel):
    """A stored deployment, as Heat's `format_software_deployment` shows it."""

    model_config = ConfigDict(frozen=True)

    id: str
    project_id: str
    config_id: str
    server_id: str
    input_values: dict[str, Any] | None = None
    output_values: dict[str, Any] | None = None
    action: str | None = None
    status: str | None = None
    status_reason: str | None = None
    stack_user_project_id: str | None = None
    #: The stack and resource a deployment resource made it for (not shown by the API):
    #: where the agent's signal goes.
    stack_id: str | None = None
    resource_name: str | None = None
    created_at: datetime
    updated_at: datetime | None = None


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def deployment_view(deployment: SoftwareDeployment) -> dict[str, Any]:
    """Heat's view of a deployment (`updated_time` once it was updated)."""
    view: dict[str, Any] = {
        "id": deployment.id,
        "server_id": deployment.server_id,
        "input_values": deployment.input_values,
        "output_values": deployment.output_values,
        "action": deployment.action,
        "status": deployment.status,
        "status_reason": deployment.status_reason,
        "config_id": deployment.config_id,
        "creation_time": _iso(deployment.created_at),
    }
    if deployment.updated_at is not None:
        view["updated_time"] = _iso(deployment.updated_at)
    return view


DEPLOYMENT: Final = "OS::Heat::SoftwareDeployment"
STRUCTURED_DEPLOYMENT: Final = "OS::Heat::StructuredDeployment"
DEPLOYMENT_GROUP: Final = "OS::Heat::SoftwareDeploymentGroup"
STRUCTURED_GROUP: Final = "OS::Heat::StructuredDeploymentGroup"
#: Heat's deprecated names of the groups, still mapped to them.
GROUP_ALIASES: Final = {
    "OS::Heat::SoftwareDeployments": DEPLOYMENT_GROUP,
    "OS::Heat::StructuredDeployments": STRUCTURED_GROUP,
}
#: One deployment each (the types a deployment's signal reaches).
SINGLE_TYPES: Final = (DEPLOYMENT, STRUCTURED_DEPLOYMENT)
#: A deployment per server of a map.
GROUP_TYPES: Final = (DEPLOYMENT_GROUP, STRUCTURED_GROUP, *GROUP_ALIASES)
#: The attributes every deployment has beside its config's outputs.
STANDARD_OUTPUTS: Final = ("deploy_stdout", "deploy_stderr", "deploy_status_code")


def _types() -> tuple[ResourceType, ...]:
    # A deployment's attributes are its config's outputs too: Heat checks their names
    # against the config when it reads one, so any name is taken here.
    single = tuple(
        heat_type(n, open_attributes=True, replaced_on_inputs=True) for n in SINGLE_TYPES
    )
    groups = tuple(heat_type(n) for n in (DEPLOYMENT_GROUP, STRUCTURED_GROUP))
    aliases = tuple(
        heat_type(target).model_copy(update={"name": alias})
        for alias, target in GROUP_ALIASES.items()
    )
    return (*single, *groups, *aliases)


TYPES: Final = _types()


class DeploymentStart(BaseModel):
    """A deployment resource's step (create, update, suspend, resume, delete): derive the
    config with this step's inputs, and make or update the deployment record. Both ids are
    drawn by the workflow, so a retry finds what its first attempt wrote."""

    model_config = ConfigDict(frozen=True)

    deployment_id: str
    derived_config_id: str
    project_id: str
    stack_id: str
    stack_path: str
    resource_name: str
    action: str
    properties: dict[str, Any]
    structured: bool = False
    signal_url: str | None = None


class DeploymentSignal(BaseModel):
    """What the agent sent back for a deployment (Heat's `signal_software_deployment`)."""

    model_config = ConfigDict(frozen=True)

    project_id: str
    deployment_id: str
    details: dict[str, Any] = Field(default_factory=dict)
    #: Only read the record again (its status was set through the deployments API).
    refresh: bool = False


def transport(props: Mapping[str, Any]) -> str:
    """The deployment's signal transport (Heat's default: CFN_SIGNAL)."""
    return str(props.get("signal_transport") or "CFN_SIGNAL")


def derived_inputs(
    source_inputs: list[dict[str, Any]], start: DeploymentStart
) -> list[dict[str, Any]]:
    """Heat's `_build_derived_inputs`: the config's inputs with this deployment's values,
    the undeclared values as inputs of their own, then the `deploy_*` inputs."""
    props = start.properties
    values = dict(props.get("input_values") or {})
    inputs = []
    for declared in source_inputs:
        value = values.pop(declared["name"], declared.get("default"))
        inputs.append({**declared, "value": value})
    inputs += [{"name": k, "type": "String", "value": v} for k, v in values.items()]
    extra = [
        ("deploy_server_id", props.get("server"), "ID of the server being deployed to"),
        ("deploy_action", start.action, "Name of the current action being deployed"),
        ("deploy_stack_id", start.stack_path, "ID of the stack this deployment belongs to"),
        (
            "deploy_resource_name",
            start.resource_name,
            "Name of this deployment resource in the stack",
        ),
        (
            "deploy_signal_transport",
            transport(props),
            "How the server should signal to heat with the deployment output values.",
        ),
    ]
    if start.signal_url is not None:
        extra += [
            (
                "deploy_signal_id",
                start.signal_url,
                "ID of signal to use for signaling output values",
            ),
            ("deploy_signal_verb", "POST", "HTTP verb to use for signaling output values"),
        ]
    inputs += [{"name": n, "description": d, "type": "String", "value": v} for n, v, d in extra]
    return inputs


def structured_config(config: Any, inputs: list[dict[str, Any]], props: Mapping[str, Any]) -> Any:
    """Heat's StructuredDeployment: each `{get_input: name}` in the config replaced by
    that input's value (`input_key` names the function; STRICT refuses a missing one)."""
    key = str(props.get("input_key") or "get_input")
    strict = props.get("input_values_validate") == "STRICT"
    values = {i["name"]: i.get("value") for i in inputs}

    def parse(snippet: Any) -> Any:
        if isinstance(snippet, Mapping):
            if len(snippet) == 1:
                name, arg = next(iter(snippet.items()))
                if name == key and isinstance(arg, str):
                    if strict and arg not in values:
                        raise InvalidRequest(f"The Parameter ({arg}) was not provided.")
                    return values.get(arg)
            return {k: parse(v) for k, v in snippet.items()}
        if isinstance(snippet, list):
            return [parse(v) for v in snippet]
        return snippet

    return parse(config)


def signalled(
    deployment: SoftwareDeployment, outputs: list[dict[str, Any]], details: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Heat's `signal_software_deployment`: the record's new status, reason and output
    values from the agent's signal (None: the deployment is not waiting for one)."""
    if deployment.status != IN_PROGRESS:
        return None
    values = dict(deployment.output_values or {})
    failed: dict[str, Any] = {}
    code = details.get("deploy_status_code")
    if code and str(code) != "0":
        failed["deploy_status_code"] = f"Deployment exited with non-zero status code: {code}"
    for output in outputs:
        key = output["name"]
        if key in details:
            values[key] = details[key]
            if output.get("error_output"):
                failed[key] = details[key]
    for key in STANDARD_OUTPUTS:
        values[key] = details.get(key)
    if failed:
        reason = ", ".join(f"{k} : {v}" for k, v in failed.items())
        return {"status": FAILED, "status_reason": reason, "output_values": values}
    return {"status": COMPLETE, "status_reason": "Outputs received", "output_values": values}


def deployment_attributes(deployment: SoftwareDeployment) -> dict[str, Any]:
    """The resource's attributes: its output values (the standard three at least)."""
    values = dict(deployment.output_values or {})
    return {
        **{k: values.get(k) for k in STANDARD_OUTPUTS},
        **values,
        "show": deployment_view(deployment),
    }


def group_template(rtype: str, props: Mapping[str, Any]) -> dict[str, Any]:
    """The nested stack of a deployment group: one deployment per entry of `servers`,
    named by its key, and outputs that map each name to its standard attributes."""
    member_type = (
        STRUCTURED_DEPLOYMENT if GROUP_ALIASES.get(rtype, rtype) == STRUCTURED_GROUP else DEPLOYMENT
    )
    shared = {k: v for k, v in props.items() if k != "servers" and v is not None}
    servers = dict(props.get("servers") or {})
    resources = {
        str(name): {"type": member_type, "properties": {**shared, "server": server}}
        for name, server in servers.items()
    }
    outputs = {
        f"{attribute}s": {
            "value": {str(name): {"get_attr": [str(name), attribute]} for name in servers}
        }
        for attribute in STANDARD_OUTPUTS
    }
    return {"heat_template_version": "2015-04-30", "resources": resources, "outputs": outputs}


def replacing_inputs(
    old_inputs: list[dict[str, Any]], new_inputs: list[dict[str, Any]]
) -> list[str]:
    """Heat's `handle_update` check: the inputs marked `replace_on_change` whose value
    changed since the last derived config (the deployment is then replaced)."""
    before = {i["name"]: i.get("value") for i in old_inputs}
    return [
        i["name"]
        for i in new_inputs
        if i.get("replace_on_change")
        and i["name"] in before
        and i.get("value") != before[i["name"]]
    ]
