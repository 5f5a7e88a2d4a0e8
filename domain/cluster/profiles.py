"""Profiles: what a node's server looks like (Senlin's `os.nova.server` 1.0 and 1.1).

The properties are Senlin's (`senlin/profiles/os/nova/server.py`, `properties_schema`),
coerced as Senlin's `senlin/common/schema.py` coerces them: a String takes a number
(`flavor: 1`), an Integer a numeric string, a Boolean `"yes"` or `"false"`, a Map any
values. Senlin's 1.1 added a network's `subnet`, but one schema serves every version, so
both versions accept every property, as in Senlin.

`parse_profile_spec()` is the one entry point for user input: it raises InvalidRequest
naming the offending path in Senlin's words
(`spec.properties.bogus: Unrecognizable spec item 'bogus'`). The helpers at the end turn
a stored spec's Map and List properties into what `domain.servers.ServerRequest` takes.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Final, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    field_validator,
    model_validator,
)

from domain.cluster.stack_profile import STACK_PROFILE_TYPE, STACK_VERSIONS, StackProfileSpec
from domain.errors import InvalidRequest, NotFound
from domain.servers import NetworkRequest

PROFILE_TYPE: Final = "os.nova.server"
#: Senlin's `ServerProfile.VERSIONS` that Warden accepts, with the release each came in.
VERSIONS: Final = {"1.0": "2016.04", "1.1": "2023.04"}
#: Nova's limits: metadata values and injected files (its default quotas), user data.
NOVA_TEXT_MAX: Final = 255
INJECTED_FILES_MAX: Final = 5
INJECTED_FILE_BYTES_MAX: Final = 10_240
USER_DATA_BYTES_MAX: Final = 65_535
#: What Senlin's `context` may set: the arguments of its `RequestContext`.
CONTEXT_KEYS: Final = frozenset({
    "auth_token", "user_id", "project_id", "domain_id", "user_domain_id",
    "project_domain_id", "is_admin", "read_only", "show_deleted", "request_id", "auth_url",
    "trusts", "user_name", "project_name", "domain_name", "user_domain_name",
    "project_domain_name", "auth_token_info", "region_name", "roles", "password",
    "api_version",
})  # fmt: skip
VNIC_TYPES: Final = ("normal", "direct", "macvtap")


def _number_as_text(value: Any) -> Any:
    """Senlin's String takes numbers: YAML reads `flavor: 1` or `version: 1.0` as one."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


def _not_a_flag(value: Any) -> Any:
    """An Integer is not `true`/`false` (Python would count them as 1 and 0)."""
    if isinstance(value, bool):
        raise ValueError(f"The value '{value}' is not a valid Integer")  # noqa: TRY004 - pydantic reports ValueError only
    return value


def metadata_text(value: JsonValue) -> str:
    """A metadata value as Nova takes it: a string as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def _fits_nova(value: JsonValue) -> JsonValue:
    if len(metadata_text(value)) > NOVA_TEXT_MAX:
        raise ValueError(f"at most {NOVA_TEXT_MAX} characters as Nova gets it")
    return value


def _supported_vnic(value: Any) -> Any:
    if value not in VNIC_TYPES:
        raise ValueError(
            f"vnic_type: '{value}' is not supported.(supported types are: {', '.join(VNIC_TYPES)})"
        )
    return value


#: Senlin's String: a name, an id, an address (numbers become text).
Text = Annotated[str, BeforeValidator(_number_as_text), Field(max_length=NOVA_TEXT_MAX)]
#: A name or id the compute activity looks up: never empty.
Ref = Annotated[
    str, BeforeValidator(_number_as_text), Field(min_length=1, max_length=NOVA_TEXT_MAX)
]
#: Nova's rule for server metadata (`parameter_types.metadata`): a profile that broke it
#: would be accepted, then fail every node create of its clusters.
MetadataKey = Annotated[
    str, Field(min_length=1, max_length=NOVA_TEXT_MAX, pattern=r"^[A-Za-z0-9_.: -]+$")
]
MetadataValue = Annotated[JsonValue, AfterValidator(_fits_nova)]
HintKey = Annotated[str, Field(min_length=1, max_length=NOVA_TEXT_MAX)]
#: Senlin's Integer: a number or its digits as text, never a boolean.
Whole = Annotated[int, BeforeValidator(_not_a_flag)]
VnicType = Annotated[Literal["normal", "direct", "macvtap"], BeforeValidator(_supported_vnic)]


class SpecPart(BaseModel):
    """A part of a profile spec: frozen, unknown keys refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class BlockDevice(SpecPart):
    """A map specifying the properties of a block device to be used by the server."""

    uuid: Text | None = Field(None, description="ID of the source image, snapshot or volume")
    source_type: Literal["image", "snapshot", "volume", "blank"] = Field(
        description="Volume source type, must be one of 'image', 'snapshot', 'volume' or 'blank'"
    )
    destination_type: Literal["volume", "local"] = Field(
        description="Volume destination type, must be 'volume' or 'local'"
    )
    disk_bus: Text | None = Field(None, description="Bus of the device.")
    device_name: Text | None = Field(None, description="Name of the device(e.g. vda, xda, ....).")
    volume_size: Whole = Field(
        ge=0,
        le=2**31 - 1,
        description="Size of the block device in MB(for swap) and in GB(for other formats)",
    )
    guest_format: Text | None = Field(
        None, description="Specifies the disk file system format(e.g. swap, ephemeral, ...)."
    )
    boot_index: Whole | None = Field(
        None, ge=-1, le=1024, description="Define the boot order of the device"
    )
    device_type: Text | None = Field(None, description="Type of the device(e.g. disk, cdrom, ...).")
    delete_on_termination: bool | None = Field(
        None, description="Whether to delete the volume when the server stops."
    )
    volume_type: Text | None = Field(None, description="Id or name of volume type.")


class Network(SpecPart):
    """A map specifying the properties of a network for uses."""

    network: Ref | None = Field(None, description="Name or ID of network to create a port on.")
    port: Ref | None = Field(None, description="Port ID to be used by the network.")
    vnic_type: VnicType | None = Field(None, description="Define vnic_type to be used by port")
    fixed_ip: Text | None = Field(None, description="Fixed IP to be used by the network.")
    security_groups: list[Ref] | None = Field(
        None,
        max_length=32,
        description="A list of security groups to be attached to this port.",
    )
    floating_network: Ref | None = Field(
        None, description="The network on which to create a floating IP"
    )
    floating_ip: Text | None = Field(
        None, description="The floating IP address to be associated with this port."
    )
    subnet: Ref | None = Field(
        None, description="Subnet in which to allocate the IP address for this port."
    )

    @model_validator(mode="after")
    def _usable(self) -> Self:
        # Senlin's `_validate_network`, run when a profile is created (its `do_validate`).
        if self.port is None and self.network is None:
            raise ValueError("One of 'port' and 'network' must be provided")
        if self.fixed_ip and self.port is not None:
            raise ValueError(
                "The 'port' property and the 'fixed_ip' property cannot be specified "
                "at the same time"
            )
        if self.floating_ip and not self.floating_network:
            raise ValueError("Must specify a network to create floating IP")
        return self


class InjectedFile(SpecPart):
    """A map specifying the path & contents for an injected file."""

    path: Ref = Field(description="In-instance path for the file to be injected.")
    contents: str = Field(
        max_length=INJECTED_FILE_BYTES_MAX, description="Contents of the file to be injected."
    )


class ServerProperties(SpecPart):
    """Properties of an `os.nova.server` profile: Senlin's whole set."""

    context: dict[str, JsonValue] = Field(
        default_factory=dict,
        max_length=len(CONTEXT_KEYS),
        description="Customized security context for operating servers. "
        "Warden checks its keys and boots with its own credentials.",
    )
    admin_pass: Text | None = Field(None, description="Password for the administrator account.")
    auto_disk_config: bool = Field(
        True,
        description="Whether the disk partition is done automatically. "
        "Warden leaves it to Nova's default.",
    )
    availability_zone: Text | None = Field(
        None, description="Name of availability zone for running the server."
    )
    block_device_mapping_v2: list[BlockDevice] | None = Field(
        None,
        max_length=32,
        description="A list specifying the properties of block devices to be used for this server.",
    )
    config_drive: bool | None = Field(
        None, description="Whether config drive should be enabled for the server."
    )
    flavor: Ref = Field(description="ID of flavor used for the server.")
    image: Ref | None = Field(None, description="ID of image to be used for the new server.")
    key_name: Ref | None = Field(None, description="Name of Nova keypair to be injected to server.")
    metadata: dict[MetadataKey, MetadataValue] = Field(
        default_factory=dict,
        max_length=64,
        description="A collection of key/value pairs to be associated with the server "
        "created. Both key and value must be <=255 chars.",
    )
    name: Text | None = Field(
        None,
        description="Name of the server. Warden names every server after its node, so "
        "that `{nodename}` URLs find it.",
    )
    networks: list[Network] | None = Field(
        None, max_length=32, description="List of networks for the server."
    )
    personality: list[InjectedFile] | None = Field(
        None,
        max_length=INJECTED_FILES_MAX,
        description="List of files to be injected into the server. "
        "Warden does not pass them (Nova dropped file injection in microversion 2.57).",
    )
    scheduler_hints: dict[HintKey, JsonValue] = Field(
        default_factory=dict,
        max_length=32,
        description="A collection of key/value pairs to be associated with the Scheduler "
        "hints. Both key and value must be <=255 chars.",
    )
    security_groups: list[Ref] | None = Field(
        None, max_length=32, description="List of security groups."
    )
    user_data: str | None = Field(
        None,
        max_length=USER_DATA_BYTES_MAX,
        description="User data to be exposed by the metadata server.",
    )

    @field_validator("context")
    @classmethod
    def _context_keys(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        bad = [key for key in value if key not in CONTEXT_KEYS]
        if bad:
            raise ValueError(f"Some keys in 'context' are invalid: {bad}")
        return value

    @field_validator("user_data")
    @classmethod
    def _user_data_fits(cls, value: str | None) -> str | None:
        # Nova counts the base64 text it is sent, not the user's.
        if value is not None and len(base64.b64encode(value.encode())) > USER_DATA_BYTES_MAX:
            raise ValueError(f"at most {USER_DATA_BYTES_MAX} bytes once base64-encoded")
        return value


class ProfileSpec(SpecPart):
    """A profile spec as users write it: no `description` (Senlin's spec has none)."""

    type: Literal["os.nova.server"]
    version: Literal["1.0", "1.1"]
    properties: ServerProperties

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: Any) -> Any:
        return _number_as_text(value)

    def to_json(self) -> dict[str, Any]:
        """The spec as stored, shown and sent to workflows: what the user wrote, with the
        version and the String properties as text."""
        return self.model_dump(mode="json", exclude_unset=True)


#: A profile spec of any type Warden runs.
AnyProfileSpec = ProfileSpec | StackProfileSpec


def parse_profile_spec(spec: Any, *, prefix: str = "spec") -> AnyProfileSpec:
    """Validate a user's profile spec; InvalidRequest names the offending path.

    Args:
        spec: `{"type": "os.nova.server", "version": "1.0", "properties": {...}}`, or an
            `os.heat.stack` 1.0 spec (`domain.cluster.stack_profile`).
        prefix: where the spec sits in the request, for messages (`profile.spec`).
    """
    if not isinstance(spec, Mapping):
        raise InvalidRequest(f"{prefix}: The provided spec is not a map.")
    for key in ("type", "version"):
        if key not in spec:
            raise InvalidRequest(
                f"{prefix}.{key}: The '{key}' key is missing from the provided spec map."
            )
    # Senlin finds the plugin by `<type>-<str(version)>`; `version: 1.0` (YAML) finds 1.0.
    type_name, version = spec["type"], str(spec["version"])
    model: type[ProfileSpec] | type[StackProfileSpec]
    if type_name == PROFILE_TYPE and version in VERSIONS:
        model = ProfileSpec
    elif type_name == STACK_PROFILE_TYPE and version in STACK_VERSIONS:
        model = StackProfileSpec
    else:
        # Senlin's 404: no plugin of that type and version.
        raise NotFound(f"The profile_type '{type_name}-{version}' could not be found.")
    try:
        return model.model_validate(dict(spec))
    except ValidationError as exc:
        raise InvalidRequest(describe_spec_errors(exc, prefix)) from None


def describe_spec_errors(exc: ValidationError, prefix: str) -> str:
    """One message naming every offending path below `prefix`, in Senlin's words."""
    parts = []
    for err in exc.errors():
        loc = [part for part in err["loc"] if part != "[key]"]
        if err["type"] == "extra_forbidden" and len(loc) == 2 and loc[0] == "properties":
            # Senlin's own words, which name the item already (its suite checks them).
            parts.append(_senlin_words(err))
            continue
        parts.append(f"{_format_path(prefix, loc)}: {_senlin_words(err)}")
    return "; ".join(parts)


#: Senlin's message for each kind of value its schema refuses, by pydantic's error type.
_WRONG_TYPE: Final = {
    "string_type": "The value '{}' is not a valid string.",
    "int_type": "The value '{}' is not a valid Integer",
    "int_parsing": "The value '{}' is not a valid Integer",
    "int_from_float": "The value '{}' is not a valid Integer",
    "bool_type": "The value '{}' is not a valid Boolean",
    "bool_parsing": "The value '{}' is not a valid Boolean",
    "dict_type": "'{}' is not a Map",
    "model_type": "'{}' is not a Map",
    "model_attributes_type": "'{}' is not a Map",
    "list_type": "'{}' is not a List",
}


def _senlin_words(err: Mapping[str, Any]) -> str:
    kind, loc = err["type"], err["loc"]
    if kind == "extra_forbidden":
        return f"Unrecognizable spec item '{loc[-1]}'"
    if kind == "missing":
        return f"Required spec item '{loc[-1]}' not provided"
    if kind in _WRONG_TYPE:
        return str(_WRONG_TYPE[kind]).format(err.get("input"))
    cause = (err.get("ctx") or {}).get("error")
    message = str(cause) if isinstance(cause, ValueError) else str(err["msg"])
    return f"invalid key: {message}" if loc and loc[-1] == "[key]" else message


def _format_path(prefix: str, loc: Sequence[str | int]) -> str:
    text = prefix
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def nova_metadata(metadata: Mapping[str, JsonValue] | None) -> dict[str, str]:
    """A profile's metadata as Nova takes it (strings only)."""
    return {str(key): metadata_text(value) for key, value in (metadata or {}).items()}


def network_requests(
    networks: Sequence[Mapping[str, Any]] | None,
) -> tuple[NetworkRequest, ...] | None:
    """A profile's `networks` as NICs; none given leaves the choice to Nova ("auto")."""
    if not networks:
        return None
    return tuple(_nic(net) for net in networks)


def _nic(net: Mapping[str, Any]) -> NetworkRequest:
    return NetworkRequest(
        network=net.get("network"),
        port=net.get("port"),
        fixed_ip=net.get("fixed_ip"),
        subnet=net.get("subnet"),
        floating_ip=net.get("floating_ip"),
        floating_network=net.get("floating_network"),
        security_groups=tuple(str(g) for g in net.get("security_groups") or ()),
        vnic_type=net.get("vnic_type"),
    )


def block_devices(mappings: Sequence[Mapping[str, Any]] | None) -> tuple[dict[str, Any], ...]:
    """A profile's `block_device_mapping_v2`, Nova's keys already; unset keys dropped, as
    Senlin's `_resolve_bdm` drops them."""
    return tuple(
        {key: value for key, value in mapping.items() if value is not None}
        for mapping in mappings or ()
    )
