"""Custom search attributes that make every Warden workflow findable in the UI."""

from __future__ import annotations

from temporalio import workflow
from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes

WARDEN_PROJECT = SearchAttributeKey.for_keyword("WardenProject")
WARDEN_KIND = SearchAttributeKey.for_keyword("WardenKind")
WARDEN_TARGET = SearchAttributeKey.for_keyword("WardenTarget")
WARDEN_STATUS = SearchAttributeKey.for_keyword("WardenStatus")

#: Names to register on a namespace (all Keyword).
SEARCH_ATTRIBUTE_NAMES = [
    key.name for key in (WARDEN_PROJECT, WARDEN_KIND, WARDEN_TARGET, WARDEN_STATUS)
]


def warden_attributes(project: str, kind: str, target: str, status: str) -> TypedSearchAttributes:
    """The four attributes a workflow starts with."""
    return TypedSearchAttributes(
        [
            SearchAttributePair(WARDEN_PROJECT, project),
            SearchAttributePair(WARDEN_KIND, kind),
            SearchAttributePair(WARDEN_TARGET, target),
            SearchAttributePair(WARDEN_STATUS, status),
        ]
    )


def set_status(status: str) -> None:
    """Upsert `WardenStatus` (inside a workflow): one command, event and visibility write."""
    workflow.upsert_search_attributes([WARDEN_STATUS.value_set(status)])


def show_final_status(status: str) -> None:
    """Set `WardenStatus` to how an operation ended (inside a workflow, as its last step).

    Before this patch, operations kept the status they started with (`RUNNING`), so
    `WardenStatus="FAILED"` found nothing; histories from then replay unchanged.
    """
    if workflow.patched("final-warden-status"):
        set_status(status)


def show_status(status: str) -> None:
    """Set an entity's `WardenStatus` to `status`, writing only when it changes.

    An entity shows itself after every step, and most steps (a mark, a node's health
    verdict) leave its status as it was. Each upsert is a command, a history event and
    a visibility write on the server, 1-2 ms of an update's round trip (docs/performance.md).
    Histories recorded before this patch upserted every time and replay unchanged.
    """
    unchanged = workflow.info().typed_search_attributes.get(WARDEN_STATUS) == status
    if unchanged and workflow.patched("status-upsert-on-change"):
        return
    set_status(status)
