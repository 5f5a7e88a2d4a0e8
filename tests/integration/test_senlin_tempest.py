"""Senlin's own API and functional tests (senlin-tempest-plugin 1.8.0), run by tempest
against a Warden of its own, as an operator would run them against Senlin.

tempest authenticates with simcloud's Keystone (pre-provisioned credentials), finds
Warden as `clustering` in the catalog and drives it with its own REST client. The tests
that pass today are a floor: one that stops passing fails `make test`; the run prints
the counts and what passes beyond the floor.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest

from tests.support.tempest import Suite, results, run_suite, tempest_workspace

pytestmark = pytest.mark.integration

API: Final = Suite("senlin_tempest_plugin", "tests/api")
FUNCTIONAL: Final = Suite("senlin_tempest_plugin", "tests/functional")
#: API tests Warden passes (the floor; add to it as more pass).
PASSING_API: Final = frozenset(
    {
        "actions.test_action_list.TestActionList.test_action_list",
        "actions.test_action_list.TestActionList.test_action_list_by_status",
        "actions.test_action_list_negative.TestActionListNegativeBadRequest."
        "test_action_list_global_project_false",
        "actions.test_action_list_negative.TestActionListNegativeBadRequest."
        "test_action_list_global_project_not_bool",
        "actions.test_action_list_negative.TestActionListNegativeBadRequest."
        "test_action_list_invalid_marker",
        "actions.test_action_list_negative.TestActionListNegativeBadRequest."
        "test_action_list_invalid_params",
        "actions.test_action_list_negative.TestActionListNegativeBadRequest."
        "test_action_list_invalid_sort",
        "actions.test_action_list_negative.TestActionListNegativeBadRequest."
        "test_action_list_limit_not_int",
        "actions.test_action_show.TestActionShow.test_action_show",
        "actions.test_action_show_negative.TestActionShowNegativeNotFound."
        "test_action_show_not_found",
        "api_versions.test_api_version_show.TestAPIVersionShow.test_API_version_show",
        "api_versions.test_api_version_show_negative.TestAPIVersionShowNegative."
        "test_API_version_show_invalid_version",
        "api_versions.test_api_versions_list.TestAPIVersions.test_API_versions_list",
        "build_info.test_build_info.TestBuildInfo.test_build_info_get",
        "cluster_policies.test_cluster_policy_list_negative.TestClusterPolicyListNegativeBadRequest."
        "test_cluster_policy_list_cluster_not_found",
        "cluster_policies.test_cluster_policy_list_negative.TestClusterPolicyListNegativeBadRequest."
        "test_cluster_policy_list_enabled_not_bool",
        "cluster_policies.test_cluster_policy_list_negative.TestClusterPolicyListNegativeBadRequest."
        "test_cluster_policy_list_invalid_params",
        "cluster_policies.test_cluster_policy_list_negative.TestClusterPolicyListNegativeBadRequest."
        "test_cluster_policy_list_invalid_sort",
        "cluster_policies.test_cluster_policy_show_negative.TestClusterPolicyShowNegativeClusterNotFound."
        "test_cluster_policy_show_cluster_not_found",
        "clusters.test_cluster_action_negative.TestClusterActionNegativeCommon."
        "test_cluster_action_multiple_action_specified",
        "clusters.test_cluster_action_negative.TestClusterActionNegativeCommon."
        "test_cluster_action_no_action_specified",
        "clusters.test_cluster_check.TestClusterActionCheck.test_cluster_action_check",
        "clusters.test_cluster_create_negative.TestClusterCreateNegativeBadRequest."
        "test_cluster_create_cluster_data_not_specified",
        "clusters.test_cluster_create_negative.TestClusterCreateNegativeBadRequest."
        "test_cluster_create_miss_profile",
        "clusters.test_cluster_create_negative.TestClusterCreateNegativeBadRequest."
        "test_cluster_create_profile_invalid",
        "clusters.test_cluster_del_nodes.TestClusterDelNodesNegativeClusterNotFound."
        "test_cluster_del_nodes_cluster_not_found",
        "clusters.test_cluster_del_nodes.TestClusterDelNodesNegativeSizeCheckFailed."
        "test_cluster_del_nodes_cluster_size_check_failed",
        "clusters.test_cluster_delete_negative.TestClusterDeleteNegativeNotFound."
        "test_cluster_delete_not_found",
        "clusters.test_cluster_list.TestClusterList.test_cluster_list",
        "clusters.test_cluster_list_negative.TestClusterListNegativeBadRequest."
        "test_cluster_list_global_project_false",
        "clusters.test_cluster_list_negative.TestClusterListNegativeBadRequest."
        "test_cluster_list_global_project_not_bool",
        "clusters.test_cluster_list_negative.TestClusterListNegativeBadRequest."
        "test_cluster_list_invalid_marker",
        "clusters.test_cluster_list_negative.TestClusterListNegativeBadRequest."
        "test_cluster_list_invalid_params",
        "clusters.test_cluster_list_negative.TestClusterListNegativeBadRequest."
        "test_cluster_list_invalid_sort",
        "clusters.test_cluster_list_negative.TestClusterListNegativeBadRequest."
        "test_cluster_list_limit_not_int",
        "clusters.test_cluster_policy_attach.TestClusterActionPolicyAttach."
        "test_cluster_action_policy_attach",
        "clusters.test_cluster_policy_attach.TestClusterPolicyAttachNegativeInvalidParams."
        "test_cluster_policy_attach_missing_policy_id_param",
        "clusters.test_cluster_policy_attach.TestClusterPolicyAttachNegativeNotFound."
        "test_cluster_policy_attach_cluster_not_found",
        "clusters.test_cluster_policy_attach.TestClusterPolicyAttachNegativePolicyNotFound."
        "test_cluster_policy_attach_policy_not_found",
        "clusters.test_cluster_policy_detach.TestClusterActionPolicyDetach."
        "test_cluster_action_policy_detach",
        "clusters.test_cluster_policy_detach.TestClusterPolicyDetachNegativeInvalidParams."
        "test_cluster_policy_detach_missing_profile_id_param",
        "clusters.test_cluster_policy_detach.TestClusterPolicyDetachNegativeNotFound."
        "test_cluster_policy_detach_cluster_not_found",
        "clusters.test_cluster_recover.TestClusterActionRecover.test_cluster_action_recover",
        "clusters.test_cluster_resize.TestClusterActionResize.test_cluster_action_resize",
        "clusters.test_cluster_resize.TestClusterResizeNegativeClusterNotFound."
        "test_cluster_resize_cluster_not_found",
        "clusters.test_cluster_resize.TestClusterResizeNegativeSizeCheckFailed."
        "test_cluster_resize_break_lower_limit",
        "clusters.test_cluster_resize.TestClusterResizeNegativeSizeCheckFailed."
        "test_cluster_resize_break_upper_limit",
        "clusters.test_cluster_resize.TestClusterResizeNegativeSizeCheckFailed."
        "test_cluster_resize_max_size_under_current_desired_capacity",
        "clusters.test_cluster_resize.TestClusterResizeNegativeSizeCheckFailed."
        "test_cluster_resize_max_size_under_current_min_size",
        "clusters.test_cluster_resize.TestClusterResizeNegativeSizeCheckFailed."
        "test_cluster_resize_min_size_over_current_desired_capacity",
        "clusters.test_cluster_resize.TestClusterResizeNegativeSizeCheckFailed."
        "test_cluster_resize_min_size_over_current_max_size",
        "clusters.test_cluster_scale_in.TestClusterActionScaleIn.test_cluster_action_scale_in",
        "clusters.test_cluster_scale_in.TestClusterScaleInNegativeNotFound."
        "test_cluster_scale_in_cluster_not_found",
        "clusters.test_cluster_scale_out.TestClusterActionScaleOut.test_cluster_action_scale_out",
        "clusters.test_cluster_scale_out.TestClusterScaleOutNegativeNotFound."
        "test_cluster_scale_out_cluster_not_found",
        "clusters.test_cluster_show.TestClusterShow.test_cluster_show",
        "clusters.test_cluster_show_negative.TestClusterShowNegativeNotFound."
        "test_cluster_show_cluster_not_found",
        "clusters.test_cluster_update_negative.TestClusterUpdateNegativeInvalidParam."
        "test_cluster_update_cluster_empty_param",
        "clusters.test_cluster_update_negative.TestClusterUpdateNegativeInvalidParam."
        "test_cluster_update_cluster_invalid_param",
        "clusters.test_cluster_update_negative.TestClusterUpdateNegativeProfileNotFound."
        "test_cluster_update_profile_not_found",
        "events.test_event_list.TestEventList.test_event_list",
        "events.test_event_list_negative.TestEventListNegativeBadRequest."
        "test_event_list_global_project_false",
        "events.test_event_list_negative.TestEventListNegativeBadRequest."
        "test_event_list_global_project_not_bool",
        "events.test_event_list_negative.TestEventListNegativeBadRequest."
        "test_event_list_invalid_marker",
        "events.test_event_list_negative.TestEventListNegativeBadRequest."
        "test_event_list_invalid_params",
        "events.test_event_list_negative.TestEventListNegativeBadRequest."
        "test_event_list_invalid_sort",
        "events.test_event_list_negative.TestEventListNegativeBadRequest."
        "test_event_list_limit_not_int",
        "nodes.test_node_check.TestNodeCheckNegative.test_node_not_found",
        "nodes.test_node_delete_negative.TestNodeDeleteNegativeNotFound.test_node_delete_not_found",
        "nodes.test_node_list_negative.TestNodeListNegativeBadRequest."
        "test_node_list_cluster_not_found",
        "nodes.test_node_list_negative.TestNodeListNegativeBadRequest."
        "test_node_list_global_project_false",
        "nodes.test_node_list_negative.TestNodeListNegativeBadRequest."
        "test_node_list_global_project_not_bool",
        "nodes.test_node_list_negative.TestNodeListNegativeBadRequest."
        "test_node_list_invalid_marker",
        "nodes.test_node_list_negative.TestNodeListNegativeBadRequest."
        "test_node_list_invalid_params",
        "nodes.test_node_list_negative.TestNodeListNegativeBadRequest.test_node_list_invalid_sort",
        "nodes.test_node_list_negative.TestNodeListNegativeBadRequest."
        "test_node_list_limit_negative",
        "nodes.test_node_list_negative.TestNodeListNegativeBadRequest.test_node_list_limit_not_int",
        "nodes.test_node_recover.TestNodeRecoverNegative.test_node_not_found",
        "nodes.test_node_show_negative.TestNodeShowNegativeNotFound.test_node_show_not_found",
        "policies.test_policy_create_negative.TestPolicyCreateNegativeBadRequest."
        "test_policy_create_invalid_param",
        "policies.test_policy_create_negative.TestPolicyCreateNegativeBadRequest."
        "test_policy_create_name_not_specified",
        "policies.test_policy_create_negative.TestPolicyCreateNegativeBadRequest."
        "test_policy_create_policy_data_not_specified",
        "policies.test_policy_delete.TestPolicyDelete.test_policy_delete",
        "policies.test_policy_delete_negative.TestPolicyDeleteNegativeNotFound."
        "test_policy_delete_not_found",
        "policies.test_policy_list.TestPolicyList.test_policy_list",
        "policies.test_policy_list_negative.TestPolicyListNegativeBadRequest."
        "test_policy_list_global_project_false",
        "policies.test_policy_list_negative.TestPolicyListNegativeBadRequest."
        "test_policy_list_global_project_not_bool",
        "policies.test_policy_list_negative.TestPolicyListNegativeBadRequest."
        "test_policy_list_invalid_marker",
        "policies.test_policy_list_negative.TestPolicyListNegativeBadRequest."
        "test_policy_list_invalid_params",
        "policies.test_policy_list_negative.TestPolicyListNegativeBadRequest."
        "test_policy_list_invalid_sort",
        "policies.test_policy_list_negative.TestPolicyListNegativeBadRequest."
        "test_policy_list_limit_not_int",
        "policies.test_policy_show.TestPolicyShow.test_policy_show",
        "policies.test_policy_show_negative.TestPolicyShowNegativeNotFound."
        "test_policy_show_not_found",
        "policies.test_policy_update.TestPolicyUpdate.test_policy_update",
        "policies.test_policy_update_negative.TestPolicyUpdateNegativeBadRequest."
        "test_policy_update_spec_not_updatable",
        "policies.test_policy_update_negative.TestPolicyUpdateNegativeNotFound."
        "test_policy_update_policy_empty_param",
        "policies.test_policy_update_negative.TestPolicyUpdateNegativeNotFound."
        "test_policy_update_policy_invalid_param",
        "policies.test_policy_update_negative.TestPolicyUpdateNegativeNotFound."
        "test_policy_update_policy_not_found",
        "policy_types.test_policy_type_list.TestPolicyTypeList.test_policy_type_list",
        "policy_types.test_policy_type_list.TestPolicyTypeList.test_policy_type_list_v1_5",
        "policy_types.test_policy_type_show.TestPolicyTypeShow.test_policy_type_show",
        "policy_types.test_policy_type_show.TestPolicyTypeShow.test_policy_type_show_v1_5",
        "policy_types.test_policy_type_show_negative.TestPolicyTypeShowNegative."
        "test_policy_type_show_not_found",
        "profile_types.test_profile_type_list.TestProfileTypeList.test_profile_type_list_v1_5",
        "profile_types.test_profile_type_show.TestProfileTypeShow.test_profile_type_show",
        "profile_types.test_profile_type_show.TestProfileTypeShow.test_profile_type_show_v1_5",
        "profile_types.test_profile_type_show_negative.TestProfileTypeShowNegativeNotFound."
        "test_profile_type_show_not_found",
        "profiles.test_profile_create.TestProfileCreate.test_profile_create",
        "profiles.test_profile_create_negative.TestProfileCreateNegativeBadRequest."
        "test_profile_create_invalid_param",
        "profiles.test_profile_create_negative.TestProfileCreateNegativeBadRequest."
        "test_profile_create_name_not_specified",
        "profiles.test_profile_create_negative.TestProfileCreateNegativeBadRequest."
        "test_profile_create_profile_data_not_specified",
        "profiles.test_profile_create_negative.TestProfileCreateNegativeBadRequest."
        "test_profile_create_spec_not_specified",
        "profiles.test_profile_delete.TestProfileDelete.test_profile_delete",
        "profiles.test_profile_delete_negative.TestProfileDeleteNegativeNotFound."
        "test_profile_delete_not_found",
        "profiles.test_profile_list.TestProfileList.test_profile_list",
        "profiles.test_profile_list_negative.TestProfileListNegativeBadRequest."
        "test_profile_list_global_project_false",
        "profiles.test_profile_list_negative.TestProfileListNegativeBadRequest."
        "test_profile_list_global_project_not_bool",
        "profiles.test_profile_list_negative.TestProfileListNegativeBadRequest."
        "test_profile_list_invalid_marker",
        "profiles.test_profile_list_negative.TestProfileListNegativeBadRequest."
        "test_profile_list_invalid_params",
        "profiles.test_profile_list_negative.TestProfileListNegativeBadRequest."
        "test_profile_list_invalid_sort",
        "profiles.test_profile_list_negative.TestProfileListNegativeBadRequest."
        "test_profile_list_limit_not_int",
        "profiles.test_profile_show.TestProfileShow.test_profile_show",
        "profiles.test_profile_show_negative.TestProfileShowNegativeNotFound."
        "test_profile_show_not_found",
        "profiles.test_profile_update.TestProfileUpdate.test_profile_update",
        "profiles.test_profile_update_negative.TestProfileUpdateNegativeBadRequest."
        "test_profile_update_no_property_updated",
        "profiles.test_profile_update_negative.TestProfileUpdateNegativeBadRequest."
        "test_profile_update_spec_not_updatable",
        "profiles.test_profile_update_negative.TestProfileUpdateNegativeNotFound."
        "test_profile_update_profile_no_param",
        "profiles.test_profile_update_negative.TestProfileUpdateNegativeNotFound."
        "test_profile_update_profile_not_found",
        "receivers.test_receiver_create.TestReceiverCreate.test_receiver_create",
        "receivers.test_receiver_create_negative.TestReceiverCreateNegativeBadRequest."
        "test_receiver_create_name_length_out",
        "receivers.test_receiver_create_negative.TestReceiverCreateNegativeBadRequest."
        "test_receiver_create_receiver_data_not_specified",
        "receivers.test_receiver_create_negative.TestReceiverCreateNegativeBadRequest."
        "test_receiver_create_unsupported_receiver_type",
        "receivers.test_receiver_create_negative.TestReceiverCreateNegativeInvalidAction."
        "test_receiver_create_invalid_action",
        "receivers.test_receiver_delete.TestReceiverDelete.test_receiver_delete",
        "receivers.test_receiver_delete_negative.TestReceiverDeleteNegativeNotFound."
        "test_receiver_delete_not_found",
        "receivers.test_receiver_list.TestReceiverList.test_receiver_list",
        "receivers.test_receiver_list.TestReceiverList.test_receiver_list_by_action",
        "receivers.test_receiver_list.TestReceiverList.test_receiver_list_by_cluster",
        "receivers.test_receiver_list_negative.TestReceiverListNegativeBadRequest."
        "test_receiver_list_global_project_false",
        "receivers.test_receiver_list_negative.TestReceiverListNegativeBadRequest."
        "test_receiver_list_global_project_not_bool",
        "receivers.test_receiver_list_negative.TestReceiverListNegativeBadRequest."
        "test_receiver_list_invalid_marker",
        "receivers.test_receiver_list_negative.TestReceiverListNegativeBadRequest."
        "test_receiver_list_invalid_params",
        "receivers.test_receiver_list_negative.TestReceiverListNegativeBadRequest."
        "test_receiver_list_invalid_sort",
        "receivers.test_receiver_list_negative.TestReceiverListNegativeBadRequest."
        "test_receiver_list_limit_not_int",
        "receivers.test_receiver_show.TestReceiverShow.test_receiver_show",
        "receivers.test_receiver_show_negative.TestReceiverShowNegativeNotFound."
        "test_receiver_show_not_found",
        "receivers.test_receiver_update.TestReceiverUpdate.test_receiver_update",
        "receivers.test_receiver_update_negative.TestReceiverUpdateNegativeNotFound."
        "test_receiver_update_receiver_no_param",
        "receivers.test_receiver_update_negative.TestReceiverUpdateNegativeNotFound."
        "test_receiver_update_receiver_not_found",
        "receivers.test_webhook_trigger.TestWebhookTrigger.test_webhook_trigger",
    }
)
#: Functional tests Warden passes.
PASSING_FUNCTIONAL: Final = frozenset(
    {
        "test_batch_policy.TestBatchPolicy.test_batch_policy",
        "test_cluster_basic.TestClusterUpdate.test_cluster_update_profile",
        "test_cluster_scaling.TestClusterResize.test_cluster_resize_basic",
        "test_cluster_scaling.TestClusterResize.test_cluster_resize_constraint_adjusting",
        "test_cluster_scaling.TestClusterResize.test_cluster_resize_constraint_breaking",
        "test_deletion_policy.TestDeletionPolicy.test_deletion_policy",
        "test_deletion_policy.TestDeletionPolicy.test_deletion_policy_with_hook_timeout",
        "test_receiver.TestReceiver.test_webhook",
    }
)


def test_the_result_parser_reads_senlin_lines() -> None:
    line = (
        "{0} senlin_tempest_plugin.tests.api.clusters.test_cluster_show.TestClusterShow."
        "test_cluster_show[id-a,smoke] [0.5s] ... ok"
    )
    assert results(line, API) == {
        "clusters.test_cluster_show.TestClusterShow.test_cluster_show": "ok"
    }


@pytest.mark.timeout(900)
async def test_senlin_api_tests_that_pass_keep_passing(own_warden: str, tmp_path: Path) -> None:
    run = run_suite(tempest_workspace(tmp_path / "tempest", own_warden, API), API, concurrency=1)
    lost = run.report("senlin-tempest-plugin api", PASSING_API)
    assert len(run.found) >= 300, run.tail
    assert not lost, f"no longer passing: {lost}\n{run.tail}"


@pytest.mark.timeout(900)
async def test_senlin_functional_tests_that_pass_keep_passing(
    own_warden: str, tmp_path: Path
) -> None:
    workspace = tempest_workspace(tmp_path / "tempest", own_warden, FUNCTIONAL)
    run = run_suite(workspace, FUNCTIONAL, concurrency=1)
    lost = run.report("senlin-tempest-plugin functional", PASSING_FUNCTIONAL)
    assert len(run.found) >= 20, run.tail
    assert not lost, f"no longer passing: {lost}\n{run.tail}"
