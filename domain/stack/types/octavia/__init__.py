"""Heat's `OS::Octavia::*` types: load balancers, listeners, pools, members, monitors.

Octavia makes a load balancer immutable while any of its parts changes
(`PENDING_UPDATE`); each resource waits for its own `provisioning_status` ACTIVE, and a
409 "immutable" is retried, as Heat's `octavia_base` does.
"""
