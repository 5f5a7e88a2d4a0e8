"""Heat's own scenario tests (heat-tempest-plugin 3.0.0), run by tempest against a
Warden of its own, as the functional tests are (tests/integration/
test_heat_functional_tempest.py): a stack of a server with its network, port, key pair,
volume and attachment; a remote stack holding a nested stack of a template resource.
The others need what the embedded cloud cannot have, each named in `NOT_RUN`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest

from tests.support.tempest import Suite, run_suite, tempest_workspace

pytestmark = pytest.mark.integration

#: Scenario tests Warden passes (the floor).
PASSING: Final = frozenset(
    {
        "test_base_resources.BasicResourcesTest.test_base_resources_integration",
        "test_remote_deeply_nested.RemoteDeeplyNestedStackTest.test_remote_nested",
    }
)
_GUEST: Final = (
    "its server's user_data must run in a guest to signal Heat (simcloud and Nova's fake "
    "driver boot no guest)"
)
#: Tests that cannot pass here, not run, with why.
NOT_RUN: Final = {
    "test_server_signal.ServerSignalIntegrationTest.test_server_signal_userdata_format_raw": (
        _GUEST
    ),
    "test_server_signal.ServerSignalIntegrationTest."
    "test_server_signal_userdata_format_software_config": _GUEST,
    "test_server_software_config.SoftwareConfigIntegrationTest.test_server_software_config": (
        "its server's os-collect-config agent must run in a guest and be reached over SSH"
    ),
    "test_server_cfn_init.CfnInitIntegrationTest.test_server_cfn_init": (
        "a CFN template whose server runs cfn-init in a guest, reached over SSH"
    ),
    "test_octavia_lbaas.LoadBalancerTest.test_create_update_loadbalancer": (
        "each pool member's server signals its wait condition from user_data in a guest"
    ),
    "test_octavia_lbaas.LoadBalancerTest.test_add_delete_poolmember": (
        "each pool member's server signals its wait condition from user_data in a guest"
    ),
    "test_aodh_alarm.AodhAlarmTest.test_alarm": (
        "Aodh alarms and their metrics: not a service of the embedded cloud"
    ),
}
SUITE: Final = Suite("heat_tempest_plugin", "tests/scenario", NOT_RUN)


@pytest.mark.timeout(600)
async def test_heat_scenario_tests_that_pass_keep_passing(own_warden: str, tmp_path: Path) -> None:
    run = run_suite(tempest_workspace(tmp_path / "tempest", own_warden, SUITE), SUITE)
    lost = run.report("heat-tempest-plugin scenario", PASSING)
    # test_volumes is skipped by tempest itself: it needs Cinder backups (`backup = false`).
    assert len(run.found) + len(NOT_RUN) >= 10, run.tail
    assert not set(NOT_RUN) & set(run.found), "a test that is not to run ran"
    assert not lost, f"no longer passing: {lost}\n{run.tail}"
