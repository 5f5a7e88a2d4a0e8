"""simcloud: a small simulated OpenStack (Keystone, Nova, Zaqar, Octavia subsets).

`python -m simcloud` serves it on port 8774; tests and benchmarks embed it with
`running_simcloud()` (real HTTP on a free port) or `create_app()` (in process).
"""

from simcloud.app import create_app
from simcloud.config import SimConfig
from simcloud.server import ServedApp, running_simcloud, serve_in_thread

__all__ = ["ServedApp", "SimConfig", "create_app", "running_simcloud", "serve_in_thread"]
