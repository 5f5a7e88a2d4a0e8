"""Unusable settings name their variable; the worker's log leaves httpx's lines to DEBUG."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator

import pytest
from pydantic import BaseModel, Field, ValidationError

from config.logs import CHATTY, configure_logging
from config.settings import SettingsError, get_settings, settings_error_text


@pytest.fixture
def fresh_settings() -> Iterator[None]:
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_each_unusable_setting_is_named_by_its_variable(
    monkeypatch: pytest.MonkeyPatch, fresh_settings: None
) -> None:
    monkeypatch.setenv("WARDEN_LOG_LEVEL", "loud")
    monkeypatch.setenv("WARDEN_API_PORT", "eighty")
    monkeypatch.setenv("WARDEN_DATABASE_URL", "mysql://db/warden")
    with pytest.raises(SettingsError) as raised:
        get_settings()
    text = str(raised.value)
    assert text.startswith("Invalid settings: ")
    assert "WARDEN_LOG_LEVEL: Input should be 'DEBUG', 'INFO', 'WARNING' or 'ERROR'" in text
    assert "WARDEN_API_PORT: Input should be a valid integer" in text
    assert "WARDEN_DATABASE_URL: Value error, must be a sqlite:/// or postgresql:// URL" in text
    assert "\n" not in text and "pydantic" not in text


def test_the_log_level_is_read_in_any_case(
    monkeypatch: pytest.MonkeyPatch, fresh_settings: None
) -> None:
    monkeypatch.setenv("WARDEN_LOG_LEVEL", "debug")
    assert get_settings().log_level == "DEBUG"


def test_a_variable_read_under_an_alias_is_named_as_set() -> None:
    class Aliased(BaseModel):
        address: int = Field(validation_alias="TEMPORAL_ADDRESS")
        port: int

    with pytest.raises(ValidationError) as raised:
        Aliased.model_validate({"TEMPORAL_ADDRESS": "x", "port": "y"})
    assert settings_error_text(raised.value) == (
        "Invalid settings: TEMPORAL_ADDRESS: Input should be a valid integer, unable to parse "
        "string as an integer; WARDEN_PORT: Input should be a valid integer, unable to parse "
        "string as an integer"
    )


@pytest.mark.parametrize("module", ["worker", "simcloud"])
def test_a_process_with_an_unusable_setting_stops_with_one_line(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", module],
        env={"WARDEN_LOG_LEVEL": "loud", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"{module}: Invalid settings: WARDEN_LOG_LEVEL: Input should be "
        "'DEBUG', 'INFO', 'WARNING' or 'ERROR'"
    )


@pytest.fixture
def chatty_levels() -> Iterator[None]:
    before = {name: logging.getLogger(name).level for name in CHATTY}
    yield
    for name, level in before.items():
        logging.getLogger(name).setLevel(level)


def test_httpx_request_lines_show_at_debug_only(chatty_levels: None) -> None:
    configure_logging("INFO", "%(message)s")
    assert not logging.getLogger("httpx").isEnabledFor(logging.INFO)
    assert logging.getLogger("httpx").isEnabledFor(logging.WARNING)
    configure_logging("DEBUG", "%(message)s")
    assert all(logging.getLogger(name).level == logging.NOTSET for name in CHATTY)
