"""Write Heat's own schemas of the resource types Warden implements, as JSON.

Warden takes property and attribute schemas (names, types, defaults, constraints,
`update_allowed`, descriptions) from Heat itself rather than copying them by hand.
This runs against the real Heat from PyPI, in a virtualenv of its own (Heat is not a
dependency of Warden)::

    uv venv /tmp/heatenv && VIRTUAL_ENV=/tmp/heatenv uv pip install openstack-heat
    /tmp/heatenv/bin/python scripts/dump_heat_schemas.py > domain/stack/types/heat_schemas.json

Each type is dumped as Heat's `resource_schema` call answers `GET /resource_types/{type}`.
"""

import importlib.metadata
import itertools
import json
import logging
import sys

from heat.engine import attributes, properties, resources, support
from oslo_config import cfg

#: The types whose schemas Warden uses (domain/stack/types/).
TYPES = (
    "OS::Nova::Server",
    "OS::Nova::KeyPair",
    "OS::Nova::ServerGroup",
    "OS::Neutron::Net",
    "OS::Neutron::Subnet",
    "OS::Neutron::Port",
    "OS::Neutron::SecurityGroup",
    "OS::Neutron::SecurityGroupRule",
    "OS::Neutron::FloatingIP",
    "OS::Neutron::FloatingIPAssociation",
    "OS::Neutron::Router",
    "OS::Neutron::RouterInterface",
    "OS::Neutron::ExtraRouteSet",
    "OS::Neutron::Trunk",
    "OS::Cinder::Volume",
    "OS::Cinder::VolumeAttachment",
    "OS::Glance::WebImage",
    "OS::Octavia::LoadBalancer",
    "OS::Octavia::Listener",
    "OS::Octavia::Pool",
    "OS::Octavia::PoolMember",
    "OS::Octavia::HealthMonitor",
    "OS::Heat::SoftwareConfig",
    "OS::Heat::CloudConfig",
    "OS::Heat::MultipartMime",
    "OS::Heat::StructuredConfig",
    "OS::Heat::SoftwareDeployment",
    "OS::Heat::SoftwareDeploymentGroup",
    "OS::Heat::StructuredDeployment",
    "OS::Heat::StructuredDeploymentGroup",
    "OS::Heat::WaitCondition",
    "OS::Heat::WaitConditionHandle",
    "OS::Heat::Value",
)


def schema_of(env, type_name):
    """Heat's resource_schema (heat/engine/service.py) of one type."""
    cls = env.get_class(type_name)
    props, hidden_props = {}, {}
    for name, legacy in cls.properties_schema.items():
        schema = properties.Schema.from_legacy(legacy)
        if not schema.implemented:
            continue
        hidden = schema.support_status.status == support.HIDDEN
        (hidden_props if hidden else props)[name] = dict(schema)
    attrs, hidden_attrs = {}, {}
    chained = itertools.chain(cls.attributes_schema.items(), cls.base_attributes_schema.items())
    for name, data in chained:
        schema = attributes.Schema.from_attribute(data)
        hidden = schema.support_status.status == support.HIDDEN
        (hidden_attrs if hidden else attrs)[name] = dict(schema)
    return {
        "resource_type": type_name,
        "properties": props,
        "attributes": attrs,
        # Heat hides these from its schema answer but still takes them in templates
        # (deprecated names, translated to their successors).
        "hidden_properties": hidden_props,
        "hidden_attributes": hidden_attrs,
        "support_status": cls.support_status.to_dict(),
        "description": cls.getdoc(),
    }


def main():
    logging.disable(logging.CRITICAL)
    cfg.CONF([], project="heat", default_config_files=[])
    resources.initialise()
    env = resources.global_env()
    out = {
        "heat_version": importlib.metadata.version("openstack-heat"),
        "generated_by": "scripts/dump_heat_schemas.py",
        "types": {name: schema_of(env, name) for name in TYPES},
    }
    json.dump(out, sys.stdout, indent=1, sort_keys=True, default=str)


if __name__ == "__main__":
    main()
