"""What the worker runs: every workflow class and activity instance."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.engine import Engine

from activities.cloud import CloudSession
from activities.cloud_objects import CloudObjectActivities
from activities.compute import ComputeActivities
from activities.event_sinks import EventSinkActivities
from activities.health import HealthActivities
from activities.hooks import HookActivities
from activities.keypairs import KeypairActivities
from activities.nodes import NodeActivities
from activities.recovery import RecoveryActivities
from activities.signals import SignalActivities
from activities.software_configs import SoftwareConfigActivities
from activities.stack_nodes import StackNodeActivities
from activities.store import StoreActivities
from config import Settings
from workflows.cluster.add_nodes import ClusterAddNodesWorkflow
from workflows.cluster.affinity_policy import (
    AffinityPolicyAttachWorkflow,
    AffinityPolicyDetachWorkflow,
)
from workflows.cluster.lb_policy import LbPolicyAttachWorkflow, LbPolicyDetachWorkflow
from workflows.cluster.node_deletion import NodeDeletionWorkflow
from workflows.cluster.operations import (
    ClusterCheckWorkflow,
    ClusterCreateWorkflow,
    ClusterDeleteWorkflow,
)
from workflows.cluster.recovery import ClusterRecoverWorkflow, NodeRecoveryWorkflow
from workflows.cluster.replace_nodes import ClusterReplaceNodesWorkflow
from workflows.cluster.scale_in import ScaleInWorkflow
from workflows.cluster.server_ops import ServerOperationsWorkflow
from workflows.cluster.update import ClusterUpdateWorkflow
from workflows.cluster.workflow import ClusterWorkflow
from workflows.health.manager import HealthManagerWorkflow
from workflows.node.details import NodeDetailsWorkflow
from workflows.node.workflow import NodeWorkflow
from workflows.stack.cloud_checks import CloudChecksWorkflow
from workflows.stack.operation import StackOperationWorkflow
from workflows.stack.workflow import StackWorkflow

WORKFLOWS: Sequence[type] = (
    ClusterWorkflow,
    ClusterCreateWorkflow,
    ClusterCheckWorkflow,
    ClusterUpdateWorkflow,
    ClusterDeleteWorkflow,
    ClusterAddNodesWorkflow,
    ClusterReplaceNodesWorkflow,
    LbPolicyAttachWorkflow,
    LbPolicyDetachWorkflow,
    AffinityPolicyAttachWorkflow,
    AffinityPolicyDetachWorkflow,
    ServerOperationsWorkflow,
    ScaleInWorkflow,
    NodeDeletionWorkflow,
    ClusterRecoverWorkflow,
    NodeRecoveryWorkflow,
    HealthManagerWorkflow,
    NodeWorkflow,
    NodeDetailsWorkflow,
    StackWorkflow,
    StackOperationWorkflow,
    CloudChecksWorkflow,
)


@asynccontextmanager
async def serving_activities(
    settings: Settings, engine: Engine, cloud: CloudSession
) -> AsyncIterator[list[Callable[..., Any]]]:
    """Every activity, bound over the process's long-lived clients: the cloud session,
    the database engine, and the hook and probe HTTP clients, closed on the way out."""
    store = StoreActivities(engine)
    hooks = HookActivities(
        cloud,
        secret_for=store.policy_secret,
        record_event=store.record_event,
        url_allowlist=settings.hook_url_allowlist,
    )
    health = HealthActivities(
        cloud,
        url_allowlist=settings.hook_url_allowlist,
        listing_max_age_s=settings.health_listing_max_age_s,
    )
    compute = ComputeActivities(cloud.compute, cloud.collections)
    nodes = NodeActivities(cloud.compute, cloud.collections, engine)
    recovery = RecoveryActivities(cloud.compute, cloud.collections)
    objects = CloudObjectActivities(cloud.collections)
    keypairs = KeypairActivities(cloud.collections)
    stacks = StackNodeActivities(cloud.orchestration)
    configs = SoftwareConfigActivities(engine)
    signals = SignalActivities(settings)
    sinks = EventSinkActivities(cloud)
    try:
        yield [
            store.record_changes,
            compute.create_server,
            compute.find_created_server,
            compute.update_server_networks,
            compute.wait_server_active,
            compute.wait_server_resized,
            compute.delete_server,
            compute.wait_server_deleted,
            compute.get_server_statuses,
            compute.get_server_details,
            compute.check_cloud_constraints,
            nodes.remove_node,
            stacks.create_node_stack,
            stacks.wait_node_stack,
            stacks.update_node_stack,
            stacks.delete_node_stack,
            stacks.judge_node_stacks,
            stacks.act_on_node_stack,
            stacks.show_node_stack,
            stacks.retag_node_stack,
            hooks.deliver_lifecycle_message,
            health.probe_nodes,
            recovery.reboot_server,
            recovery.rebuild_server,
            recovery.resize_server,
            recovery.confirm_server_resize,
            recovery.change_server_password,
            recovery.set_server_tags,
            recovery.update_server_metadata,
            recovery.start_server,
            recovery.stop_server,
            recovery.unpause_server,
            recovery.pause_server,
            recovery.lock_server,
            recovery.unlock_server,
            recovery.fence_server,
            recovery.wait_server_healthy,
            objects.create_cloud_object,
            objects.show_cloud_object,
            objects.find_cloud_object,
            objects.update_cloud_object,
            objects.delete_cloud_object,
            objects.wait_cloud_object_deleted,
            objects.wait_cloud_object,
            objects.act_on_cloud_object,
            keypairs.create_keypair,
            configs.store_software_config,
            configs.show_software_config,
            configs.delete_software_config,
            configs.start_software_deployment,
            configs.software_deployment_replaced_by,
            configs.signal_software_deployment,
            configs.cancel_software_deployment,
            configs.remove_software_deployment,
            signals.signal_url,
            sinks.post_to_event_sinks,
        ]
    finally:
        await hooks.aclose()
        await health.aclose()
