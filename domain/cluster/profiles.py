"""Profiles: what a node's server looks like (`os.nova.server` 1.0)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

#: Nova's rule for server metadata (`parameter_types.metadata`): a profile that broke it
#: would be accepted, then fail every node create of its clusters.
MetadataKey = Annotated[str, Field(min_length=1, max_length=255, pattern=r"^[A-Za-z0-9_.: -]+$")]
MetadataValue = Annotated[str, Field(max_length=255)]


class ServerProperties(BaseModel):
    """Properties of an `os.nova.server` profile (the subset Warden drives)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    flavor: str = Field(min_length=1, max_length=255)
    image: str = Field(min_length=1, max_length=255)
    name: str | None = Field(None, max_length=255)
    metadata: dict[MetadataKey, MetadataValue] = Field(default_factory=dict, max_length=64)


class ProfileSpec(BaseModel):
    """A profile spec as users write it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["os.nova.server"]
    version: Literal["1.0"]
    properties: ServerProperties

    def to_json(self) -> dict[str, Any]:
        """The spec as stored and sent to workflows."""
        return self.model_dump(mode="json")
