"""The load-balancing policy spec the unit and integration tests share."""

from __future__ import annotations

from typing import Any

#: senlin-tempest-plugin's own spec (`common/constants.py`, `spec_lb_policy`).
LB_SPEC: dict[str, Any] = {
    "type": "senlin.policy.loadbalance",
    "version": "1.1",
    "properties": {
        "pool": {
            "protocol": "HTTP",
            "protocol_port": 80,
            "subnet": "private-subnet",
            "lb_method": "ROUND_ROBIN",
            "session_persistence": {"type": "SOURCE_IP", "cookie_name": "test-cookie"},
        },
        "vip": {
            "subnet": "private-subnet",
            "connection_limit": 100,
            "protocol": "HTTP",
            "protocol_port": 80,
        },
        "health_monitor": {
            "type": "HTTP",
            "delay": "1",
            "timeout": 1,
            "max_retries": 5,
            "admin_state_up": True,
            "http_method": "GET",
            "url_path": "/index.html",
            "expected_codes": "200,201,202",
        },
        "lb_status_timeout": 300,
    },
}
