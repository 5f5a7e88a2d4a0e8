"""Every table, imported in one place so metadata is complete."""

from store.actions import ActionRecord
from store.clusters import ClusterRecord, NodeRecord
from store.events import EventRecord
from store.policies import PolicyRecord
from store.profiles import ProfileRecord
from store.receivers import ReceiverRecord
from store.software_configs import SoftwareConfigRecord
from store.software_deployments import SoftwareDeploymentRecord
from store.stacks import StackRecord, StackResourceRecord

__all__ = [
    "ActionRecord",
    "ClusterRecord",
    "EventRecord",
    "NodeRecord",
    "PolicyRecord",
    "ProfileRecord",
    "ReceiverRecord",
    "SoftwareConfigRecord",
    "SoftwareDeploymentRecord",
    "StackRecord",
    "StackResourceRecord",
]
