"""`senlin.policy.loadbalance`: its spec as Senlin reads it, and the pure rules of
membership (`domain/cluster/policies/loadbalance.py`)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime

import pytest

from domain.cluster.policies.loadbalance import (
    LB_MEMBER,
    LbResources,
    LoadBalancePolicyProperties,
    lb_binding,
    member_address,
    with_member,
)
from domain.cluster.policies.specs import ensure_profile_supports, parse_policy_spec
from domain.cluster.state import AttachedPolicy
from domain.errors import InvalidRequest, NotFound
from tests.support.lb_spec import LB_SPEC


def test_senlin_tempest_plugins_spec_parses_with_senlins_defaults() -> None:
    parsed = parse_policy_spec(LB_SPEC)
    props = parsed.properties
    assert isinstance(props, LoadBalancePolicyProperties)
    assert parsed.version == "1.1"
    assert props.health_monitor is not None and props.health_monitor.delay == 1  # "1" read
    assert (props.pool.subnet, props.pool.protocol_port, props.lb_status_timeout) == (
        "private-subnet",
        80,
        300,
    )
    minimal = {"pool": {"subnet": "s"}, "vip": {"network": "n"}}
    props = LoadBalancePolicyProperties.model_validate(minimal)
    assert (props.pool.protocol, props.pool.lb_method, props.vip.protocol_port) == (
        "HTTP",
        "ROUND_ROBIN",
        80,
    )
    assert props.health_monitor is None and props.loadbalancer is None


@pytest.mark.parametrize("version", ["1.0", 1.0, "1.2", "1.3"])
def test_each_version_senlin_shipped_is_accepted(version: object) -> None:
    assert parse_policy_spec({**LB_SPEC, "version": version}).version == str(version)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p["pool"].pop("subnet"), "spec.properties.pool.subnet: Field required"),
        (lambda p: p.pop("vip"), "At least one of VIP Subnet or Network must be defined."),
        (lambda p: p["pool"].update(protocol="UDP"), "spec.properties.pool.protocol"),
        (lambda p: p["health_monitor"].update(type="ICMP"), "health_monitor.type"),
        (lambda p: p.update(lb_status_timeout=0), "lb_status_timeout"),
        (lambda p: p["vip"].update(colour="red"), "spec.properties.vip.colour"),
    ],
)
def test_a_bad_spec_is_a_400_naming_its_path(change: object, message: str) -> None:
    spec = copy.deepcopy(LB_SPEC)
    change(spec["properties"])  # type: ignore[operator]
    with pytest.raises(InvalidRequest, match=message.replace(".", r"\.")):
        parse_policy_spec(spec)


def test_an_unknown_version_is_refused() -> None:
    with pytest.raises(InvalidRequest, match=r"unsupported version '2\.0'"):
        parse_policy_spec({**LB_SPEC, "version": "2.0"})
    with pytest.raises(NotFound):
        parse_policy_spec({**LB_SPEC, "type": "senlin.policy.lb"})


def test_only_server_clusters_take_it() -> None:
    props = parse_policy_spec(LB_SPEC).properties
    ensure_profile_supports(props, "os.nova.server-1.0")
    with pytest.raises(InvalidRequest, match=r"Policy not applicable on profile type: os\.heat"):
        ensure_profile_supports(props, "os.heat.stack-1.0")


def test_a_members_address_is_the_nodes_on_the_pool_subnets_network() -> None:
    addresses = {
        "public": [{"addr": "172.24.4.9", "version": 4}],
        "private": [{"addr": "fd00::5", "version": 6}, {"addr": "10.0.0.5", "version": 4}],
    }
    assert member_address(addresses, "private", 4) == "10.0.0.5"
    assert member_address(addresses, "private", 6) == "fd00::5"
    with pytest.raises(InvalidRequest, match="not in subnet's network other"):
        member_address(addresses, "other", 4)
    with pytest.raises(InvalidRequest, match="no IPv6 address on network public"):
        member_address(addresses, "public", 6)


def test_the_binding_children_see_is_the_enabled_one_with_what_it_made() -> None:
    made = LbResources(loadbalancer="lb", pool="pool", listener="l", vip_address="10.0.0.2")
    lb = AttachedPolicy(
        policy_id="p1",
        name="lb",
        type="senlin.policy.loadbalance",
        properties=LB_SPEC["properties"],
        data=made.model_dump(mode="json"),
    )
    other = AttachedPolicy(policy_id="p0", name="d", type="senlin.policy.deletion")
    binding = lb_binding([other, lb])
    assert binding is not None and binding.resources == made and binding.timeout_s == 300
    assert lb_binding([lb.model_copy(update={"enabled": False})]) is None
    assert lb_binding([lb.model_copy(update={"data": {}})]) is None  # attach still running


def test_a_nodes_member_id_is_kept_in_its_data() -> None:
    data = {"marked": {"at": datetime(2026, 1, 1, tzinfo=UTC).isoformat()}}
    joined = with_member(data, "m1")
    assert joined == {**data, LB_MEMBER: "m1"}
    assert with_member(joined, None) == data
