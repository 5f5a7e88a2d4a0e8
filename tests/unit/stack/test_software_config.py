"""The config resources' pure rules: what each stores, as Heat's resources store it."""

from __future__ import annotations

import email
from typing import Any

import pytest

from domain.errors import InvalidRequest
from domain.stack.types.software_config import (
    CLOUD_CONFIG,
    MULTIPART_MIME,
    SOFTWARE_CONFIG,
    checked_io,
    config_body,
    is_uuid_like,
    multipart_text,
)

STORED = "6f9619ff-8b86-d011-b42d-00c04fc964ff"


def nothing(_: str) -> None:
    return None


def test_a_software_config_stores_its_properties_with_heats_io_defaults() -> None:
    props = {
        "config": "echo hi",
        "inputs": [{"name": "a", "replace_on_change": "true"}],
        "outputs": [{"name": "out", "error_output": True, "description": "d"}],
        "options": {"k": 1},
    }
    assert config_body(SOFTWARE_CONFIG, props, "seed", nothing) == {
        "group": "Heat::Ungrouped",
        "config": "echo hi",
        "inputs": [{"name": "a", "type": "String", "replace_on_change": True}],
        "outputs": [{"name": "out", "type": "String", "description": "d", "error_output": True}],
        "options": {"k": 1},
    }


def test_a_cloud_config_is_yaml_under_heats_header() -> None:
    body = config_body(CLOUD_CONFIG, {"cloud_config": {"packages": ["nginx"]}}, "s", nothing)
    assert body == {"group": "Heat::Ungrouped", "config": "#cloud-config\npackages:\n- nginx\n"}


def test_a_multipart_message_takes_stored_configs_and_splices_multipart_parts() -> None:
    inner = multipart_text(
        [{"config": "one"}, {"config": "two", "subtype": "x-shellscript"}], "i", nothing
    )
    stored = {STORED: "from the store"}
    text = multipart_text(
        [
            {"config": STORED},
            {"config": inner, "type": "multipart"},
            {"config": "héllo", "filename": "boot.sh"},
        ],
        "seed",
        stored.get,
    )
    parts: list[Any] = list(email.message_from_string(text).get_payload())
    assert [p.get_payload(decode=True).decode() for p in parts] == [
        "from the store",
        "one",
        "two",
        "héllo",
    ]
    assert [p.get_content_type() for p in parts] == [
        "text/plain",
        "text/plain",
        "text/x-shellscript",
        "text/boot",
    ]
    assert parts[3].get_content_charset() == "utf-8"
    assert parts[3].get_filename() == "boot.sh"


def test_the_same_resource_writes_the_same_message() -> None:
    parts = [{"config": "a"}, {"config": "b"}]
    assert multipart_text(parts, "x", nothing) == multipart_text(parts, "x", nothing)
    assert multipart_text(parts, "x", nothing) != multipart_text(parts, "y", nothing)


def test_a_multipart_group_defaults_as_heats() -> None:
    assert config_body(MULTIPART_MIME, {"parts": []}, "s", nothing)["group"] == "Heat::Ungrouped"


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ("abc", "Software Config I/O Schema must be in a list"),
        ({"name": "a"}, "Software Config I/O Schema must be in a list"),
        ([1], "Software Config I/O Schema must be a dict"),
        ([{"type": "String"}], "Property name not assigned"),
        ([{"name": "a", "type": "Float"}], '"Float" is not an allowed value'),
        ([{"name": "a", "replace_on_change": "perhaps"}], '"perhaps" is not a valid boolean'),
    ],
)
def test_bad_inputs_are_heats_400s(entries: object, message: str) -> None:
    with pytest.raises(InvalidRequest, match=message):
        checked_io(entries, inputs=True)


def test_uuid_like_is_heats() -> None:
    assert is_uuid_like(STORED) and is_uuid_like(STORED.replace("-", ""))
    assert not is_uuid_like("#!/bin/sh") and not is_uuid_like(None)
