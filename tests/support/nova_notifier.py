"""Publish a notification as Nova does, with oslo.messaging itself, from a process of its own.

`python -m tests.support.nova_notifier <transport_url> <event_type> <server_id>` sends it
the way nova-compute's `rpc.get_versioned_notifier` would: control exchange `nova`,
driver `messagingv2`, publisher `nova-compute:<host>`, topic `versioned_notifications`
for a versioned event type (`instance.power_off.end`, payload a `nova_object`) and
`notifications` for a legacy one (`compute.instance.power_off.end`, a flat payload).
oslo.messaging imports eventlet, which warns at import, so it never enters the test
process (whose warnings are errors).
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from typing import Any

from tests.support.processes import PYTHON


def payload(event_type: str, server_id: str) -> tuple[str, dict[str, Any]]:
    """The topic and payload Nova sends for `event_type` about `server_id`."""
    if event_type.startswith("compute."):
        return "notifications", {"instance_id": server_id, "state": "stopped"}
    data = {"uuid": server_id, "state": "stopped", "power_state": "shutdown"}
    return "versioned_notifications", {
        "nova_object.name": "InstanceActionPayload",
        "nova_object.namespace": "nova",
        "nova_object.version": "1.8",
        "nova_object.data": data,
    }


def publish(transport_url: str, event_type: str, server_id: str) -> None:
    """Send one notification from a new process (raises when it fails)."""
    done = subprocess.run(
        [PYTHON, "-W", "ignore", "-m", __name__, transport_url, event_type, server_id],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0:
        raise RuntimeError(f"publishing {event_type} failed: {done.stderr[-2000:]}")


def _main(transport_url: str, event_type: str, server_id: str) -> None:
    warnings.simplefilter("ignore")
    import oslo_messaging as messaging
    from oslo_config import cfg

    messaging.set_transport_defaults(control_exchange="nova")
    conf = cfg.ConfigOpts()
    conf([])
    transport = messaging.get_notification_transport(conf, url=transport_url)
    topic, body = payload(event_type, server_id)
    notifier = messaging.Notifier(
        transport, publisher_id="nova-compute:lab-host", driver="messagingv2", topics=[topic]
    )
    context = {"project_id": "demo", "user_id": "warden"}
    if event_type.endswith(".error"):
        notifier.error(context, event_type, body)
    else:
        notifier.info(context, event_type, body)
    transport.cleanup()


if __name__ == "__main__":
    _main(*sys.argv[1:4])
