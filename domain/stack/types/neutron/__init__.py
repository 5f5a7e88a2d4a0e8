"""Heat's `OS::Neutron::*` types: networks, subnets, ports, security groups, floating
IPs and routers, each one Neutron object (Heat's schemas, Neutron's bodies)."""
