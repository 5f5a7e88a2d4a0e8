"""The one way a Warden process reaches Temporal (worker, API, benchmarks, tests).

Connection options come from Temporal's own environment configuration
(`temporalio.envconfig`): `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`,
`TEMPORAL_TLS_*`, `TEMPORAL_GRPC_META_*`, and `TEMPORAL_PROFILE` of the TOML file at
`TEMPORAL_CONFIG_FILE` (default `~/.config/temporalio/temporal.toml`). Warden's own
settings decide only what the profile leaves open, and win when set explicitly
(`WARDEN_TEMPORAL_ADDRESS`, `WARDEN_TEMPORAL_NAMESPACE`). Every client gets Warden's data
converter: pydantic, payloads compressed, and encrypted when keys are configured.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter
from temporalio.envconfig import ClientConfigProfile, ClientConnectConfig

from config.codec import CodecKeys, warden_codec
from config.settings import Settings


class TemporalConfigError(ValueError):
    """Temporal's client configuration (profile, TLS files) cannot be used."""


def load_codec_keys(settings: Settings) -> CodecKeys | None:
    """The configured codec keys: `codec_keys` inline, else `codec_keys_file`, else none."""
    if settings.codec_keys is not None:
        return CodecKeys.from_json(settings.codec_keys.get_secret_value(), source="codec_keys")
    if settings.codec_keys_file is not None:
        return CodecKeys.from_file(settings.codec_keys_file)
    return None


def warden_data_converter(keys: CodecKeys | None, *, compress: bool = True) -> DataConverter:
    """pydantic payloads, compressed (unless `compress` is false) and then encrypted with
    `keys` when there are any (`config/codec.py`)."""
    codec = warden_codec(keys, compress=compress)
    return dataclasses.replace(pydantic_data_converter, payload_codec=codec)


def temporal_connect_config(
    settings: Settings, *, env: Mapping[str, str] | None = None
) -> ClientConnectConfig:
    """`Client.connect` keyword arguments from the envconfig profile and Warden's settings.

    Args:
        settings: Warden's settings (address and namespace fallbacks or overrides).
        env: The environment to read `TEMPORAL_*` from; default the process's.
    """
    try:
        profile = ClientConfigProfile.load(override_env_vars=env)
        config = profile.to_client_connect_config()  # reads the TLS files
    except RuntimeError as err:  # the SDK's ConfigError: unknown profile, bad TOML
        raise TemporalConfigError(f"Temporal client configuration: {err}") from err
    except OSError as err:
        raise TemporalConfigError(
            f"Temporal TLS configuration: cannot read {err.filename}: {err.strerror}"
        ) from err
    explicit = settings.model_fields_set
    if "temporal_address" in explicit or not config.get("target_host"):
        config["target_host"] = settings.temporal_address
    if "temporal_namespace" in explicit or not config.get("namespace"):
        config["namespace"] = settings.temporal_namespace
    return config


async def connect_temporal(
    settings: Settings,
    *,
    env: Mapping[str, str] | None = None,
    data_converter: DataConverter | None = None,
) -> Client:
    """A client connected as `temporal_connect_config` says, with Warden's data converter.

    Raises:
        TemporalConfigError: The profile or its TLS files cannot be used.
        CodecKeyError: The codec keys cannot be used.
        RuntimeError: Temporal did not accept the connection (the SDK's message says why).
    """
    config = temporal_connect_config(settings, env=env)
    converter = data_converter or warden_data_converter(
        load_codec_keys(settings), compress=settings.codec_compression
    )
    return await Client.connect(**config, data_converter=converter)
