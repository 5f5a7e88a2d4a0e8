"""A hidden parameter's value stays in the stack's workflow: never in the database,
never in an API answer, and updates still see it (end to end, real workflows)."""

from __future__ import annotations

import copy
from typing import Any

from sqlmodel import Session, select

from store.actions import ActionRecord
from store.db import make_engine
from store.stacks import StackRecord
from tests.api.test_stacks_api import assert_error
from tests.api.test_stacks_through_workflows import STACKS, settled
from tests.support.warden_in_process import InProcessWarden

SECRET = "hunter2-s3cret"
TEMPLATE: dict[str, Any] = {
    "heat_template_version": "2021-04-16",
    "parameters": {
        "db_password": {
            "type": "string",
            "hidden": True,
            "constraints": [{"length": {"min": 10}}],
        },
        "flavor": {"type": "string", "default": "m1.tiny"},
    },
    "resources": {
        "config": {"type": "OS::Heat::TestResource", "properties": {"value": "v1"}},
    },
}


async def test_hidden_values_never_leave_the_workflow(running_warden: InProcessWarden) -> None:
    api = running_warden.api
    body = {"stack_name": "vault", "template": TEMPLATE, "parameters": {"db_password": SECRET}}
    created = await api.post(STACKS, json=body)
    assert created.status_code == 201, created.text
    url = f"{STACKS}/vault/{created.json()['stack']['id']}"
    stack = await settled(api, url)

    assert stack["parameters"]["db_password"] == "******"
    assert SECRET not in (await api.get(f"{url}/environment")).text
    engine = make_engine(running_warden.settings.resolved_database_url)
    with Session(engine) as session:
        rows = [r.model_dump_json() for r in session.exec(select(StackRecord)).all()]
        rows += [a.model_dump_json() for a in session.exec(select(ActionRecord)).all()]
    engine.dispose()
    assert rows and not [r for r in rows if SECRET in r]

    # A new template is checked against the real (hidden) value, by the workflow.
    changed = copy.deepcopy(TEMPLATE)
    changed["resources"]["config"]["properties"] = {"value": "v2"}
    patched = await api.patch(url, json={"template": changed})
    assert patched.status_code == 202, patched.text
    assert (await settled(api, url))["stack_status"] == "UPDATE_COMPLETE"
    too_short = await api.patch(url, json={"parameters": {"db_password": "short"}})
    assert_error(too_short, 400, "db_password")
