"""A node's `details`, as Senlin's `ServerProfile.do_get_details` builds them."""

from __future__ import annotations

from domain.cluster.server_details import details_error, flavor_name, server_details

#: Nova's `GET /servers/{id}` sample (api-ref, 2.1), trimmed.
SERVER = {
    "id": "9168b536-cd40-4630-b43f-b259807c6e87",
    "name": "node-1",
    "status": "ACTIVE",
    "image": {"id": "70a599e0-31e7-49b7-b260-868f441e862b", "links": []},
    "flavor": {"id": "1", "links": []},
    "addresses": {"private": [{"addr": "10.0.0.5", "version": 4}]},
    "security_groups": [{"name": "default"}, {"name": "default"}],
    "metadata": {"cluster_node_id": "n1"},
    "key_name": None,
    "OS-EXT-STS:task_state": None,
    "OS-EXT-AZ:availability_zone": "nova",
    "os-extended-volumes:volumes_attached": [{"id": "v1"}],
    "user_id": "u1",
}


def test_details_carry_senlins_keys_with_ids_for_image_and_flavor() -> None:
    details = server_details(SERVER)
    assert details["status"] == "ACTIVE" and details["name"] == "node-1"
    assert (details["image"], details["flavor"]) == ("70a599e0-31e7-49b7-b260-868f441e862b", "1")
    assert details["addresses"] == SERVER["addresses"]
    assert details["security_groups"] == "default"  # one group, once per NIC: shown once
    assert details["attached_volumes"] == ["v1"]
    assert details["OS-EXT-STS:task_state"] == "-"  # Senlin's dash for no value
    assert "user_id" not in details  # not one of Senlin's keys
    assert list(details) == sorted(details)


def test_several_groups_are_a_list_and_none_an_empty_string() -> None:
    groups = [{"name": "web"}, {"name": "default"}]
    assert server_details({**SERVER, "security_groups": groups})["security_groups"] == [
        "default",
        "web",
    ]
    assert server_details({**SERVER, "security_groups": []})["security_groups"] == ""
    assert server_details({"id": "x", "image": "", "flavor": {"id": "2"}})["image"] == ""


def test_an_unreadable_server_is_senlins_error_entry() -> None:
    assert details_error(500, "boom") == {"Error": {"code": 500, "message": "boom"}}


def test_a_flavor_shown_without_its_id_is_found_by_name() -> None:
    embedded = {**SERVER, "flavor": {"original_name": "m1.tiny", "vcpus": 1}}
    assert flavor_name(embedded) == "m1.tiny" and flavor_name(SERVER) is None
    assert server_details(embedded, "1")["flavor"] == "1"
