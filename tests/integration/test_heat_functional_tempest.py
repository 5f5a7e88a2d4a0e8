"""Heat's own functional tests (heat-tempest-plugin 3.0.0), run by tempest against a
Warden of its own, as an operator would run them against Heat.

tempest authenticates with simcloud's Keystone (pre-provisioned credentials), finds
Warden as `orchestration` in the catalog, and drives it with python-heatclient; the
templates make servers, networks, subnets and ports on simcloud. The tests that pass
today are a floor: one that stops passing fails `make test`. The others are what is
left to build (software config, wait conditions, event sinks…); the
run prints the counts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest

from tests.support.tempest import Suite, results, run_suite, tempest_workspace

pytestmark = pytest.mark.integration

#: Functional tests Warden passes (the floor; add to it as more pass).
PASSING: Final = frozenset(
    {
        "test_stack_events.StackEventsTest.test_event",
        "test_create_update_neutron_trunk.UpdateTrunkTest.test_add_a_second_sub_port",
        "test_create_update_neutron_trunk.UpdateTrunkTest.test_add_first_sub_port",
        "test_create_update_neutron_trunk.UpdateTrunkTest.test_remove_last_sub_port_from_trunk",
        "test_create_update_neutron_trunk.UpdateTrunkTest.test_remove_sub_port_from_trunk",
        "test_create_update_neutron_trunk.UpdateTrunkTest.test_update_existing_sub_port_on_trunk",
        "test_create_update_neutron_trunk.UpdateTrunkTest.test_update_trunk_name_and_description",
        "test_extra_route_set.ExtraRouteSetTest.test_create_many",
        "test_extra_route_set.ExtraRouteSetTest.test_create_no",
        "test_extra_route_set.ExtraRouteSetTest.test_create_one",
        "test_extra_route_set.ExtraRouteSetTest.test_update_many",
        "test_extra_route_set.ExtraRouteSetTest.test_update_no",
        "test_extra_route_set.ExtraRouteSetTest.test_update_one",
        "test_hooks.HooksTest.test_hook_pre_create",
        "test_hooks.HooksTest.test_hook_pre_create_nested",
        "test_hooks.HooksTest.test_hook_pre_create_wildcard",
        "test_hooks.HooksTest.test_hook_pre_update_in_place",
        "test_hooks.HooksTest.test_hook_pre_update_nochange",
        "test_hooks.HooksTest.test_hook_pre_update_replace",
        "test_unicode_template.StackUnicodeTemplateTest.test_create_stack",
        "test_external_ref.ExternalReferencesTest.test_create_with_external_ref",
        "test_external_ref.ExternalReferencesTest.test_update_with_external_ref",
        "test_external_ref.ExternalReferencesTest.test_update_stack_contain_external_ref",
        "test_preview.StackPreviewTest.test_basic_fail",
        "test_preview.StackPreviewTest.test_basic_pass",
        "test_preview.StackPreviewTest.test_nested_pass",
        "test_preview.StackPreviewTest.test_res_group_with_nested_template",
        "test_unicode_template.StackUnicodeTemplateTest.test_stack_preview",
        "test_template_validate.StackTemplateValidateTest.test_template_validate_basic",
        "test_template_validate.StackTemplateValidateTest."
        "test_template_validate_basic_required_param",
        "test_template_validate.StackTemplateValidateTest.test_template_validate_nested_off",
        "test_template_validate.StackTemplateValidateTest.test_template_validate_nested_on",
        "test_template_validate.StackTemplateValidateTest.test_template_validate_nested_on_multiple",
        "test_template_validate.StackTemplateValidateTest.test_template_validate_override_default",
        "test_template_validate.StackTemplateValidateTest.test_template_validate_override_none",
        "test_template_validate.StackTemplateValidateTest.test_template_validate_parameter_groups",
        "test_unicode_template.StackUnicodeTemplateTest.test_template_validate_basic",
        "test_unicode_template.StackUnicodeTemplateTest.test_template_validate_override_default",
        "test_stack_tags.StackTagTest.test_hidden_stack",
        "test_stack_tags.StackTagTest.test_stack_tag",
        "test_create_update_neutron_port.UpdatePortTest.test_update_remove_ip",
        "test_create_update_neutron_subnet.UpdateSubnetTest.test_update_allocation_pools",
        "test_create_update_neutron_subnet.UpdateSubnetTest.test_update_allocation_pools_to_empty",
        "test_create_update_neutron_subnet.UpdateSubnetTest.test_update_gateway_ip",
        "test_create_update_neutron_subnet.UpdateSubnetTest.test_update_gateway_ip_to_empty",
        "test_create_update_neutron_subnet.UpdateSubnetTest.test_update_to_no_allocation_pools",
        "test_create_update_neutron_subnet.UpdateSubnetTest.test_update_to_no_gateway_ip",
        "test_encrypted_parameter.EncryptedParametersTest.test_db_encryption",
        "test_nova_server_networks.CreateServerTest.test_create_server_with_port",
        "test_nova_server_networks.CreateServerTest.test_create_server_with_subnet_fixed_ip_sec_group",
        "test_nova_server_networks.CreateServerTest.test_create_update_server_with_subnet",
        "test_nova_server_networks.UpdateServerNetworksTest.test_create_update_server_add_network",
        "test_nova_server_networks.UpdateServerNetworksTest."
        "test_create_update_server_add_same_fixed_ip",
        "test_nova_server_networks.UpdateServerNetworksTest.test_create_update_server_add_subnet",
        "test_nova_server_networks.UpdateServerNetworksTest."
        "test_create_update_server_multi_networks_swaps",
        "test_nova_server_networks.UpdateServerNetworksTest."
        "test_create_update_server_swap_network_port",
        "test_nova_server_networks.UpdateServerNetworksTest."
        "test_create_update_server_swap_network_subnet",
        "test_nova_server_networks.UpdateServerNetworksTest."
        "test_create_update_server_swap_subnet_network",
        "test_remote_stack.RemoteStackTest.test_remote_stack_alone",
        "test_remote_stack.RemoteStackTest.test_stack_create",
        "test_remote_stack.RemoteStackTest.test_stack_create_bad_region",
        "test_remote_stack.RemoteStackTest.test_stack_resource_validation_fail",
        "test_remote_stack.RemoteStackTest.test_stack_suspend_resume",
        "test_remote_stack.RemoteStackTest.test_stack_update",
        "test_resources_list.ResourcesList.test_filtering_with_depend",
        "test_resources_list.ResourcesList.test_required_by",
        "test_stack_outputs.StackOutputsTest.test_outputs",
        "test_stack_outputs.StackOutputsTest.test_outputs_update_new_resource",
        "test_stack_outputs.StackOutputsTest.test_output_error_nested",
        "test_template_validate.StackTemplateValidateTest.test_template_validate_fail_version",
        "test_templates.TemplateAPITest.test_get_stack_template",
        "test_templates.TemplateAPITest.test_resource_types",
        "test_templates.TemplateAPITest.test_show_resource_template",
        "test_software_config.ParallelDeploymentsTest.test_deployments_metadata",
        "test_software_config.ParallelDeploymentsTest.test_deployments_timeout_failed",
        "test_event_sinks.ZaqarEventSinkTest.test_events",
    }
)
#: Tests that cannot pass here, not run: each would only spend its wait (60 s and more)
#: failing.
NOT_RUN: Final = {
    "test_os_wait_condition.OSWaitCondition.test_create_stack_with_multi_signal_waitcondition": (
        "its server's user_data must run in a guest to signal (simcloud and Nova's fake "
        "driver boot no guest)"
    ),
    "test_waitcondition.ZaqarWaitConditionTest.test_signal_queues": (
        "ZAQAR_SIGNAL: Warden makes no stack user and no queue for a handle yet"
    ),
    "test_software_config.ZaqarSignalTransportTest.test_signal_queues": (
        "ZAQAR_MESSAGE and ZAQAR_SIGNAL: needs os-collect-config polling a queue Warden "
        "does not make yet"
    ),
}
SUITE: Final = Suite("heat_tempest_plugin", "tests/functional", NOT_RUN)


def test_the_result_parser_reads_tempest_lines() -> None:
    lines = (
        "{1} heat_tempest_plugin.tests.functional.test_templates.TemplateAPITest."
        "test_resource_types[id-a1b2] [0.009846s] ... ok\n"
        "{0} heat_tempest_plugin.tests.functional.test_x.XTest.test_y ... SKIPPED: no admin"
    )
    assert results(lines, SUITE) == {
        "test_templates.TemplateAPITest.test_resource_types": "ok",
        "test_x.XTest.test_y": "SKIPPED",
    }


@pytest.mark.timeout(900)
async def test_heat_functional_tests_that_pass_keep_passing(
    own_warden: str, tmp_path: Path
) -> None:
    run = run_suite(tempest_workspace(tmp_path / "tempest", own_warden, SUITE), SUITE)
    lost = run.report("heat-tempest-plugin functional", PASSING)
    assert len(run.found) + len(NOT_RUN) >= 80, run.tail
    assert not set(NOT_RUN) & set(run.found), "a test that is not to run ran"
    assert not lost, f"no longer passing: {lost}\n{run.tail}"
