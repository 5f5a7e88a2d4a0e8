"""What cluster and stack workflows ask of the compute API (activity I/O)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

#: What every metadata key Warden sets on a server starts with.
WARDEN_KEY_PREFIX = "warden_"
#: Server metadata naming the cluster and the node a server was made for: every
#: server of a node (a replaced one the cloud refused to delete, a duplicate of a create
#: whose answer came too late) is found by it when the node is deleted.
CLUSTER_KEY = "warden_cluster"
NODE_KEY = "warden_node"
#: Server metadata holding the create's request id (makes a retried create adopt).
REQUEST_ID_KEY = "warden_request_id"


class NetworkRequest(BaseModel):
    """One NIC of a server, in Heat's and Senlin's words (names or ids)."""

    model_config = ConfigDict(frozen=True)

    network: str | None = None
    port: str | None = None
    fixed_ip: str | None = None
    subnet: str | None = None
    #: A floating IP (id or address) to associate with this NIC's port once ACTIVE.
    floating_ip: str | None = None
    #: A network to allocate a new floating IP from for this NIC (Senlin).
    floating_network: str | None = None
    tag: str | None = None
    #: Security groups of the port made for this NIC (Senlin's per-network list).
    security_groups: tuple[str, ...] = ()
    #: The `binding:vnic_type` of that port: normal, direct or macvtap (Senlin).
    vnic_type: str | None = None


class ServerNetworksUpdate(BaseModel):
    """Give a server the NICs of `new` in place of those of `old` (Heat's interface
    update: `domain/server_networks.py`)."""

    model_config = ConfigDict(frozen=True)

    physical_id: str
    old: tuple[NetworkRequest, ...] = ()
    new: tuple[NetworkRequest, ...] = ()
    #: Names the ports Warden makes for it, so that a retry adopts them.
    request_id: str


class ServerRequest(BaseModel):
    """Create one server; `request_id` makes a retried create find the first one.

    Images, flavors, networks, ports, subnets and volumes may be names or ids: the
    activity looks them up, as Heat and Senlin do.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    #: None boots from a volume of `block_device_mapping_v2`.
    image: str | None
    flavor: str
    metadata: dict[str, str] = Field(default_factory=dict)
    request_id: str
    #: None: Nova's default ("auto" since microversion 2.37).
    networks: tuple[NetworkRequest, ...] | Literal["auto", "none"] | None = None
    key_name: str | None = None
    #: Passed to Nova as given (base64-encoded on the way).
    user_data: str | None = None
    availability_zone: str | None = None
    security_groups: tuple[str, ...] = ()
    scheduler_hints: dict[str, Any] = Field(default_factory=dict)
    block_device_mapping_v2: tuple[dict[str, Any], ...] = ()
    config_drive: bool | None = None
    admin_pass: str | None = None
    tags: tuple[str, ...] = ()


class ServerInfo(BaseModel):
    """A server as the compute API reports it."""

    model_config = ConfigDict(frozen=True)

    physical_id: str
    name: str
    status: str
    locked: bool = False
    #: Nova's `addresses`: network name → entries (`addr`, `version`, `OS-EXT-IPS:type`, …).
    addresses: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    #: Network name → its IP addresses (Heat's `networks` attribute).
    networks: dict[str, list[str]] = Field(default_factory=dict)


class ServerStatuses(BaseModel):
    """Status of each asked-for server id; `None` means the server is gone."""

    model_config = ConfigDict(frozen=True)

    statuses: dict[str, str | None]


class LockServerRequest(BaseModel):
    """Lock a server in Nova, saying why (`locked_reason`, microversion 2.73)."""

    model_config = ConfigDict(frozen=True)

    physical_id: str = Field(min_length=1, max_length=255)
    reason: str | None = Field(None, max_length=255)


class ResizeRequest(BaseModel):
    """Move a server to another flavor (a name or an id), in place: Nova's resize."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    physical_id: str = Field(min_length=1, max_length=255)
    flavor: str = Field(min_length=1, max_length=255)


class ServerPasswordRequest(BaseModel):
    """Set a server's administrator password (Nova's `changePassword`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    physical_id: str = Field(min_length=1, max_length=255)
    admin_pass: str


class ServerTagsRequest(BaseModel):
    """Replace a server's tags (Nova 2.26's `PUT /servers/{id}/tags`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    physical_id: str = Field(min_length=1, max_length=255)
    tags: tuple[str, ...] = ()


class ServerMetadataRequest(BaseModel):
    """Replace a server's metadata, keeping Warden's own keys (`warden_*`) as they are."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    physical_id: str = Field(min_length=1, max_length=255)
    metadata: dict[str, str] = Field(default_factory=dict)
