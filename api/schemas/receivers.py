"""Receiver schemas (Senlin's `receiver` object)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from pydantic import BaseModel, Field

from api.schemas.common import StrictModel
from domain.cluster.receivers import WEBHOOK
from store.receivers import ReceiverRecord


class ReceiverBody(StrictModel):
    """The inside of `{"receiver": {...}}`."""

    name: str = Field(min_length=1, max_length=255)
    type: str = Field(WEBHOOK, max_length=16)
    cluster_id: str = Field(min_length=1, max_length=255)
    action: str = Field(min_length=1, max_length=64)
    params: dict[str, Any] = Field(default_factory=dict, max_length=16)
    actor: dict[str, Any] | None = None


class ReceiverCreate(StrictModel):
    """`POST /v1/receivers`."""

    receiver: ReceiverBody


class ReceiverUpdateBody(StrictModel):
    """The inside of `PATCH /v1/receivers/{id}`: Senlin changes a name, action, params."""

    name: str | None = Field(None, min_length=1, max_length=255)
    action: str | None = Field(None, min_length=1, max_length=64)
    params: dict[str, Any] | None = Field(None, max_length=16)


class ReceiverUpdate(StrictModel):
    """`PATCH /v1/receivers/{receiver_id}`."""

    receiver: ReceiverUpdateBody


class ReceiverPublic(BaseModel):
    """A receiver as Senlin shows it; `channel.alarm_url` is the webhook to call."""

    id: str
    name: str
    type: str
    cluster_id: str
    action: str
    params: dict[str, Any]
    channel: dict[str, str]
    actor: dict[str, Any] = Field(default_factory=dict)
    project: str
    user: str | None = None
    domain: str | None = None
    created_at: datetime
    updated_at: datetime | None

    @classmethod
    def of(cls, record: ReceiverRecord, base: str) -> ReceiverPublic:
        """From the row, with the webhook URL below `base` (the API's `…/v1` root)."""
        query = urlencode([("V", "2"), *sorted((k, str(v)) for k, v in record.params.items())])
        return cls(
            id=record.id,
            name=record.name,
            type=record.type,
            cluster_id=record.cluster_id,
            action=record.action,
            params=record.params,
            channel={"alarm_url": f"{base}/v1/webhooks/{record.id}/trigger?{query}"},
            project=record.project_id,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )


class ReceiverEnvelope(BaseModel):
    """`{"receiver": {...}}`."""

    receiver: ReceiverPublic


class ReceiverList(BaseModel):
    """`{"receivers": [...]}`."""

    receivers: list[ReceiverPublic]
