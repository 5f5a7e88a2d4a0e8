"""Cinder v3.0 request bodies, with Cinder's JSON-schema constraints."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

#: The strings Cinder's `boolean` parameter type accepts, by meaning.
TRUE_WORDS = ("True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes", "y", "t")
FALSE_WORDS = ("False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No", "no", "n", "f")
MAX_INT = 2_147_483_647


def _uuid_like(value: str) -> str:
    try:
        uuid.UUID(value)
    except ValueError as exc:
        raise ValueError(f"'{value}' is not a 'uuid'") from exc
    return value


def _no_outer_space(value: str | None) -> str | None:
    # Cinder strips names and descriptions, then bounds their length.
    if value is not None and len(value.strip()) > 255:
        raise ValueError("String should have at most 255 characters")
    return value.strip() if value is not None else None


def to_bool(value: bool | str) -> bool:
    """A validated Cinder boolean as a bool."""
    return value if isinstance(value, bool) else value in TRUE_WORDS


Uuid = Annotated[StrictStr, AfterValidator(_uuid_like)]
Text = Annotated[StrictStr | None, AfterValidator(_no_outer_space)]
Boolean = (
    StrictBool
    | Literal["True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes", "y", "t"]
    | Literal["False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No", "no", "n", "f"]
)
Size = (
    Annotated[StrictInt, Field(ge=1, le=MAX_INT)] | Annotated[StrictStr, Field(pattern=r"^[0-9]+$")]
)
MetaKey = Annotated[StrictStr, Field(pattern=r"^[a-zA-Z0-9-_:. /]{1,255}$")]
Metadata = dict[MetaKey, Annotated[StrictStr, Field(max_length=255)]]


class VolumeCreate(BaseModel):
    """The `volume` of `POST /volumes`.

    Cinder before 3.53 accepts (and ignores) keys it does not know inside `volume`.
    """

    model_config = ConfigDict(extra="ignore")

    name: Text = None
    description: Text = None
    display_name: Text = None
    display_description: Text = None
    volume_type: Annotated[StrictStr, Field(max_length=255)] | None = None
    metadata: Metadata | None = None
    snapshot_id: Uuid | None = None
    source_volid: Uuid | None = None
    consistencygroup_id: Uuid | None = None
    size: Size | None = None
    availability_zone: Annotated[StrictStr, Field(min_length=1, max_length=255)] | None = None
    multiattach: Boolean | None = None
    image_id: Annotated[StrictStr, Field(max_length=255)] | None = None
    imageRef: Annotated[StrictStr, Field(max_length=255)] | None = None  # noqa: N815


class VolumeCreateBody(BaseModel):
    """`POST /volumes` body."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    volume: VolumeCreate
    scheduler_hints: dict[str, Any] | None = Field(None, alias="OS-SCH-HNT:scheduler_hints")


class VolumeUpdate(BaseModel):
    """The `volume` of `PUT /volumes/{volume_id}`."""

    model_config = ConfigDict(extra="forbid")

    name: Text = None
    description: Text = None
    display_name: Text = None
    display_description: Text = None
    metadata: Metadata | None = None


class VolumeUpdateBody(BaseModel):
    """`PUT /volumes/{volume_id}` body."""

    model_config = ConfigDict(extra="forbid")

    volume: VolumeUpdate


class Extend(BaseModel):
    """`os-extend` action arguments."""

    model_config = ConfigDict(extra="forbid")

    new_size: Size


class SetBootable(BaseModel):
    """`os-set_bootable` action arguments."""

    model_config = ConfigDict(extra="forbid")

    bootable: Boolean


class ExtendBody(BaseModel):
    """`POST /volumes/{volume_id}/action` with `os-extend`."""

    model_config = ConfigDict(extra="forbid")

    os_extend: Extend = Field(alias="os-extend")


class Retype(BaseModel):
    """`os-retype` action arguments."""

    model_config = ConfigDict(extra="forbid")

    new_type: Annotated[str, Field(min_length=1, max_length=255)]
    migration_policy: Literal["never", "on-demand"] = "never"


class RetypeBody(BaseModel):
    """`POST /volumes/{volume_id}/action` with `os-retype`."""

    model_config = ConfigDict(extra="forbid")

    os_retype: Retype = Field(alias="os-retype")


class SetBootableBody(BaseModel):
    """`POST /volumes/{volume_id}/action` with `os-set_bootable`."""

    model_config = ConfigDict(extra="forbid")

    os_set_bootable: SetBootable = Field(alias="os-set_bootable")


class ReadonlyFlag(BaseModel):
    """`os-update_readonly_flag` action arguments."""

    model_config = ConfigDict(extra="forbid")

    readonly: Boolean


class ReadonlyFlagBody(BaseModel):
    """`POST /volumes/{volume_id}/action` with `os-update_readonly_flag`."""

    model_config = ConfigDict(extra="forbid")

    os_update_readonly_flag: ReadonlyFlag = Field(alias="os-update_readonly_flag")
