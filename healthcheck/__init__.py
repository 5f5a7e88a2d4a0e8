"""Per-process health checks: cached results served as health+json.

The contract: docs/api-contract.md §Process health.
"""

from healthcheck.checks import CheckItem, ComponentType, HealthStatus
from healthcheck.decorator import healthcheck
from healthcheck.manager import HealthManager, HealthResponse, configure, get_manager
from healthcheck.server import HealthServer, serve_health
from healthcheck.uri import HealthUri, TcpUri, UnixUri, parse_uris

__all__ = [
    "CheckItem",
    "ComponentType",
    "HealthManager",
    "HealthResponse",
    "HealthServer",
    "HealthStatus",
    "HealthUri",
    "TcpUri",
    "UnixUri",
    "configure",
    "get_manager",
    "healthcheck",
    "parse_uris",
    "serve_health",
]
