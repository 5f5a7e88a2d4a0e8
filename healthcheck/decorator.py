"""`@healthcheck`: record a check's result from whether a function raises.

The contract: docs/api-contract.md §Process health."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar, overload

from healthcheck.checks import split_check_name
from healthcheck.manager import HealthManager, get_manager

P = ParamSpec("P")
T = TypeVar("T")


def describe_exception(exc: BaseException) -> str:
    """`<Type>: <first line of the message>`, the output of a failed check."""
    # Only the first line: drivers such as SQLAlchemy append the SQL statement and
    # its bound parameters on later lines, and /health is unauthenticated.
    lines = str(exc).strip().splitlines()
    name = type(exc).__name__
    return f"{name}: {lines[0]}" if lines else name


@dataclass(frozen=True, slots=True)
class HealthcheckDecorator:
    """Wraps sync and async functions; built by `healthcheck()`."""

    name: str
    exceptions: tuple[type[BaseException], ...]
    manager: HealthManager | None = None
    component_type: str | None = None

    @overload
    def __call__(
        self, func: Callable[P, Coroutine[Any, Any, T]]
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...

    @overload
    def __call__(self, func: Callable[P, T]) -> Callable[P, T]: ...

    def __call__(self, func: Callable[P, Any]) -> Callable[P, Any]:
        if inspect.iscoroutinefunction(func):
            return self._wrap_async(func)
        return self._wrap_sync(func)

    def _wrap_sync(self, func: Callable[P, T]) -> Callable[P, T]:
        @functools.wraps(func)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
            try:
                result = func(*args, **kwargs)
            except self.exceptions as exc:
                self._record_failure(exc)
                raise
            self._record_pass()
            return result

        return wrapper

    def _wrap_async(
        self, func: Callable[P, Coroutine[Any, Any, T]]
    ) -> Callable[P, Coroutine[Any, Any, T]]:
        @functools.wraps(func)
        async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
            try:
                result = await func(*args, **kwargs)
            except self.exceptions as exc:
                self._record_failure(exc)
                raise
            self._record_pass()
            return result

        return wrapper

    def _target(self) -> HealthManager:
        # Resolved per call so functions decorated at import time follow a later
        # configure() instead of keeping the start-up default.
        return self.manager if self.manager is not None else get_manager()

    def _record_pass(self) -> None:
        self._target().record_pass(self.name, component_type=self.component_type)

    def _record_failure(self, exc: BaseException) -> None:
        self._target().record_failure(
            self.name, describe_exception(exc), component_type=self.component_type
        )


def healthcheck(
    name: str,
    exceptions: Iterable[type[BaseException]] | None = None,
    *,
    manager: HealthManager | None = None,
    component_type: str | None = None,
) -> HealthcheckDecorator:
    """Record check `name` from each call: pass on return, failure on a listed exception.

    A listed exception is recorded (`warn`, then `fail` once persistent) and re-raised;
    any other exception propagates without being recorded. Under Temporal, put it
    below `@activity.defn` so the worker calls the wrapper.

    Args:
        name: `component` or `component:measurement` (e.g. `database`).
        exceptions: exception types that mean the dependency is unhealthy;
            default `Exception`.
        manager: where to record; default the process-wide manager.
        component_type: `componentType` in the body, e.g. `datastore`.

    Example:
        >>> @healthcheck("database", [OSError])
        ... def load() -> int:
        ...     return 1
    """
    split_check_name(name)  # fail at import time rather than on the first call
    caught = (Exception,) if exceptions is None else tuple(exceptions)
    return HealthcheckDecorator(name, caught, manager, component_type)
