"""Profile schemas."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, Field, TypeAdapter, WithJsonSchema, computed_field

from api.schemas.common import Metadata, StrictModel
from domain.cluster.profiles import AnyProfileSpec
from store.profiles import ProfileRecord


def _inlined(schema: Any, defs: dict[str, Any]) -> Any:
    """`schema` with every `#/$defs/...` reference replaced by what it names."""
    if isinstance(schema, dict):
        ref = schema.get("$ref", "")
        if ref.startswith("#/$defs/"):
            return _inlined(defs[ref.removeprefix("#/$defs/")], defs)
        return {k: _inlined(v, defs) for k, v in schema.items() if k != "$defs"}
    if isinstance(schema, list):
        return [_inlined(v, defs) for v in schema]
    return schema


#: What Senlin's spec types take beside their own JSON type: a String a number, an
#: Integer its digits as text, a Boolean the words pydantic's lax mode reads.
_LAX: dict[str, list[dict[str, Any]]] = {
    "string": [{"type": "number"}],
    "integer": [{"type": "string", "pattern": r"^[+-]?\d+$"}],
    "boolean": [
        {"type": "string", "enum": ["true", "false", "yes", "no", "on", "off", "1", "0"]},
        {"type": "integer", "enum": [0, 1]},
    ],
}


def _lax(schema: Any) -> Any:
    """`schema` with each plain scalar type widened to what the spec parser coerces."""
    if isinstance(schema, list):
        return [_lax(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    widened = {k: _lax(v) for k, v in schema.items()}
    kind = widened.get("type")
    if isinstance(kind, str) and kind in _LAX and "enum" not in widened and "const" not in widened:
        own = {k: v for k, v in widened.items() if k not in ("title", "description", "default")}
        rest = {k: v for k, v in widened.items() if k in ("title", "description", "default")}
        return rest | {"anyOf": [own, *_LAX[kind]]}
    return widened


_SPEC_SCHEMA = TypeAdapter(AnyProfileSpec).json_schema()
#: The spec as the API documents it (clients and fuzzers generate specs from it): the
#: types Senlin's parser takes, coercions included. The route checks it with Senlin's
#: own rules and words (`parse_profile_spec`).
SpecDocument = Annotated[
    dict[str, Any],
    WithJsonSchema(_lax(_inlined(_SPEC_SCHEMA, _SPEC_SCHEMA.get("$defs", {})))),
]


class ProfileBody(StrictModel):
    """The inside of `{"profile": {...}}`; `spec` is checked by `domain.cluster.profiles`."""

    name: str = Field(min_length=1, max_length=255)
    spec: SpecDocument
    metadata: Metadata = Field(default_factory=dict)


class ProfileCreate(StrictModel):
    """`POST /v1/profiles`."""

    profile: ProfileBody


class ProfileValidateBody(StrictModel):
    """The inside of `POST /v1/profiles/validate` (Senlin 1.2): a spec, nothing stored."""

    spec: SpecDocument


class ProfileValidate(StrictModel):
    """`POST /v1/profiles/validate`."""

    profile: ProfileValidateBody


class ProfileUpdateBody(StrictModel):
    """The inside of `PATCH /v1/profiles/{id}`: Senlin changes a name and metadata, never
    a spec (a profile's spec is what its nodes were made from)."""

    name: str | None = Field(None, min_length=1, max_length=255)
    metadata: Metadata | None = None


class ProfileUpdate(StrictModel):
    """`PATCH /v1/profiles/{profile_id}`."""

    profile: ProfileUpdateBody


class ProfilePublic(BaseModel):
    """A profile as the API shows it."""

    #: Senlin's id; None for a profile only validated.
    id: str | None
    name: str
    #: Senlin's `<type>-<version>`, e.g. `os.nova.server-1.0`.
    type: str
    version: str
    spec: dict[str, Any]
    metadata: dict[str, Any]
    project_id: str
    created_at: datetime
    updated_at: datetime
    # Senlin's owner fields, as openstacksdk reads them (Warden keeps no user or domain).
    user: str | None = None
    domain: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def project(self) -> str:
        """Senlin's name for `project_id`."""
        return self.project_id

    @classmethod
    def of(cls, record: ProfileRecord) -> ProfilePublic:
        """From the database row."""
        return cls(
            id=record.id,
            name=record.name,
            type=f"{record.type}-{record.version}",
            version=record.version,
            spec=record.spec,
            metadata=record.metadata_,
            project_id=record.project_id,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )


class ProfileEnvelope(BaseModel):
    """`{"profile": {...}}`."""

    profile: ProfilePublic


class ProfileList(BaseModel):
    """`{"profiles": [...]}`."""

    profiles: list[ProfilePublic]
