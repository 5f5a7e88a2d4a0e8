"""Logging of Warden's own processes (`WARDEN_LOG_LEVEL`).

httpx logs every request it sends at INFO: a line per cloud call, webhook and health
probe, thousands in one scale-in, and one every 30 s from the worker's cloud ping when
nothing happens. Those lines show at `DEBUG` only; at every level, failures still reach
the log through the activity that met them, and every call is in the Temporal UI.
"""

from __future__ import annotations

import logging

#: Libraries whose every request is a log line at INFO.
CHATTY = ("httpx", "httpcore")


def configure_logging(level: str, fmt: str) -> None:
    """The root logger at `level` with `fmt`; the chatty libraries at WARNING unless
    `level` is DEBUG."""
    logging.basicConfig(level=level, format=fmt)
    quiet = logging.getLevelName(level) > logging.DEBUG
    for name in CHATTY:
        logging.getLogger(name).setLevel(logging.WARNING if quiet else logging.NOTSET)
