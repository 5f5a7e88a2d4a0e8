"""Keystone v3: issue, validate and revoke tokens; the catalog points back at the sim."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Request
from fastapi.responses import JSONResponse, Response

from simcloud.errors import SimError, bad_request, style_for
from simcloud.state import SimState, Token, isotime, state_of

router = APIRouter(prefix="/identity")

UNAUTHENTICATED = "The request you have made requires authentication."
MAX_TOKENS = 10_000
#: (catalog type, service name, path under the sim's base URL)
SERVICES = (
    ("identity", "keystone", "/identity/v3"),
    ("compute", "nova", "/compute/v2.1"),
    ("messaging", "zaqar", "/messaging"),
    ("load-balancer", "octavia", "/load-balancer"),
    ("network", "neutron", "/networking"),
    ("image", "glance", "/image"),
    ("volumev3", "cinderv3", "/volume/v3/{project_id}"),
    ("block-storage", "cinder", "/volume/v3/{project_id}"),
)
#: Warden's services, under `SimConfig.warden_url`; `{project_id}` is substituted as
#: Keystone does for `%(project_id)s` in an endpoint URL.
WARDEN_SERVICES = (
    ("orchestration", "heat", "/v1/{project_id}"),
    ("clustering", "senlin", "/cluster"),
)


def base_url(request: Request) -> str:
    """The sim's base URL as the caller reached it (used in catalog and links)."""
    return str(request.base_url).rstrip("/")


def require_token(request: Request) -> Token:
    """FastAPI dependency: a valid `X-Auth-Token`, else 401 in the service's format."""
    state = state_of(request)
    value = request.headers.get("x-auth-token", "")
    token = state.tokens.get(value)
    if token is None or token.expires_at <= state.now():
        raise SimError(401, UNAUTHENTICATED, style=style_for(request.url.path))
    return token


AuthToken = Annotated[Token, Depends(require_token)]


def _get(node: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(node, dict) or key not in node:
            where = ".".join(path)
            raise bad_request(f"'{where}' is a required property", style="keystone")
        node = node[key]
    return node


#: The admin user's roles on the project.
ROLES_ADMIN = ("admin", "member")


def _domain_ok(state: SimState, domain: Any) -> bool:
    if not isinstance(domain, dict):
        return False
    name, domain_id = domain.get("name"), domain.get("id")
    configured = state.config.domain_name
    return name == configured or (domain_id is not None and domain_id == configured.lower())


@dataclass(frozen=True)
class User:
    """A user Keystone knows: its id, name, password and roles on the project."""

    id: str
    name: str
    password: str
    roles: tuple[str, ...]


def users(state: SimState) -> tuple[User, User]:
    """The project's member user and its admin user."""
    config = state.config
    member = User(state.user_id, config.username, config.password, ("member",))
    admin = User(state.admin_user_id, config.admin_username, config.admin_password, ROLES_ADMIN)
    return member, admin


def _check_password(state: SimState, identity: dict[str, Any]) -> User:
    given = _get(identity, "password", "user")
    for user in users(state):
        known = given.get("name") == user.name or given.get("id") == user.id
        if "name" in given and not _domain_ok(state, given.get("domain")):
            known = False
        if known and secrets.compare_digest(str(given.get("password")), user.password):
            return user
    raise SimError(401, UNAUTHENTICATED, style="keystone")


def _check_app_credential(state: SimState, identity: dict[str, Any]) -> None:
    cred = _get(identity, "application_credential")
    if not isinstance(cred, dict) or "secret" not in cred:
        raise bad_request("'secret' is a required property", style="keystone")
    if cred.get("id") != state.config.application_credential_id or not secrets.compare_digest(
        str(cred["secret"]), state.config.application_credential_secret
    ):
        raise SimError(401, UNAUTHENTICATED, style="keystone")


def _scoped(state: SimState, auth: dict[str, Any], methods: list[str]) -> bool:
    scope = auth.get("scope")
    if "application_credential" in methods:
        if scope is not None:
            raise SimError(401, "Application credentials cannot request a scope.", style="keystone")
        return True
    if scope is None:
        return False
    project = _get(scope, "project")
    named = project.get("name") == state.config.project_name and _domain_ok(
        state, project.get("domain")
    )
    if not (named or project.get("id") == state.project_id):
        raise SimError(401, UNAUTHENTICATED, style="keystone")
    return True


def _catalog(state: SimState, base: str) -> list[dict[str, Any]]:
    services = [
        (kind, name, base + path.format(project_id=state.project_id))
        for kind, name, path in SERVICES
    ]
    warden = (state.config.warden_url or "").rstrip("/")
    if warden:
        services += [
            (kind, name, warden + path.format(project_id=state.project_id))
            for kind, name, path in WARDEN_SERVICES
        ]
    region = state.config.region
    return [
        {
            "type": kind,
            "name": name,
            "id": f"{name}-service",
            "endpoints": [
                {
                    "id": f"{name}-{interface}",
                    "interface": interface,
                    "region": region,
                    "region_id": region,
                    "url": url,
                }
                for interface in ("public", "internal")
            ],
        }
        for kind, name, url in services
    ]


def _version(base: str) -> dict[str, Any]:
    return {
        "id": "v3.14",
        "status": "stable",
        "updated": "2020-04-07T00:00:00Z",
        "links": [{"rel": "self", "href": f"{base}/identity/v3/"}],
        "media-types": [
            {"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}
        ],
    }


@router.get("")
@router.get("/")
async def identity_versions(request: Request) -> JSONResponse:
    """Keystone's version discovery at the service root (300 Multiple Choices)."""
    body = {"versions": {"values": [_version(base_url(request))]}}
    return JSONResponse(body, status_code=300)


@router.get("/v3")
@router.get("/v3/")
async def identity_version(request: Request) -> JSONResponse:
    """Keystone's v3 version document, which keystoneauth1 reads before authenticating."""
    return JSONResponse({"version": _version(base_url(request))})


@router.post("/v3/auth/tokens", status_code=201)
async def issue_token(request: Request) -> Response:
    """Keystone `POST /v3/auth/tokens` (password or application credential)."""
    state = state_of(request)
    try:
        auth = _get(await request.json(), "auth")
    except ValueError as exc:
        raise bad_request("Malformed request body", style="keystone") from exc
    identity = _get(auth, "identity")
    methods = _get(identity, "methods")
    if not isinstance(methods, list) or not methods:
        raise bad_request("'methods' must be a non-empty list", style="keystone")
    user = users(state)[0]
    if methods == ["password"]:
        user = _check_password(state, identity)
    elif methods == ["application_credential"]:
        _check_app_credential(state, identity)
    else:
        raise SimError(401, f"Unsupported authentication methods {methods}", style="keystone")
    scoped = _scoped(state, auth, methods)
    now = state.now()
    token = Token(
        value=secrets.token_hex(16),
        user_id=user.id,
        project_id=state.project_id if scoped else "",
        expires_at=now + state.config.token_ttl_s,
        methods=tuple(methods),
        username=user.name,
        roles=user.roles,
    )
    if len(state.tokens) >= MAX_TOKENS:  # drop expired tokens before growing further
        state.tokens = {k: t for k, t in state.tokens.items() if t.expires_at > now}
    state.tokens[token.value] = token
    body = _token_body(state, token, now, base_url(request) if scoped else None)
    return JSONResponse(body, status_code=201, headers={"X-Subject-Token": token.value})


def _token_body(state: SimState, token: Token, now: float, base: str | None) -> dict[str, Any]:
    domain = {"id": state.config.domain_name.lower(), "name": state.config.domain_name}
    body: dict[str, Any] = {
        "methods": list(token.methods),
        "user": {
            "id": token.user_id,
            "name": token.username or state.config.username,
            "domain": domain,
        },
        "issued_at": isotime(now),
        "expires_at": isotime(token.expires_at),
        "audit_ids": [token.value[:22]],
    }
    if base is not None:
        body["project"] = {"id": token.project_id, "name": state.config.project_name}
        body["project"]["domain"] = domain
        body["roles"] = [{"id": f"{role}-role", "name": role} for role in token.roles]
        body["catalog"] = _catalog(state, base)
    return {"token": body}


@router.get("/v3/auth/tokens")
async def validate_token(
    request: Request, _: AuthToken, subject: Annotated[str, Header(alias="X-Subject-Token")]
) -> Response:
    """Keystone token validation: 200 with the token, 404 when unknown or expired."""
    state = state_of(request)
    token = state.tokens.get(subject)
    if token is None or token.expires_at <= state.now():
        raise SimError(404, "Could not find token.", style="keystone")
    base = base_url(request) if token.project_id else None
    body = _token_body(state, token, state.now(), base)
    return JSONResponse(body, headers={"X-Subject-Token": subject})


@router.delete("/v3/auth/tokens", status_code=204)
async def revoke_token(
    request: Request, _: AuthToken, subject: Annotated[str, Header(alias="X-Subject-Token")]
) -> Response:
    """Keystone token revocation; the token answers 401 from now on."""
    if state_of(request).tokens.pop(subject, None) is None:
        raise SimError(404, "Could not find token.", style="keystone")
    return Response(status_code=204)
