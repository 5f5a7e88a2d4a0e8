"""Heat's software configs: `OS::Heat::SoftwareConfig`, `CloudConfig`, `MultipartMime` and
`StructuredConfig`, and the config store's rules (`/software_configs`).

A config is immutable: Heat stores it once and a changed resource is a new config
(every property replaces). Its reference (`get_resource`) is the config's id, which
`OS::Nova::Server` `user_data` (formats RAW and SOFTWARE_CONFIG), a MultipartMime part
and a SoftwareDeployment take in place of the config itself.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from email.message import Message
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.parser import Parser
from typing import Any, Final

import yaml
from pydantic import BaseModel, ConfigDict, Field

from domain.errors import InvalidRequest
from domain.hot.properties import parse_bool
from domain.stack.types.heat_schema import heat_type

SOFTWARE_CONFIG: Final = "OS::Heat::SoftwareConfig"
CLOUD_CONFIG: Final = "OS::Heat::CloudConfig"
MULTIPART_MIME: Final = "OS::Heat::MultipartMime"
STRUCTURED_CONFIG: Final = "OS::Heat::StructuredConfig"
#: Every config type: their handler is one.
CONFIG_TYPES: Final = (SOFTWARE_CONFIG, CLOUD_CONFIG, MULTIPART_MIME, STRUCTURED_CONFIG)
TYPES: Final = tuple(heat_type(name) for name in CONFIG_TYPES)

#: Heat's default group: the config is not meant for a particular tool.
UNGROUPED: Final = "Heat::Ungrouped"
#: The types of a config's inputs and outputs (Heat's `software_config_io.TYPES`).
IO_TYPES: Final = ("String", "Number", "CommaDelimitedList", "Json", "Boolean")
_UUID: Final = re.compile(
    r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.IGNORECASE
)


class SoftwareConfig(BaseModel):
    """A stored config, as Heat's `format_software_config` shows it."""

    model_config = ConfigDict(frozen=True)

    id: str
    project_id: str
    name: str | None = None
    group: str | None = None
    config: Any = None
    inputs: list[dict[str, Any]] = Field(default_factory=list)
    outputs: list[dict[str, Any]] = Field(default_factory=list)
    options: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime | None = None


class ConfigRequest(BaseModel):
    """A config resource's create: the id is drawn by the workflow, so a retried
    create finds the config its first attempt stored."""

    model_config = ConfigDict(frozen=True)

    id: str
    project_id: str
    name: str
    type: str
    properties: dict[str, Any]


class ConfigRef(BaseModel):
    """A config of a project."""

    model_config = ConfigDict(frozen=True)

    project_id: str
    id: str


def is_uuid_like(value: object) -> bool:
    """Heat's `uuidutils.is_uuid_like`: a string that reads as a UUID (with or without
    dashes)."""
    return isinstance(value, str) and bool(_UUID.match(value))


def checked_io(entries: object, *, inputs: bool) -> list[dict[str, Any]]:
    """A config's `inputs` or `outputs` as Heat stores them (`InputConfig.as_dict`,
    `OutputConfig.as_dict`): defaults filled in, bad entries a 400 in Heat's words."""
    if entries is None:
        return []
    if not isinstance(entries, Sequence) or isinstance(entries, str | bytes):
        raise InvalidRequest("Software Config I/O Schema must be in a list")
    if not all(isinstance(entry, Mapping) for entry in entries):
        raise InvalidRequest("Software Config I/O Schema must be a dict")
    return [_io_entry(dict(entry), inputs=inputs) for entry in entries]


def _io_entry(entry: dict[str, Any], *, inputs: bool) -> dict[str, Any]:
    known = {"name", "description", "type", "default", "replace_on_change", "value"}
    if not inputs:
        known = {"name", "description", "type", "error_output"}
    for key in entry:
        if key not in known:
            raise InvalidRequest(f"Unknown Property {key}")
    name = entry.get("name")
    if name is None:
        raise InvalidRequest("Property name not assigned")
    if not isinstance(name, str):
        raise InvalidRequest(f"Property error: name: Value '{name}' is not a string")
    kind = entry.get("type", "String")
    if kind not in IO_TYPES:
        allowed = ", ".join(f'"{t}"' for t in IO_TYPES)
        raise InvalidRequest(f'Property error: type: "{kind}" is not an allowed value [{allowed}]')
    out: dict[str, Any] = {"name": name, "type": kind}
    if entry.get("description") is not None:
        out["description"] = str(entry["description"])
    if inputs:
        if entry.get("default") is not None:
            out["default"] = entry["default"]
        if _flag(entry, "replace_on_change"):
            out["replace_on_change"] = True
        if "value" in entry:
            out["value"] = entry["value"]
    else:
        out["error_output"] = _flag(entry, "error_output")
    return out


def _flag(entry: Mapping[str, Any], key: str) -> bool:
    """A boolean of an I/O entry, as Heat's Boolean property reads it."""
    value = entry.get(key, False)
    parsed = parse_bool(value)
    if parsed is None:
        raise InvalidRequest(f'Property error: {key}: "{value}" is not a valid boolean')
    return parsed


def config_body(
    rtype: str, props: Mapping[str, Any], boundary_seed: str, show: Callable[[str], Any]
) -> dict[str, Any]:
    """What a config resource stores: `group`, `config`, `inputs`, `outputs`, `options`.

    `show(id)` reads a stored config's `config` (None when there is none): a
    MultipartMime part may name one. `boundary_seed` makes a MIME message's boundary,
    so the same resource always writes the same text.
    """
    if rtype == CLOUD_CONFIG:
        return {"group": UNGROUPED, "config": cloud_config_text(props.get("cloud_config") or {})}
    if rtype == MULTIPART_MIME:
        text = multipart_text(props.get("parts") or [], boundary_seed, show)
        return {"group": props.get("group") or UNGROUPED, "config": text}
    return {
        "group": props.get("group") or UNGROUPED,
        "config": props.get("config"),
        "inputs": checked_io(props.get("inputs"), inputs=True),
        "outputs": checked_io(props.get("outputs"), inputs=False),
        "options": dict(props.get("options") or {}),
    }


def cloud_config_text(cloud_config: Mapping[str, Any]) -> str:
    """Heat's CloudConfig: `#cloud-config` and the map as YAML."""
    return "#cloud-config\n" + yaml.dump(dict(cloud_config), Dumper=yaml.SafeDumper)


def multipart_text(
    parts: Sequence[Mapping[str, Any]], seed: str, show: Callable[[str], Any]
) -> str:
    """Heat's MultipartMime message: each part inline or the config it names by id; a
    `multipart` part's own parts are appended one by one."""
    subparts: list[MIMEText] = []
    for item in parts:
        part = item.get("config")
        if is_uuid_like(part):
            stored = show(str(part))
            if stored is not None:
                part = stored
        text = part if isinstance(part, str) else str(part)
        if item.get("type", "text") == "multipart":
            _append_multiparts(subparts, text)
        else:
            _append_part(subparts, text, item.get("subtype") or "", item.get("filename") or "")
    message = MIMEMultipart(_subparts=subparts, boundary=_boundary(seed))
    return message.as_string()


def _boundary(seed: str) -> str:
    """A boundary shaped as the email package draws them, but fixed by `seed`."""
    number = uuid.uuid5(uuid.NAMESPACE_URL, seed).int % 10**19
    return f"{'=' * 15}{number:019d}=="


def _append_multiparts(subparts: list[MIMEText], text: str) -> None:
    message = Parser().parsestr(text)
    if not message.is_multipart():
        return
    for part in message.get_payload():
        if isinstance(part, Message):
            payload = part.get_payload()
            text = payload if isinstance(payload, str) else str(payload)
            _append_part(subparts, text, part.get_content_subtype(), part.get_filename() or "")


def _append_part(subparts: list[MIMEText], part: str, subtype: str, filename: str) -> None:
    if not subtype and filename:
        subtype = os.path.splitext(filename)[0]  # Heat's rule, odd as it is
    try:
        part.encode("us-ascii")
        charset = "us-ascii"
    except UnicodeEncodeError:
        charset = "utf-8"
    message = (
        MIMEText(part, _subtype=subtype, _charset=charset)
        if subtype
        else MIMEText(part, _charset=charset)
    )
    if filename:
        message.add_header("Content-Disposition", "attachment", filename=filename)
    subparts.append(message)


def config_view(config: SoftwareConfig, *, detail: bool = True) -> dict[str, Any]:
    """Heat's `format_software_config`: the list shows no config, inputs or outputs."""
    view: dict[str, Any] = {
        "id": config.id,
        "name": config.name,
        "group": config.group,
        "creation_time": config.created_at.strftime("%Y-%m-%dT%H:%M:%SZ")
        if config.created_at
        else None,
    }
    if detail:
        view |= {
            "config": config.config,
            "inputs": config.inputs,
            "outputs": config.outputs,
            "options": config.options,
        }
    return view
