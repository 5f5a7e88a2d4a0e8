"""`/v1/notifications`: backend event ingest for LIFECYCLE_EVENTS detection."""

from __future__ import annotations

from fastapi import APIRouter, status

from api.auth import WriterDep
from api.deps import DbDep, TemporalDep
from api.notifications import Notification, NotificationAccepted, ingest
from api.schemas.common import ERROR_RESPONSES

router = APIRouter(prefix="/v1", tags=["notifications"], responses=ERROR_RESPONSES)


@router.post(
    "/notifications", status_code=status.HTTP_202_ACCEPTED, response_model=NotificationAccepted
)
async def notification_route(
    caller: WriterDep, db: DbDep, temporal: TemporalDep, body: Notification
) -> NotificationAccepted:
    """A Nova versioned notification; lifecycle events reach the health manager at once."""
    return await ingest(db, temporal, caller, body)
