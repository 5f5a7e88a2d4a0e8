"""The checks Heat makes of a remote stack before it accepts the stack that has it.

An `OS::Heat::Stack` with a `context` is made by the orchestration service of the
context's region (`RemoteStack.validate`): the region must have one in the Keystone
catalog, and that service must accept the template. Both are asked here, as Heat asks
them, with the caller's own Keystone token and catalog (Warden's service token for a
token of the tokens file), so a create or an update that would fail on either is a
400 before anything is made. The worker then makes the stack with Warden's cloud
account.
"""

from __future__ import annotations

import logging
from typing import Any, Final

import httpx

from api.auth import Caller
from api.keystone import KeystoneValidator
from domain.errors import BackendUnavailable, InvalidRequest
from domain.hot.functions import static_properties
from domain.hot.template import conditioned, load_template, resolve_parameters
from domain.stack.resource_types import STACK
from domain.stack.types.nested_stack import is_remote, remote_fields, remote_region

logger = logging.getLogger(__name__)

SERVICE: Final = "orchestration"
#: How long a remote Heat may take to validate a template.
VALIDATE_TIMEOUT_S: Final = 30.0


def remote_stacks(template: dict[str, Any], parameters: dict[str, Any]) -> list[dict[str, Any]]:
    """The properties of each remote stack the template makes (its own resources; a
    nested template's remote stacks are checked when their nested stack is made)."""
    loaded = load_template(template)
    params = resolve_parameters(loaded, parameters)
    found = []
    for res in conditioned(loaded, params).resources.values():
        if res.type != STACK or "context" not in res.properties:
            continue
        props = static_properties(res, params)
        if is_remote(props):
            found.append(props)
    return found


def endpoint_in(catalog: list[Any], interface: str, region: str) -> str:
    """The URL of the catalog's orchestration service for `interface` in `region`;
    keystoneauth's words when there is none."""
    for service in catalog:
        if not isinstance(service, dict) or service.get("type") != SERVICE:
            continue
        for ep in service.get("endpoints") or []:
            where = ep.get("region_id") or ep.get("region")
            if ep.get("interface") == interface and where == region and ep.get("url"):
                return str(ep["url"]).rstrip("/")
    raise LookupError(f"{interface} endpoint for {SERVICE} service in {region} region not found")


def heat_refusal(response: httpx.Response) -> str:
    """heatclient's words for a refusal: `ERROR: <Heat's message>`."""
    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return f"ERROR: {error['message']}"
    return f"ERROR: {response.text[:300].strip() or response.reason_phrase}"


class RemoteHeat:
    """Asks each region's orchestration service about the remote stacks of a template."""

    def __init__(
        self,
        keystone: KeystoneValidator | None,
        *,
        region: str | None,
        interface: str = "public",
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._keystone = keystone
        self._region = region
        self._interface = interface
        self._http = httpx.AsyncClient(
            timeout=httpx.Timeout(VALIDATE_TIMEOUT_S),
            transport=transport,
            headers={"Accept": "application/json", "User-Agent": "warden-api/1.0"},
        )

    async def check(
        self, caller: Caller, template: dict[str, Any], parameters: dict[str, Any]
    ) -> None:
        """400 for a remote stack whose region has no Heat, or whose Heat refuses its
        template; nothing is sent for a template without one."""
        for props in remote_stacks(template, parameters):
            await self._check_one(caller, props)

    async def _check_one(self, caller: Caller, props: dict[str, Any]) -> None:
        context = props.get("context") or {}
        if context.get("credential_secret_id"):
            raise InvalidRequest(
                "Cannot establish connection to Heat endpoint at remote cloud due to "
                '"credential_secret_id names a Barbican secret; Warden reaches other clouds '
                'only through its own Keystone catalog"'
            )
        region = remote_region(props) or self._region or ""
        where = f'region "{region}"'
        if self._keystone is None:
            raise InvalidRequest(
                f'Cannot establish connection to Heat endpoint at {where} due to "Warden '
                'runs without Keystone (keystone_url is unset), so it has no catalog"'
            )
        token, catalog = await self._keystone.catalog(caller.keystone_token)
        try:
            url = endpoint_in(catalog, self._interface, region)
        except LookupError as err:
            raise InvalidRequest(
                f'Cannot establish connection to Heat endpoint at {where} due to "{err}"'
            ) from None
        fields = remote_fields(props)
        body = {k: fields[k] for k in ("template", "files", "environment")}
        try:
            response = await self._http.post(
                f"{url}/validate", json=body, headers={"X-Auth-Token": token}
            )
        except httpx.HTTPError as exc:
            logger.warning("Heat at %s unreachable: %s", url, exc)
            raise BackendUnavailable(
                f"The Heat endpoint at {where} cannot be reached to validate the remote "
                "stack's template; try again."
            ) from None
        if response.status_code >= httpx.codes.INTERNAL_SERVER_ERROR:
            raise BackendUnavailable(
                f"The Heat endpoint at {where} failed to validate the remote stack's "
                f"template (HTTP {response.status_code}); try again."
            )
        if response.is_error:
            raise InvalidRequest(
                f"Failed validating stack template using Heat endpoint at {where} due to "
                f'"{heat_refusal(response)}"'
            )

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()
