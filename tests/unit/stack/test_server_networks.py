"""Heat's in-place interface update of a server (domain/server_networks.py), on the cases
heat-tempest-plugin's UpdateServerNetworksTest and CreateServerTest make."""

from __future__ import annotations

from typing import Any

import pytest

from domain.hot.template import Template, load_template
from domain.server_networks import Interface, attachable_in_place, plan_interfaces
from domain.stack.types.neutron.dependencies import EVERY_SUBNET_PATCH

NET, SUBNET_A, SUBNET_B = "net-1", "subnet-a", "subnet-b"
PORT0 = Interface(port="port-0", network=NET, subnet=SUBNET_A, fixed_ip="11.11.11.5")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ([{"network": NET}], [{"subnet": SUBNET_A}]),  # swap network for subnet
        ([{"network": NET}], [{"port": "port-0"}]),  # swap network for its port
        ([{"subnet": SUBNET_A}], [{"network": NET}]),  # swap subnet for network
        ([{"network": NET}], [{"network": NET, "subnet": SUBNET_A}]),  # add the subnet
        ([{"network": NET}], [{"network": NET, "fixed_ip": "11.11.11.5"}]),  # its own address
        ([{"subnet": SUBNET_A}], [{"network": NET, "subnet": SUBNET_A}]),  # add the network
        ([{"network": NET}], [{"network": NET, "fixed_ip": None, "port": ""}]),  # blanks
    ],
)
def test_an_entry_that_still_describes_the_interface_keeps_its_port(
    old: list[dict[str, Any]], new: list[dict[str, Any]]
) -> None:
    plan = plan_interfaces(old, new, [PORT0])

    assert (plan.detach, plan.attach) == ((), ())


def test_a_new_subnet_detaches_the_old_interface_and_attaches_one_on_it() -> None:
    plan = plan_interfaces([{"subnet": SUBNET_A}], [{"subnet": SUBNET_B}], [PORT0])

    assert plan.detach == ("port-0",)
    assert plan.attach == ({"subnet": SUBNET_B},)


def test_a_retried_update_does_not_attach_twice() -> None:
    attached = Interface(port="port-1", network=NET, subnet=SUBNET_B, fixed_ip="12.12.12.3")

    plan = plan_interfaces([{"subnet": SUBNET_A}], [{"subnet": SUBNET_B}], [attached])

    assert (plan.detach, plan.attach) == ((), ())


def test_added_and_removed_entries_attach_and_detach_only_those() -> None:
    other = Interface(port="port-9", network="net-9", subnet="subnet-9", fixed_ip="10.9.0.4")
    by_hand = Interface(port="port-h", network="net-h", subnet="subnet-h", fixed_ip="10.8.0.4")
    old = [{"network": NET}, {"network": "net-9"}]
    new = [{"network": NET}, {"network": "net-7", "fixed_ip": "10.7.0.9"}]

    plan = plan_interfaces(old, new, [PORT0, other, by_hand])

    assert plan.detach == ("port-9",)  # the hand-attached interface is not Heat's
    assert plan.attach == ({"network": "net-7", "fixed_ip": "10.7.0.9"},)


def test_from_no_entries_nova_s_first_choice_gives_way_and_to_none_it_comes_back() -> None:
    to_entries = plan_interfaces([], [{"network": "net-7"}], [PORT0])
    to_none = plan_interfaces([{"network": NET}], [], [PORT0])

    assert (to_entries.detach, to_entries.attach) == (("port-0",), ({"network": "net-7"},))
    assert (to_none.detach, to_none.attach) == (("port-0",), ({},))


@pytest.mark.parametrize(
    ("networks", "in_place"),
    [
        (None, True),
        ([], True),
        ([{"network": NET, "fixed_ip": "10.0.0.4", "subnet": None}], True),
        ([{"port": "p"}, {"subnet": SUBNET_A}], True),
        ([{"network": NET, "floating_ip": "fip-1"}], False),
        ([{"network": NET, "tag": "nic1"}], False),
        ([{"allocate_network": "auto"}], False),
        ("auto", False),
    ],
)
def test_only_nics_of_ports_networks_subnets_and_addresses_change_in_place(
    networks: Any, in_place: bool
) -> None:
    assert attachable_in_place(networks) is in_place


def test_an_interface_reads_novas_attachment() -> None:
    attachment = {
        "port_id": "port-0",
        "net_id": NET,
        "fixed_ips": [{"subnet_id": SUBNET_A, "ip_address": "11.11.11.5"}],
        "mac_addr": "fa:16:3e:00:00:01",
    }

    assert Interface.from_api(attachment) == PORT0


def _template(networks: list[dict[str, Any]]) -> Template:
    net = {"type": "OS::Neutron::Net"}
    return load_template(
        {
            "heat_template_version": "2021-04-16",
            "resources": {
                "net_a": net,
                "net_b": net,
                "sub_a": {
                    "type": "OS::Neutron::Subnet",
                    "properties": {"network": {"get_resource": "net_a"}, "cidr": "10.1.0.0/24"},
                },
                "sub_b": {
                    "type": "OS::Neutron::Subnet",
                    "properties": {"network": {"get_resource": "net_b"}, "cidr": "10.2.0.0/24"},
                },
                "server": {
                    "type": "OS::Nova::Server",
                    "properties": {"image": "cirros", "flavor": "m1.tiny", "networks": networks},
                },
            },
        }
    )


@pytest.mark.parametrize(
    ("networks", "subnets"),
    [
        ([{"network": {"get_resource": "net_a"}}], {"sub_a"}),
        ([{"port": "a-port-made-elsewhere"}], {"sub_a", "sub_b"}),
        ([{"subnet": "some-subnet"}], {"sub_a", "sub_b"}),
        ([], set()),
    ],
)
def test_a_server_waits_for_the_subnets_heat_makes_it_wait_for(
    networks: list[dict[str, Any]], subnets: set[str]
) -> None:
    requires = _template(networks).dependencies()["server"]

    assert {r for r in requires if r.startswith("sub_")} == subnets


def test_a_workflow_recorded_before_the_patch_keeps_its_graph() -> None:
    template = _template([{"port": "a-port-made-elsewhere"}])

    before = template.dependencies(lambda patch: patch != EVERY_SUBNET_PATCH)["server"]
    after = template.dependencies(lambda patch: True)["server"]

    assert (before, after) == (frozenset(), frozenset({"sub_a", "sub_b"}))
