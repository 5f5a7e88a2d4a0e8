"""The CLI's pure pieces: connection defaults, API error text, parameters, live lines."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import typer
import yaml

from cli.client import ApiError, error_message, resolve_connection
from cli.dev import ensure_dev_token, process_specs
from cli.output import as_text, styled
from cli.progress import action_lines, stack_lines, victim_line
from cli.stacks import parse_parameters
from config import Settings


def test_token_comes_from_the_option_then_env_then_dev_token_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(var_dir=tmp_path, api_port=9999)
    monkeypatch.delenv("WARDEN_TOKEN", raising=False)
    with pytest.raises(ApiError, match=r"No API token.*dev-token"):
        resolve_connection(settings, None, None)
    (tmp_path / "dev-token").write_text("from-file\n")
    assert resolve_connection(settings, None, None).token == "from-file"
    monkeypatch.setenv("WARDEN_TOKEN", "from-env")
    assert resolve_connection(settings, None, None).token == "from-env"
    chosen = resolve_connection(settings, "http://x:1/", "given")
    assert (chosen.url, chosen.token) == ("http://x:1", "given")
    assert resolve_connection(settings, None, None).url == "http://127.0.0.1:9999"


def test_dev_token_is_granted_the_dev_clouds_project_by_its_keystone_id(
    tmp_path: Path,
) -> None:
    """The id simcloud's Keystone gives the project, not its name: a token from
    `OS_CLOUD=warden-dev` and the dev token then see the same stacks and clusters. An
    entry written by an older `warden dev` (project `demo`) is corrected, others kept."""
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(
        yaml.safe_dump(
            {
                "tokens": {
                    "fixed": {"project": "demo", "roles": ["admin"]},
                    "other": {"project": "p"},
                }
            }
        )
    )
    settings = Settings(var_dir=tmp_path, dev_token="fixed", cloud_project_name="ops")
    assert ensure_dev_token(settings) == "fixed"
    entries = yaml.safe_load(tokens.read_text())["tokens"]
    project = entries["fixed"]["project"]
    assert len(project) == 32 and int(project, 16) >= 0 and project == settings.dev_project_id
    assert project != Settings(cloud_project_name="demo").dev_project_id
    assert entries["fixed"]["roles"] == ["admin"] and entries["other"] == {"project": "p"}
    assert (tmp_path / "dev-token").read_text() == "fixed\n"


def test_error_message_is_the_apis_own_words() -> None:
    body = {"error": {"code": 409, "title": "Conflict", "message": "Cluster web is locked."}}
    assert error_message(httpx.Response(409, json=body)) == "409: Cluster web is locked."
    assert error_message(httpx.Response(502, text="<html>")) == "502 Bad Gateway"


def test_parameters_are_key_value_pairs() -> None:
    assert parse_parameters(["a=1", "b=x=y", "c="]) == {"a": "1", "b": "x=y", "c": ""}
    assert parse_parameters(None) == {}
    with pytest.raises(typer.BadParameter, match="'oops' is not KEY=VALUE"):
        parse_parameters(["oops"])


def test_waiting_victim_shows_its_deadline_and_heartbeats() -> None:
    victim = {
        "target": "node-id",
        "status": "WAITING_LIFECYCLE_COMPLETION",
        "inputs": {"node_name": "web-3"},
        "lifecycle": {"deadline": "2026-11-21T14:05:00Z", "heartbeats": 2},
    }
    assert victim_line(victim) == (
        "web-3  WAITING_LIFECYCLE_COMPLETION  waiting for complete_lifecycle until "
        "14:05:00 UTC (2 heartbeats)"
    )
    deleting = {"target": "node-id", "status": "RUNNING", "inputs": {}}
    assert victim_line(deleting) == "node-id  RUNNING"
    action = {"name": "CLUSTER_SCALE_IN", "id": "abcdef0123", "status": "WAITING",
              "status_reason": "Waiting for lifecycle hooks"}  # fmt: skip
    assert action_lines(action, [deleting]) == [
        "CLUSTER_SCALE_IN abcdef01  WAITING  Waiting for lifecycle hooks",
        "  node-id  RUNNING",
    ]


def test_stack_lines_list_each_resource() -> None:
    stack = {"stack_name": "shop", "stack_status": "UPDATE_IN_PROGRESS", "stack_status_reason": ""}
    web = {"resource_name": "web", "resource_status": "CHECK_FAILED", "physical_resource_id": "s1"}
    assert stack_lines(stack, [web]) == [
        "stack shop  UPDATE_IN_PROGRESS",
        "  web  CHECK_FAILED  s1",
    ]


def test_stack_lines_show_group_members_under_their_group() -> None:
    stack = {"stack_name": "farm", "stack_status": "UPDATE_IN_PROGRESS"}
    group = {"resource_name": "servers", "resource_status": "UPDATE_IN_PROGRESS"}
    member = {"resource_name": "3", "resource_status": "UPDATE_IN_PROGRESS",
              "physical_resource_id": "s3", "parent_resource": "servers"}  # fmt: skip
    assert stack_lines(stack, [group, member]) == [
        "stack farm  UPDATE_IN_PROGRESS",
        "  servers  UPDATE_IN_PROGRESS  ",
        "  servers/3  UPDATE_IN_PROGRESS  s3",
    ]


def test_cells_and_status_colours() -> None:
    assert as_text(None) == ""
    assert as_text(True) == "yes"
    assert as_text(["a", "b"]) == "a, b"
    assert as_text({"b": 1, "a": 2}) == '{"a": 2, "b": 1}'
    assert styled("CREATE_FAILED") == "[red]CREATE_FAILED[/]"
    assert styled("ACTIVE") == "[green]ACTIVE[/]"
    assert styled("whatever") == "whatever"


def test_dev_temporal_keeps_its_file_in_wal_synced_as_configured(tmp_path: Path) -> None:
    def temporal_argv(**overrides: object) -> list[str]:
        settings = Settings(var_dir=tmp_path, **overrides)  # type: ignore[arg-type]
        return process_specs(settings, notify_token="t")[0].argv

    def pragmas(argv: list[str]) -> list[str]:
        return [argv[i + 1] for i, arg in enumerate(argv) if arg == "--sqlite-pragma"]

    argv = temporal_argv()
    assert argv[argv.index("--db-filename") + 1] == str(tmp_path / "temporal.db")
    assert pragmas(argv) == ["journal_mode=wal", "synchronous=normal"]
    assert pragmas(temporal_argv(temporal_dev_sync="full")) == [
        "journal_mode=wal",
        "synchronous=full",
    ]
    with pytest.raises(ValueError, match="temporal_dev_sync"):
        Settings(temporal_dev_sync="off")
