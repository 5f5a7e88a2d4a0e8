"""A small JSON client for the lab's APIs: a project-scoped token and its catalog."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from scripts.openstack.procs import LabError

Json = dict[str, Any]


class Cloud:
    """Requests as one user of one project, endpoints from the token's catalog."""

    def __init__(self, auth_url: str, user: str, password: str, project: str) -> None:
        self.auth_url = auth_url
        body = {
            "auth": {
                "identity": {
                    "methods": ["password"],
                    "password": {
                        "user": {"name": user, "domain": {"id": "default"}, "password": password}
                    },
                },
                "scope": {"project": {"name": project, "domain": {"id": "default"}}},
            }
        }
        request = _request("POST", f"{auth_url}/auth/tokens", body, {})
        with _open(request) as response:
            self.token = response.headers["X-Subject-Token"]
            token = json.load(response)["token"]
        self.project_id: str = token["project"]["id"]
        self.catalog: list[Json] = token.get("catalog", [])

    def endpoint(self, service_type: str) -> str:
        for service in self.catalog:
            if service["type"] == service_type:
                for endpoint in service["endpoints"]:
                    if endpoint["interface"] == "public":
                        return str(endpoint["url"]).rstrip("/")
        raise LabError(f"no public {service_type} endpoint in the catalog")

    def call(
        self,
        method: str,
        url: str,
        body: Json | None = None,
        headers: dict[str, str] | None = None,
    ) -> Json:
        """Send JSON, return the decoded answer ({} for an empty one)."""
        all_headers = {"X-Auth-Token": self.token, **(headers or {})}
        with _open(_request(method, url, body, all_headers)) as response:
            data = response.read()
        return json.loads(data) if data else {}

    def upload(self, url: str, data: bytes) -> None:
        headers = {"X-Auth-Token": self.token, "Content-Type": "application/octet-stream"}
        request = urllib.request.Request(url, data=data, headers=headers, method="PUT")  # noqa: S310
        with _open(request):
            return

    def get(self, service_type: str, path: str) -> Json:
        return self.call("GET", f"{self.endpoint(service_type)}{path}")

    def post(self, service_type: str, path: str, body: Json, **headers: str) -> Json:
        return self.call("POST", f"{self.endpoint(service_type)}{path}", body, headers)

    def put(self, service_type: str, path: str, body: Json | None = None) -> Json:
        return self.call("PUT", f"{self.endpoint(service_type)}{path}", body)


def _request(method: str, url: str, body: Json | None, headers: dict[str, str]) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    all_headers = {"Accept": "application/json", **headers}
    if data is not None:
        all_headers.setdefault("Content-Type", "application/json")
    return urllib.request.Request(url, data=data, headers=all_headers, method=method)  # noqa: S310


def _open(request: urllib.request.Request) -> Any:
    try:
        return urllib.request.urlopen(request, timeout=60)  # noqa: S310
    except urllib.error.HTTPError as error:
        detail = error.read().decode(errors="replace")[:500]
        raise LabError(
            f"{request.get_method()} {request.full_url}: {error.code} {detail}"
        ) from None
