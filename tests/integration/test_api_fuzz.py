"""Fuzz every operation of the running API from its own OpenAPI document (schemathesis).

The schemathesis CLI runs against the API over HTTP: its coverage phase (boundary and
schema-violating values of every parameter and body field) then its fuzzing phase, with
a fixed seed and deterministic generation, so a failure reproduces with the printed
`curl`. No response may be a 5xx, and every one must match its documented status codes,
content type, headers and schema. Findings are pinned in tests/api/test_fuzz_findings.py.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import TOKENS, Warden

#: Each run takes about 70 s here alone (98 operations, coverage and fuzzing phases);
#: under `make test`'s four workers, beside the tempest suites, it took over 120 s.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]

#: Cases per operation and phase; the whole test stays well under a minute.
MAX_EXAMPLES = 20
SEED = 8
RUN_TIMEOUT_S = 360

#: The API rightly refuses some schema-valid bodies for rules JSON Schema cannot state
#: (an unknown profile, exactly one action per body, a template's or a policy spec's
#: shape), so only the positive-data check is left out.
CHECKS = ["--checks", "all", "--exclude-checks", "positive_data_acceptance"]


def _config(token: str) -> str:
    project = TOKENS[token]["project"]
    return "\n".join(
        [
            f'headers = {{ "X-Auth-Token" = "{token}" }}',
            "[parameters]",
            # Stack paths name the caller's project, or every stack request stops at 403.
            f'"path.project_id" = "{project}"',
            "[generation]",
            "deterministic = true",
            'database = "none"',
            # A schema-valid create naming a profile the fuzzer made would start a real
            # cluster of up to MAX_CAPACITY servers; only invalid ones are sent.
            "[[operations]]",
            'include-name = "POST /v1/clusters"',
            'generation.mode = "negative"',
        ]
    )


async def _fuzz(warden: Warden, token: str, workdir: Path) -> dict[str, Any]:
    """Run schemathesis as `token`; its JSON report, once it found nothing."""
    workdir.mkdir()
    config = workdir / "schemathesis.toml"
    config.write_text(_config(token))
    report = workdir / "report.json"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        str(config),
        "run",
        f"{warden.api_url}/openapi.json",
        # The stateful phase chains creates into real clusters and is not deterministic.
        "--phases",
        "examples,coverage,fuzzing",
        "--max-examples",
        str(MAX_EXAMPLES),
        "--seed",
        str(SEED),
        *CHECKS,
        "--report",
        "json",
        "--report-json-path",
        str(report),
        "--no-color",
        cwd=workdir,  # its cache of crashes goes there, not into the repository
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=RUN_TIMEOUT_S)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    text = out.decode(errors="replace")
    assert proc.returncode == 0, f"schemathesis as {token} found problems:\n{text}"
    result: dict[str, Any] = json.loads(report.read_text())
    operations = result["operations"]
    assert operations["tested"] == operations["selected"] == operations["total"], operations
    return result


async def test_fuzzing_as_a_writer_finds_no_5xx_or_contract_break(
    warden: Warden, tmp_path: Path
) -> None:
    # `it-other` may write, and its project holds no other test's objects to disturb.
    report = await _fuzz(warden, "it-other", tmp_path / "writer")
    clusters = report["valid_rates"].get("POST /v1/clusters", {})
    assert all(rate["accepted"] == 0 for rate in clusters.values()), "a cluster was created"
    assert report["valid_rates"]["POST /v1/profiles"]["coverage"]["accepted"] > 0


async def test_fuzzing_as_a_reader_finds_no_5xx_or_contract_break(
    warden: Warden, tmp_path: Path
) -> None:
    # A reader of `demo` reads other tests' real objects; every write must be a 403.
    await _fuzz(warden, "it-reader", tmp_path / "reader")
