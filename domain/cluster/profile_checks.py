"""What `POST /v1/profiles/validate` looks up of an `os.nova.server` spec, in Senlin's words.

Senlin's `profile_validate` (and only it: a profile create does not) runs the server
profile's `do_validate`: the availability zone, flavor, image and key pair, then each
network entry's network, subnet, port, floating network and security groups must exist.
The worker looks them up (`CloudChecksWorkflow`); the first missing one is Senlin's 400.
"""

from __future__ import annotations

from domain.cluster.profiles import ServerProperties
from domain.hot.cloud_lookups import AVAILABILITY_ZONE, ConstraintCheck


def _check(constraint: str, value: str, field: str, missing: str) -> ConstraintCheck:
    return ConstraintCheck(constraint=constraint, value=value, field=field, missing=missing)


def server_profile_checks(props: ServerProperties) -> list[ConstraintCheck]:
    """The lookups of Senlin's `ServerProfile.do_validate`, in its order."""
    field = "profile.spec.properties"
    checks = []
    if props.availability_zone:
        zone = props.availability_zone
        missing = f"The specified availability_zone '{zone}' could not be found"
        checks.append(_check(AVAILABILITY_ZONE, zone, f"{field}.availability_zone", missing))
    for key, constraint, value in (
        ("flavor", "nova.flavor", props.flavor),
        ("image", "glance.image", props.image),
        ("key_name", "nova.keypair", props.key_name),
    ):
        if value:
            missing = f"The specified {key} '{value}' could not be found."
            checks.append(_check(constraint, value, f"{field}.{key}", missing))
    for i, net in enumerate(props.networks or ()):
        where = f"{field}.networks[{i}]"
        for key, value, missing in (
            ("network", net.network, f"The specified network {net.network} could not be found."),
            ("subnet", net.subnet, f"The specified subnet {net.subnet} could not be found."),
            ("port", net.port, f"No Port found for {net.port}"),
            (
                "floating_network",
                net.floating_network,
                f"The floating network {net.floating_network} could not be found.",
            ),
        ):
            if value:
                kind = "network" if key == "floating_network" else key
                checks.append(_check(f"neutron.{kind}", value, f"{where}.{key}", missing))
        for group in net.security_groups or ():
            missing = f"No SecurityGroup found for {group}"
            checks.append(
                _check("neutron.security_group", group, f"{where}.security_groups", missing)
            )
    return checks
