"""The cloud driver: typed async clients for Keystone, Nova, Zaqar and Octavia.

Every failure surfaces as a `domain.errors` exception (see `activities.cloud.errors`);
one `CloudSession` per worker holds the connection pool and the Keystone token.
"""

from activities.cloud.auth import Endpoint, KeystoneAuth, Token
from activities.cloud.compute import ComputeClient, RebootType, Server
from activities.cloud.config import CloudConfig, clouds_yaml_paths, from_clouds_yaml
from activities.cloud.loadbalancer import LoadBalancerClient, Member
from activities.cloud.messaging import Message, MessagingClient
from activities.cloud.session import CloudSession
from domain.servers import REQUEST_ID_KEY

__all__ = [
    "REQUEST_ID_KEY",
    "CloudConfig",
    "CloudSession",
    "ComputeClient",
    "Endpoint",
    "KeystoneAuth",
    "LoadBalancerClient",
    "Member",
    "Message",
    "MessagingClient",
    "RebootType",
    "Server",
    "Token",
    "clouds_yaml_paths",
    "from_clouds_yaml",
]
