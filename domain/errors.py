"""The one exception tree of Warden.

Every layer raises these; `api/errors.py` maps them to HTTP in one table, and
workflows carry them across Temporal as `ApplicationError(type=<class name>)` so
the API can turn an update rejection back into the same class (`error_from_type`).
"""

from __future__ import annotations


class WardenError(Exception):
    """Base of every error Warden raises on purpose."""

    #: Whether retrying the same call may succeed (Temporal retries only these).
    retryable: bool = False
    #: The `error.type` of the OpenStack error body: the exception class Heat or Senlin
    #: names in the same case (clients such as heatclient branch on it).
    openstack_type: str = "InternalError"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InvalidRequest(WardenError):
    """The request is malformed or breaks a rule of the contract (400)."""

    openstack_type = "BadRequest"


class MultipleChoices(InvalidRequest):
    """A name or short id matches more than one object (Senlin's 400)."""

    openstack_type = "MultipleChoices"

    @classmethod
    def of(cls, key: str) -> MultipleChoices:
        """The refusal of `key`, in Senlin's words."""
        return cls(
            f"Multiple results found matching the query criteria '{key}'. Please be more specific."
        )


class NotSupported(InvalidRequest):
    """What the request asks is not supported in this state (Heat's `NotSupported`, 400)."""

    openstack_type = "NotSupported"


class Unauthenticated(WardenError):
    """No token or an unknown token (401)."""

    openstack_type = "NotAuthenticated"


class Forbidden(WardenError):
    """The caller is known but may not do this (403)."""

    openstack_type = "Forbidden"


class NotFound(WardenError):
    """The object does not exist or is not visible to the caller (404)."""

    openstack_type = "ResourceNotFound"


class PlainNotFound(NotFound):
    """Not found where Heat raises its plain `NotFound` (software configs and
    deployments), whose body names that type rather than `ResourceNotFound`."""

    openstack_type = "NotFound"


class Conflict(WardenError):
    """The object's current state forbids the operation: busy, locked, duplicate (409)."""

    openstack_type = "Conflict"


class NotAcceptable(WardenError):
    """The requested API (micro)version is not one this API serves (406)."""

    openstack_type = "NotAcceptable"


class PayloadTooLarge(WardenError):
    """The request body is larger than allowed (413)."""

    openstack_type = "RequestEntityTooLarge"


class BackendError(WardenError):
    """A backend (cloud API, webhook target) failed permanently (502)."""

    openstack_type = "BackendError"


class BackendUnavailable(BackendError):
    """A backend is unreachable, timed out or answered 5xx: retry later (503)."""

    retryable = True


class BackendInternalError(BackendUnavailable):
    """A backend answered 500, a fault of its own: worth a few quick retries (a database
    deadlock passes), not the long ones an outage gets (a bug or bad config persists)."""


class BackendNotFound(NotFound):
    """The backend says the object does not exist (404 from the cloud)."""


class BackendConflict(Conflict):
    """The backend refused the call for the object's state (409 from the cloud)."""


class ActionInProgress(Conflict):
    """Another operation of the stack or cluster is running (409, Heat's and Senlin's
    `ActionInProgress`: heatclient's callers wait and retry on this type alone)."""

    openstack_type = "ActionInProgress"


class TemporalUnavailable(WardenError):
    """Temporal (or every worker) did not answer in time (503)."""

    retryable = True


_ALL: dict[str, type[WardenError]] = {
    cls.__name__: cls
    for cls in (
        WardenError,
        InvalidRequest,
        NotSupported,
        Unauthenticated,
        Forbidden,
        NotFound,
        Conflict,
        ActionInProgress,
        NotAcceptable,
        PayloadTooLarge,
        BackendError,
        BackendUnavailable,
        BackendNotFound,
        BackendConflict,
        TemporalUnavailable,
    )
}


def error_from_type(type_name: str | None, message: str) -> WardenError:
    """Rebuild a domain error from the `type` an ApplicationError carried.

    Unknown type names become a plain `WardenError`, which the API maps to 500-free
    502 "backend error" rather than leaking internals.
    """
    cls = _ALL.get(type_name or "", BackendError)
    return cls(message)
