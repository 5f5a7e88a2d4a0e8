"""A real OpenStack lab (Keystone, Placement, Glance, Neutron, Nova) on this machine.

Run as `python -m scripts.openstack {install,up,status,down,clean}` from the repo root.
Everything lives under `var/openstack/` and listens on 127.0.0.1 only.
"""
