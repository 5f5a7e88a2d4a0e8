# ruff: noqa: T201 -- a command line tool: it reports on stdout.
"""Command line: `python -m scripts.openstack {install,up,status,down,clean}`."""

from __future__ import annotations

import argparse
import sys
import time

from scripts.openstack.install import install
from scripts.openstack.layout import Layout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.openstack", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    install_cmd = commands.add_parser("install", help="create the lab venv (idempotent)")
    install_cmd.add_argument("--force", action="store_true", help="reinstall even if pinned")
    commands.add_parser("up", help="start, configure and seed every service")
    commands.add_parser("status", help="show which processes run and which APIs answer")
    commands.add_parser("down", help="stop everything, keep the data")
    commands.add_parser("clean", help="stop everything and delete the data (not the venv)")
    args = parser.parse_args(argv)
    layout = Layout.default()
    started = time.monotonic()
    if args.command == "install":
        install(layout, force=args.force)
        print(f"install: done in {time.monotonic() - started:.1f} s")
        return 0
    # Imported here so that `install` needs nothing but the standard library.
    from scripts.openstack import lab

    if args.command == "up":
        lab.up(layout)
    elif args.command == "status":
        return lab.status(layout)
    elif args.command == "down":
        lab.down(layout)
    else:
        lab.clean(layout)
    print(f"{args.command}: done in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
