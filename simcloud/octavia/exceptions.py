"""Octavia's API exceptions by class name: the HTTP status and message each one answers.

The messages are `octavia.common.exceptions` templates (`%(id)s` written as `{id}`),
answered in Octavia's body (`{"faultcode": "Client", "faultstring": ...}`), so a client
matching on the wording sees what a real Octavia sends.
"""

from __future__ import annotations

from typing import Any, TypeVar

from simcloud.errors import SimError
from simcloud.octavia.state import OctaviaRecord

RecordT = TypeVar("RecordT", bound=OctaviaRecord)

#: Class name → (status, message template).
FAULTS: dict[str, tuple[int, str]] = {
    "NotFound": (404, "{resource} {id} not found."),
    "InvalidSubresource": (400, "{resource} {id} not found."),
    "PolicyForbidden": (403, "Policy does not allow this request to be performed."),
    "InvalidOption": (400, "{value} is not a valid option for {option}"),
    "InvalidFilterArgument": (400, "One or more arguments are either duplicate or invalid"),
    "DisabledOption": (400, "The selected {option} is not allowed in this deployment: {value}"),
    "ValidationException": (400, "Validation failure: {detail}"),
    "VIPValidationException": (400, "Validation failure: VIP must contain one of: {objects}."),
    "InvalidSortKey": (400, "Supplied sort key '{key}' is not valid."),
    "InvalidSortDirection": (400, "Supplied sort direction '{key}' is not valid."),
    "InvalidMarker": (400, "Supplied pagination marker '{key}' is not valid."),
    "InvalidLimit": (400, "Supplied pagination limit '{key}' is not valid."),
    "ProviderNotEnabled": (400, "Provider '{prov}' is not enabled."),
    "ProviderUnsupportedOptionError": (
        501,
        "Provider '{prov}' does not support a requested option: {user_msg}",
    ),
    "ListenerNoChildren": (400, "Protocol {protocol} listeners cannot have child objects."),
    "MemberSRIOVDisabled": (400, "The load balancer flavor does not allow SR-IOV member ports."),
    "QuotaException": (403, "Quota has been met for resources: {resource}"),
    "DuplicateListenerEntry": (
        409,
        "Another Listener on this Load Balancer is already using protocol {protocol} "
        "and protocol_port {port}",
    ),
    "DuplicateMemberEntry": (
        409,
        "Another member on this pool is already using ip {ip_address} on protocol_port {port}",
    ),
    "DuplicateHealthMonitor": (409, "This pool already has a health monitor"),
    "DuplicatePoolEntry": (409, "This listener already has a default pool"),
    "ImmutableObject": (409, "{resource} {id} is immutable and cannot be updated."),
    "LBPendingStateError": (409, "Invalid state {state} of loadbalancer resource {id}"),
    # WSME's answers to bodies that do not fit the request type
    "InvalidInput": (400, "Invalid input for field/attribute {field}. Value: '{value}'. {msg}"),
    "UnknownAttribute": (400, "Unknown attribute for argument {argument}: {attributes}"),
}


def fault(name: str, **params: Any) -> SimError:
    """The SimError Octavia answers for its exception `name`."""
    status, template = FAULTS[name]
    return SimError(status, template.format(**params), style="octavia", error_type=name)


def validation(detail: str) -> SimError:
    """A 400 `ValidationException` ("Validation failure: ...")."""
    return fault("ValidationException", detail=detail)


def not_found(resource: str, object_id: str) -> SimError:
    """A 404 `NotFound` ("Load Balancer 42 not found.")."""
    return fault("NotFound", resource=resource, id=object_id)


def visible(record: RecordT | None, resource: str, object_id: str, project_id: str) -> RecordT:
    """The record a caller of `project_id` may see: 404 when there is none, 403 when it is
    another project's (Octavia looks the object up, then applies its policy)."""
    if record is None:
        raise not_found(resource, object_id)
    if record.project_id != project_id:
        raise fault("PolicyForbidden")
    return record
