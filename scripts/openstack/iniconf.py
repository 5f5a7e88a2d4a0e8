"""Writing oslo.config and uWSGI ini files, and the sections every service shares."""

from __future__ import annotations

from pathlib import Path

from scripts.openstack.layout import REGION, SERVICE_PASSWORD, Layout

Value = str | int | bool
Sections = dict[str, dict[str, Value]]


def render(sections: Sections) -> str:
    lines: list[str] = []
    for name, options in sections.items():
        lines.append(f"[{name}]")
        for key, value in options.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            lines.append(f"{key} = {text}")
        lines.append("")
    return "\n".join(lines)


def write(path: Path, sections: Sections) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(sections))
    return path


def service_auth(layout: Layout, user: str) -> dict[str, Value]:
    """keystoneauth options for a service talking to another as its own service user."""
    return {
        "auth_type": "password",
        "auth_url": layout.auth_url,
        "username": user,
        "password": SERVICE_PASSWORD,
        "user_domain_name": "Default",
        "project_name": "service",
        "project_domain_name": "Default",
        "region_name": REGION,
    }


def authtoken(layout: Layout, user: str) -> dict[str, Value]:
    """[keystone_authtoken] validating incoming tokens as `user`."""
    options = service_auth(layout, user)
    # In-process token cache: the lab runs no memcached, so no memcache pool either
    # (its driver is not installed, and looking for it logs an error).
    return {"www_authenticate_uri": layout.auth_url, "memcache_use_advanced_pool": False, **options}


def common_default(layout: Layout, service: str) -> dict[str, Value]:
    """[DEFAULT] options shared by every OpenStack service of the lab."""
    return {
        # Logs go to stderr, which the lab sends to log/<process>.log.
        "use_stderr": True,
        "debug": False,
        "state_path": str(layout.data / service),
        # `down` should not wait a minute for in-flight work of a throwaway cloud.
        "graceful_shutdown_timeout": 5,
    }


def uwsgi_ini(layout: Layout, name: str, module: str, extra: Sections | None = None) -> Path:
    """A standalone uWSGI serving `module` on the service's loopback port."""
    options: dict[str, Value] = {
        "module": module,
        "http-socket": f"127.0.0.1:{layout.port(name)}",
        "master": True,
        "processes": 1,
        "threads": 4,
        "enable-threads": True,
        "lazy-apps": True,
        "need-app": True,
        "die-on-term": True,
        "exit-on-reload": False,
        "hook-master-start": "unix_signal:15 gracefully_kill_them_all",
        "worker-reload-mercy": 10,
        "buffer-size": 65535,
        "add-header": "Connection: close",
        "procname-prefix": f"lab-{name}-",
        "home": str(layout.venv),
    }
    options.update((extra or {}).get("uwsgi", {}))
    return write(layout.etc / name / "uwsgi.ini", {"uwsgi": options})
