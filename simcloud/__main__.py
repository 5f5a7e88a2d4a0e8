"""`python -m simcloud`: serve the simulated cloud with uvicorn.

Every option falls back to its `WARDEN_SIMCLOUD_*` environment variable (read through
`config.get_settings()`), then to the development default.
"""

from __future__ import annotations

import argparse
import logging
import sys

import uvicorn

from config import Settings, get_settings
from config.settings import SettingsError
from simcloud.app import create_app
from simcloud.config import SimConfig


def parse_args(settings: Settings, argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, with defaults taken from `settings`."""
    parser = argparse.ArgumentParser(prog="python -m simcloud", description=__doc__)
    parser.add_argument("--host", default=settings.simcloud_host)
    parser.add_argument("--port", type=int, default=settings.simcloud_port)
    parser.add_argument(
        "--notify-url",
        default=settings.simcloud_notify_url,
        help="POST Nova-style notifications here (e.g. http://127.0.0.1:8004/v1/notifications)",
    )
    parser.add_argument(
        "--notify-token",
        default=settings.simcloud_notify_token,
        help="X-Auth-Token sent with notifications (default: WARDEN_SIMCLOUD_NOTIFY_TOKEN)",
    )
    parser.add_argument(
        "--warden-url",
        default=settings.simcloud_warden_url,
        help="Warden's API URL, listed in the Keystone catalog as orchestration "
        "(<url>/v1/<project id>) and clustering (<url>/cluster)",
    )
    parser.add_argument("--build-latency-ms", type=int, default=settings.simcloud_build_latency_ms)
    parser.add_argument(
        "--action-latency-ms", type=int, default=settings.simcloud_action_latency_ms
    )
    parser.add_argument(
        "--max-limit",
        type=int,
        default=settings.simcloud_max_limit,
        help="largest page of a server list, like Nova's osapi_max_limit (0 = unlimited)",
    )
    parser.add_argument(
        "--network-quota",
        action="append",
        default=[],
        metavar="RESOURCE=N",
        help="replace a Neutron quota, e.g. port=-1 (no limit) for thousands of servers",
    )
    parser.add_argument(
        "--private-network",
        default="private",
        help="the project network made at start, as devstack's (empty: none)",
    )
    parser.add_argument(
        "--availability-zones",
        default="nova",
        help="Nova's availability zones, comma-separated (a zone placement policy spreads "
        "nodes over them)",
    )
    parser.add_argument(
        "--compute-hosts",
        default="simcloud",
        help="Nova's compute hosts, comma-separated (an anti-affinity server group needs "
        "a host per server)",
    )
    parser.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    return parser.parse_args(argv)


def _quotas(given: list[str]) -> dict[str, int]:
    """`--network-quota port=-1` options as a map (a bad one stops simcloud)."""
    quotas = {}
    for item in given:
        resource, _, limit = item.partition("=")
        try:
            quotas[resource.strip()] = int(limit)
        except ValueError:
            sys.exit(f"simcloud: --network-quota {item!r}: expected RESOURCE=N")
    return quotas


def main(argv: list[str] | None = None) -> None:
    """Run simcloud until interrupted; it accepts the configured cloud credentials."""
    try:
        settings = get_settings()
    except SettingsError as err:
        sys.exit(f"simcloud: {err}")
    args = parse_args(settings, argv)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    password = settings.cloud_password.get_secret_value()
    app_credential: dict[str, str] = {}
    if settings.cloud_application_credential_id and settings.cloud_application_credential_secret:
        app_credential = {
            "application_credential_id": settings.cloud_application_credential_id,
            "application_credential_secret": (
                settings.cloud_application_credential_secret.get_secret_value()
            ),
        }
    config = SimConfig(
        notify_url=args.notify_url or None,
        notify_token=args.notify_token or None,
        build_latency_ms=args.build_latency_ms,
        action_latency_ms=args.action_latency_ms,
        max_limit=args.max_limit,
        network_quotas=_quotas(args.network_quota),
        private_network=args.private_network or None,
        availability_zones=tuple(z.strip() for z in args.availability_zones.split(",") if z.strip())
        or ("nova",),
        compute_hosts=tuple(h.strip() for h in args.compute_hosts.split(",") if h.strip())
        or ("simcloud",),
        warden_url=args.warden_url or None,
        username=settings.cloud_username,
        password=password,
        project_name=settings.cloud_project_name,
        domain_name=settings.cloud_user_domain_name,
        **app_credential,
    )
    uvicorn.run(
        create_app(config), host=args.host, port=args.port, log_level=args.log_level, ws="none"
    )


if __name__ == "__main__":
    main()
