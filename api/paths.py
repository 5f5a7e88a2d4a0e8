"""What a route's path names, checked in one place: the project, and the stack or cluster.

Routes take these as parameters instead of repeating their preamble. `ProjectCaller`
is the caller once the `{project_id}` in the path proved theirs (403 otherwise, before
anything else, as Heat's `tenant_local` check does); `StackInPath` and `ClusterInPath`
load the caller's own row the path names (404 otherwise). The dependencies are `async`
though they never wait: a plain `def` would cost a thread hop (api/deps.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Path

from api.auth import Caller, CallerDep, WriterDep, same_project
from api.cluster_service import find_cluster
from api.deps import Database, DbDep
from api.stack_service import find_stack
from store.clusters import ClusterRecord
from store.stacks import StackRecord

ProjectId = Annotated[str, Path(max_length=64)]
StackName = Annotated[str, Path(max_length=255)]
StackId = Annotated[str, Path(max_length=64)]
ResourceName = Annotated[str, Path(max_length=255)]
ClusterId = Annotated[str, Path(max_length=255)]
NodeId = Annotated[str, Path(max_length=64)]


async def _project_caller(project_id: ProjectId, caller: CallerDep) -> Caller:
    same_project(caller, project_id)
    return caller


async def _project_writer(project_id: ProjectId, caller: WriterDep) -> Caller:
    same_project(caller, project_id)
    return caller


#: The caller of a `/v1/{project_id}/…` route, in that project (403 otherwise).
ProjectCaller = Annotated[Caller, Depends(_project_caller)]
#: The same, and allowed to change things (403 for readers).
ProjectWriter = Annotated[Caller, Depends(_project_writer)]


@dataclass(frozen=True)
class StackPath:
    """The stack `…/stacks/{stack_name}/{stack_id}` names, loaded when the route asks.

    Loaded by the route, not by the dependency: a body or query the route refuses is a
    400 before an unknown stack is a 404, as in Heat (whose controllers check the
    request before the engine looks the stack up).
    """

    caller: Caller
    db: Database
    stack_name: str
    stack_id: str

    async def load(self) -> StackRecord:
        """The caller's stack named by both name and id (404 otherwise)."""
        return await find_stack(self.db, self.caller, self.stack_name, self.stack_id)


@dataclass(frozen=True)
class ClusterPath:
    """The cluster `…/clusters/{cluster_id}` names, loaded when the route asks (after the
    route's own 400s, as in Senlin)."""

    caller: Caller
    db: Database
    cluster_id: str

    async def load(self) -> ClusterRecord:
        """The caller's cluster by id or unique name (404 otherwise)."""
        return await find_cluster(self.db, self.caller, self.cluster_id)


async def _stack_path(
    stack_name: StackName, stack_id: StackId, caller: ProjectCaller, db: DbDep
) -> StackPath:
    return StackPath(caller, db, stack_name, stack_id)


async def _cluster_path(cluster_id: ClusterId, caller: CallerDep, db: DbDep) -> ClusterPath:
    return ClusterPath(caller, db, cluster_id)


StackInPath = Annotated[StackPath, Depends(_stack_path)]
ClusterInPath = Annotated[ClusterPath, Depends(_cluster_path)]
