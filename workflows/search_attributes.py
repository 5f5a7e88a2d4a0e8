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


def show_final_status(status: str) -> None:
    """Set `WardenStatus` to how an operation ended (inside a workflow, as its last step).

    Before this patch, operations kept the status they started with (`RUNNING`), so
    `WardenStatus="FAILED"` found nothing; histories from then replay unchanged.
    """
    if workflow.patched("final-warden-status"):
        workflow.upsert_search_attributes([WARDEN_STATUS.value_set(status)])
