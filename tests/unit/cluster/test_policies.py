"""Policy specs: deletion 1.1 and health 1.1 parsing, URL rules, secrets, safety limits."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from domain.cluster.lifecycle import HookType
from domain.cluster.policies.deletion import DeletionCriteria, DeletionPolicyProperties
from domain.cluster.policies.health import (
    DetectionType,
    HealthPolicyProperties,
    RebootType,
    RecoveryActionName,
    RecoveryConditional,
)
from domain.cluster.policies.specs import (
    ParsedPolicy,
    PolicyType,
    ensure_profile_supports,
    parse_policy_spec,
)
from domain.errors import InvalidRequest, NotFound
from domain.hook_urls import expand_poll_url, validate_hook_url

SECRET = "s3cr3t-hmac-key"


def deletion_spec(**properties: Any) -> dict[str, Any]:
    return {"type": "senlin.policy.deletion", "version": "1.1", "properties": properties}


def webhook(**params: Any) -> dict[str, Any]:
    return {"type": "webhook", "params": {"url": "https://app.example.com/hooks", **params}}


def health_spec(**changes: Any) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "detection": {"detection_modes": [{"type": "NODE_STATUS_POLLING"}]},
        "recovery": {"actions": [{"name": "RECREATE"}]},
    }
    for path, value in changes.items():
        section, key = path.split("__")
        properties[section][key] = value
    return {"type": "senlin.policy.health", "version": "1.1", "properties": properties}


def poll_url_mode(**options: Any) -> dict[str, Any]:
    return {
        "type": "NODE_STATUS_POLL_URL",
        "options": {"poll_url": "http://{nodename}.apps.internal:8080/health", **options},
    }


def rejects(spec: Any, message: str, **kwargs: Any) -> None:
    with pytest.raises(InvalidRequest, match=f"^{re.escape(message)}"):
        parse_policy_spec(spec, **kwargs)


# --- envelope -------------------------------------------------------------------------


def test_deletion_policy_defaults_follow_senlin() -> None:
    parsed = parse_policy_spec(deletion_spec())
    assert parsed.type == PolicyType.DELETION
    assert parsed.version == "1.1"
    assert parsed.properties == DeletionPolicyProperties(
        criteria=DeletionCriteria.RANDOM,
        destroy_after_deletion=True,
        grace_period=0,
        reduce_desired_capacity=True,
        hooks=None,
    )


def test_version_written_as_yaml_float_is_accepted() -> None:
    assert parse_policy_spec({**deletion_spec(), "version": 1.1}).version == "1.1"


def test_missing_properties_mean_all_defaults() -> None:
    parsed = parse_policy_spec({"type": "senlin.policy.deletion", "version": "1.1"})
    assert parsed.properties == DeletionPolicyProperties()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (["not", "a", "map"], "spec: must be an object"),
        ({**deletion_spec(), "name": "x"}, "spec.name: unknown key"),
        ({"version": "1.1", "properties": {}}, "spec.type: required"),
        ({"type": "senlin.policy.deletion", "properties": {}}, "spec.version: required"),
        ({**deletion_spec(), "version": "0.9"}, "spec.version: unsupported version '0.9'"),
        ({**deletion_spec(), "version": True}, "spec.version: unsupported version True"),
        ({**deletion_spec(), "properties": [1]}, "spec.properties: must be an object"),
    ],
)
def test_malformed_envelope_is_rejected_naming_the_key(spec: Any, message: str) -> None:
    rejects(spec, message)


def test_deletion_policy_1_0_is_senlin_s_same_schema() -> None:
    parsed = parse_policy_spec({**deletion_spec(), "version": 1.0})
    assert (parsed.version, parsed.properties) == ("1.0", DeletionPolicyProperties())


def test_an_unknown_policy_type_is_not_found_in_senlin_s_words() -> None:
    with pytest.raises(NotFound) as missing:
        parse_policy_spec({**deletion_spec(), "type": "senlin.policy.bogus"})
    assert str(missing.value) == "The policy_type 'senlin.policy.bogus-1.1' could not be found."


# --- deletion policy ------------------------------------------------------------------


def test_webhook_hooks_parse_with_secret_kept_apart() -> None:
    parsed = parse_policy_spec(
        deletion_spec(criteria="OLDEST_FIRST", hooks={**webhook(secret=SECRET), "timeout": 120})
    )
    props = parsed.properties
    assert isinstance(props, DeletionPolicyProperties)
    assert props.hooks is not None
    assert props.hooks.type == HookType.WEBHOOK
    assert props.hooks.timeout == 120
    assert props.criteria == DeletionCriteria.OLDEST_FIRST
    assert props.secret == SECRET
    assert parsed.secret == SECRET


def test_without_secret_drops_only_the_secret() -> None:
    parsed = parse_policy_spec(deletion_spec(hooks={**webhook(secret=SECRET), "timeout": 5}))
    clean = parsed.without_secret()
    assert clean.secret is None
    assert SECRET not in clean.model_dump_json()
    assert isinstance(clean.properties, DeletionPolicyProperties)
    assert clean.properties.hooks is not None
    assert clean.properties.hooks.params.url == "https://app.example.com/hooks"
    assert clean.properties.hooks.timeout == 5
    assert parsed.secret == SECRET  # the original is untouched


def test_secret_never_shows_in_repr_or_public_spec() -> None:
    parsed = parse_policy_spec(deletion_spec(hooks=webhook(secret=SECRET)))
    assert SECRET not in repr(parsed)
    assert SECRET not in str(parsed.public_spec())


def test_public_spec_round_trips_through_the_parser() -> None:
    spec = deletion_spec(criteria="YOUNGEST_FIRST", grace_period=30, hooks=webhook(secret=SECRET))
    public = parse_policy_spec(spec).public_spec()
    assert public["properties"]["hooks"]["params"] == {"url": "https://app.example.com/hooks"}
    assert parse_policy_spec(public) == parse_policy_spec(spec).without_secret()


def test_zaqar_hooks_need_only_a_queue() -> None:
    props = parse_policy_spec(
        deletion_spec(hooks={"type": "zaqar", "params": {"queue": "scale-in_events"}})
    ).properties
    assert isinstance(props, DeletionPolicyProperties)
    assert props.hooks is not None
    assert props.hooks.params.queue == "scale-in_events"
    assert props.without_secret() is props


def test_hooks_type_defaults_to_zaqar_as_in_senlin() -> None:
    props = parse_policy_spec(deletion_spec(hooks={"params": {"queue": "q"}})).properties
    assert isinstance(props, DeletionPolicyProperties)
    assert props.hooks is not None
    assert props.hooks.type == HookType.ZAQAR


def test_senlin_style_empty_hooks_and_params_mean_unset() -> None:
    props = parse_policy_spec(deletion_spec(hooks={})).properties
    assert isinstance(props, DeletionPolicyProperties)
    assert props.hooks is None
    props = parse_policy_spec(
        deletion_spec(hooks={"type": "zaqar", "params": {"queue": "q", "url": ""}})
    ).properties
    assert isinstance(props, DeletionPolicyProperties)
    assert props.hooks is not None
    assert props.hooks.params.url is None


def test_stored_properties_load_in_a_workflow_without_settings() -> None:
    public = parse_policy_spec(
        deletion_spec(hooks=webhook()), url_allowlist=["app.example.com"]
    ).public_spec()
    props = DeletionPolicyProperties.model_validate(public["properties"])
    assert props.hooks is not None
    assert props.hooks.params.url == "https://app.example.com/hooks"


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({"criteria": "NEWEST"}, "spec.properties.criteria: Input should be"),
        ({"grace_period": -1}, "spec.properties.grace_period: Input should be greater than"),
        ({"grace_period": 86401}, "spec.properties.grace_period: Input should be less than"),
        ({"destroy_after_deletion": "maybe"}, "spec.properties.destroy_after_deletion: "),
        ({"lifetime": 3}, "spec.properties.lifetime: Extra inputs are not permitted"),
        (
            {"hooks": {**webhook(), "timeout": 86401}},
            "spec.properties.hooks.timeout: Input should be less than or equal to 86400",
        ),
        ({"hooks": {**webhook(), "timeout": -1}}, "spec.properties.hooks.timeout: "),
        ({"hooks": {"type": "sns", "params": {}}}, "spec.properties.hooks.type: Input should be"),
        ({"hooks": {**webhook(), "retries": 3}}, "spec.properties.hooks.retries: Extra inputs"),
        ({"hooks": webhook(headers={})}, "spec.properties.hooks.params.headers: Extra inputs"),
        (
            {"hooks": {"type": "webhook", "params": {}}},
            "spec.properties.hooks.params.url: required when type is webhook",
        ),
        (
            {"hooks": webhook(queue="q")},
            "spec.properties.hooks.params.queue: not allowed when type is webhook",
        ),
        (
            {"hooks": {"type": "zaqar", "params": {}}},
            "spec.properties.hooks.params.queue: required when type is zaqar",
        ),
        (
            {"hooks": {"type": "zaqar", "params": {"queue": "q", "url": "http://a.b/"}}},
            "spec.properties.hooks.params.url: not allowed when type is zaqar",
        ),
        (
            {"hooks": {"type": "zaqar", "params": {"queue": "q", "secret": SECRET}}},
            "spec.properties.hooks.params.secret: not allowed when type is zaqar",
        ),
        (
            {"hooks": {"type": "zaqar", "params": {"queue": "bad queue"}}},
            "spec.properties.hooks.params.queue: String should match pattern",
        ),
        (
            {"hooks": {"type": "zaqar", "params": {"queue": "q" * 65}}},
            "spec.properties.hooks.params.queue: String should match pattern",
        ),
        ({"hooks": webhook(secret="short")}, "spec.properties.hooks.params.secret: String should"),
        ({"hooks": webhook(secret="x" * 257)}, "spec.properties.hooks.params.secret: String shou"),
        (
            {"hooks": webhook(url="ftp://files.example.com/x")},
            "spec.properties.hooks.params.url: must use the http or https scheme",
        ),
        (
            {"hooks": webhook(url="https://app.example.com/" + "a" * 2048)},
            "spec.properties.hooks.params.url: String should have at most 2048 characters",
        ),
    ],
)
def test_invalid_deletion_policy_is_rejected_naming_the_property(
    properties: dict[str, Any], message: str
) -> None:
    rejects(deletion_spec(**properties), message)


def test_webhook_outside_the_allow_list_is_rejected() -> None:
    rejects(
        deletion_spec(hooks=webhook(url="https://evil.example.org/x")),
        "spec.properties.hooks.params.url: host evil.example.org is not in the allowed list",
        url_allowlist=["*.example.com"],
    )


def test_every_deletion_error_is_reported_at_once() -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_policy_spec(deletion_spec(grace_period=-1, criteria="X"))
    assert "spec.properties.grace_period" in caught.value.message
    assert "spec.properties.criteria" in caught.value.message


# --- validate_hook_url ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("ftp://a.example.com/", "must use the http or https scheme"),
        ("file:///etc/passwd", "must use the http or https scheme"),
        ("https://user:pw@a.example.com/", "must not contain user information"),
        ("https://user@a.example.com/", "must not contain user information"),
        ("https:///path-only", "must have a valid host"),
        ("https://bad host/", "must not contain whitespace"),
        ("https://a.example.com/\x00", "must not contain whitespace or control characters"),
        ("https://a.example.com:99999/", "is not a valid URL"),
        ("https://a.example.com:port/", "is not a valid URL"),
        ("https://{nodename}/", "must have a valid host"),
        ("https://a.example.com/" + "x" * 2048, "must be at most 2048 characters"),
        ("not a url", "must not contain whitespace"),
        ("example.com/hook", "must use the http or https scheme"),
    ],
)
def test_hook_url_must_be_plain_http(url: str, problem: str) -> None:
    with pytest.raises(InvalidRequest, match=f"^hooks.params.url: {re.escape(problem)}"):
        validate_hook_url(url, (), field="hooks.params.url")


@pytest.mark.parametrize(
    "url",
    [
        "http://a.example.com",
        "https://a.example.com:8443/hook?x=1",
        "http://10.0.0.5:8080/h",
        "http://[::1]:8080/h",
        "http://localhost/",
    ],
)
def test_plain_http_urls_pass_without_allow_list(url: str) -> None:
    validate_hook_url(url, ())


def test_url_error_names_url_by_default() -> None:
    with pytest.raises(InvalidRequest, match=r"^url: "):
        validate_hook_url("ftp://x/", ())


@pytest.mark.parametrize(
    ("url", "entry", "allowed"),
    [
        ("https://hooks.example.com/x", "hooks.example.com", True),
        ("https://HOOKS.Example.com/x", "hooks.example.COM", True),
        ("https://hooks.example.com:9000/x", "hooks.example.com", True),
        ("https://other.example.com/x", "hooks.example.com", False),
        ("https://a.b.example.com/x", "*.example.com", True),
        ("https://example.com/x", "*.example.com", False),
        ("https://badexample.com/x", "*.example.com", False),
        ("https://app.example.com/hooks/scale", "https://app.example.com/hooks", True),
        ("https://app.example.com/hooks", "https://app.example.com/hooks", True),
        ("https://app.example.com/hooksevil", "https://app.example.com/hooks", False),
        ("https://app.example.com/hooks-x", "https://app.example.com/hooks-", False),
        ("https://app.example.com/a/b", "https://app.example.com/a/", True),
        ("https://app.example.com", "https://app.example.com", True),
        ("https://app.example.com.evil.org/", "https://app.example.com", False),
        ("http://app.example.com/hooks", "https://app.example.com/", False),
        ("https://app.example.com:8443/", "https://app.example.com/", False),
        ("https://app.example.com:8443/x", "https://app.example.com:8443", True),
        ("https://app.example.com/", "https://app.example.com:bad/", False),
    ],
)
def test_allow_list_entries_match_hosts_wildcards_and_prefixes(
    url: str, entry: str, allowed: bool
) -> None:
    if allowed:
        validate_hook_url(url, [entry])
    else:
        with pytest.raises(InvalidRequest, match="is not in the allowed list"):
            validate_hook_url(url, [entry])


def test_any_matching_allow_list_entry_is_enough() -> None:
    validate_hook_url("https://b.example.net/", ["a.example.com", "*.example.net"])


# --- health policy --------------------------------------------------------------------


def test_health_policy_defaults_follow_design() -> None:
    props = parse_policy_spec(health_spec()).properties
    assert isinstance(props, HealthPolicyProperties)
    assert props.detection.interval == 60
    assert props.detection.node_update_timeout == 300
    assert props.detection.recovery_conditional == RecoveryConditional.ANY_FAILED
    assert props.recovery.fencing == ["COMPUTE"]
    assert props.recovery.node_delete_timeout == 20
    assert props.recovery.node_force_recreate is False
    assert props.recovery.max_unhealthy == "49%"
    assert props.recovery.max_concurrent_recoveries is None
    assert props.recovery.node_retry_limit == 3
    assert props.recovery.retry_backoff == 30


def test_poll_url_mode_defaults() -> None:
    props = parse_policy_spec(health_spec(detection__detection_modes=[poll_url_mode()])).properties
    assert isinstance(props, HealthPolicyProperties)
    (mode,) = props.detection.detection_modes
    assert mode.type == DetectionType.NODE_STATUS_POLL_URL
    options = mode.options
    assert options.model_dump() == {
        "poll_url": "http://{nodename}.apps.internal:8080/health",
        "poll_url_healthy_response": "",
        "poll_url_conn_error_as_unhealthy": True,
        "poll_url_retry_limit": 3,
        "poll_url_retry_interval": 3,
        "poll_url_ssl_verify": True,
    }


def test_several_polling_modes_combine() -> None:
    modes = [
        {"type": "NODE_STATUS_POLLING", "options": {}},
        poll_url_mode(poll_url_healthy_response="^passing$"),
        {"type": "LB_STATUS_POLLING", "options": {"pool_id": "pool-1"}},
    ]
    spec = health_spec(
        detection__detection_modes=modes, detection__recovery_conditional="ALL_FAILED"
    )
    props = parse_policy_spec(spec).properties
    assert isinstance(props, HealthPolicyProperties)
    assert [m.type for m in props.detection.detection_modes] == [
        DetectionType.NODE_STATUS_POLLING,
        DetectionType.NODE_STATUS_POLL_URL,
        DetectionType.LB_STATUS_POLLING,
    ]


def test_lifecycle_events_alone_is_accepted() -> None:
    spec = health_spec(detection__detection_modes=[{"type": "LIFECYCLE_EVENTS"}])
    props = parse_policy_spec(spec).properties
    assert isinstance(props, HealthPolicyProperties)
    assert props.detection.detection_modes[0].type == DetectionType.LIFECYCLE_EVENTS


def test_recovery_actions_keep_their_order_and_normalize_builtins() -> None:
    actions = [
        {"name": "reboot", "params": {"type": "hard"}},
        {"name": "REBOOT"},
        {"name": "Rebuild"},
        {"name": "evacuate", "type": "TEMPORAL_WORKFLOW", "params": {"task_queue": "ops"}},
        {"name": "RECREATE"},
    ]
    props = parse_policy_spec(health_spec(recovery__actions=actions)).properties
    assert isinstance(props, HealthPolicyProperties)
    steps = props.recovery.actions
    assert [s.name for s in steps] == ["REBOOT", "REBOOT", "REBUILD", "evacuate", "RECREATE"]
    assert [s.builtin for s in steps] == [
        RecoveryActionName.REBOOT,
        RecoveryActionName.REBOOT,
        RecoveryActionName.REBUILD,
        None,
        RecoveryActionName.RECREATE,
    ]
    assert [s.reboot_type for s in steps[:3]] == [RebootType.HARD, RebootType.SOFT, None]
    assert steps[3].params == {"task_queue": "ops"}


def test_workflow_action_takes_free_json_params() -> None:
    params = {"node": "{{ node.physical_id }}", "n": 3, "tags": ["a", None], "x": {"y": 1.5}}
    action = {"name": "my.Evacuate-v2", "type": "TEMPORAL_WORKFLOW", "params": params}
    props = parse_policy_spec(health_spec(recovery__actions=[action])).properties
    assert isinstance(props, HealthPolicyProperties)
    assert props.recovery.actions[0].params == params
    assert parse_policy_spec(health_spec(recovery__actions=[action])).public_spec()["properties"][
        "recovery"
    ]["actions"] == [action]


def test_workflow_named_like_a_builtin_stays_a_workflow() -> None:
    action = {"name": "REBOOT", "type": "TEMPORAL_WORKFLOW", "params": {"anything": 1}}
    props = parse_policy_spec(health_spec(recovery__actions=[action])).properties
    assert isinstance(props, HealthPolicyProperties)
    assert props.recovery.actions[0].builtin is None


def test_interval_at_the_configured_minimum_is_accepted() -> None:
    props = parse_policy_spec(health_spec(detection__interval=10), min_interval=10).properties
    assert isinstance(props, HealthPolicyProperties)
    assert props.detection.interval == 10


def test_interval_below_the_configured_minimum_names_the_minimum() -> None:
    rejects(
        health_spec(detection__interval=30),
        "spec.properties.detection.interval: Specified interval of 30 seconds is below the "
        "configured minimum health check interval of 60 seconds.",
    )


def test_stored_health_policy_loads_when_the_minimum_was_raised_later() -> None:
    public = parse_policy_spec(health_spec(detection__interval=10), min_interval=10).public_spec()
    props = HealthPolicyProperties.model_validate(public["properties"])
    assert props.detection.interval == 10


def test_poll_url_must_match_the_allow_list_with_a_node_name_filled_in() -> None:
    spec = health_spec(detection__detection_modes=[poll_url_mode()])
    parse_policy_spec(spec, url_allowlist=["*.apps.internal"])
    rejects(
        spec,
        "spec.properties.detection.detection_modes[0].options.poll_url: host "
        "node-0.apps.internal is not in the allowed list",
        url_allowlist=["hooks.example.com"],
    )


def test_expand_poll_url_fills_and_escapes_the_node_name() -> None:
    assert expand_poll_url("http://{nodename}.svc/h", "web-1") == "http://web-1.svc/h"
    assert expand_poll_url("http://{nodename}.svc/", "a@evil.com/") == (
        "http://a%40evil.com%2F.svc/"
    )


MODES = "spec.properties.detection.detection_modes"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"detection__interval": 0}, "spec.properties.detection.interval: Input should be greater"),
        ({"detection__interval": 86401}, "spec.properties.detection.interval: Input should be les"),
        ({"detection__node_update_timeout": -1}, "spec.properties.detection.node_update_timeout:"),
        ({"detection__recovery_conditional": "MOST"}, "spec.properties.detection.recovery_condi"),
        ({"detection__type": "NODE_STATUS_POLLING"}, "spec.properties.detection.type: Extra"),
        ({"detection__detection_modes": []}, f"{MODES}: List should have at least 1 item"),
        (
            {"detection__detection_modes": [{"type": "HYPERVISOR_STATUS_POLLING"}]},
            f"{MODES}[0].type: must be one of NODE_STATUS_POLLING, NODE_STATUS_POLL_URL, "
            "LIFECYCLE_EVENTS, LB_STATUS_POLLING",
        ),
        ({"detection__detection_modes": [{"options": {}}]}, f"{MODES}[0].type: must be one of"),
        (
            {
                "detection__detection_modes": [
                    {"type": "NODE_STATUS_POLLING"},
                    {"type": "NODE_STATUS_POLLING"},
                ]
            },
            f"{MODES}[1].type: duplicate detection mode NODE_STATUS_POLLING",
        ),
        (
            {
                "detection__detection_modes": [
                    {"type": "LIFECYCLE_EVENTS"},
                    {"type": "NODE_STATUS_POLLING"},
                ]
            },
            f"{MODES}: LIFECYCLE_EVENTS cannot be combined with polling detection modes",
        ),
        (
            {
                "detection__detection_modes": [
                    {"type": "LB_STATUS_POLLING", "options": {"pool_id": "p"}},
                    {"type": "LIFECYCLE_EVENTS"},
                ]
            },
            f"{MODES}: LIFECYCLE_EVENTS cannot be combined",
        ),
        (
            {"detection__detection_modes": [{"type": "NODE_STATUS_POLL_URL"}]},
            f"{MODES}[0].options: Field required",
        ),
        (
            {"detection__detection_modes": [{"type": "NODE_STATUS_POLL_URL", "options": {}}]},
            f"{MODES}[0].options.poll_url: Field required",
        ),
        (
            {"detection__detection_modes": [poll_url_mode(poll_url="gopher://x/")]},
            f"{MODES}[0].options.poll_url: must use the http or https scheme",
        ),
        (
            {"detection__detection_modes": [poll_url_mode(poll_url_healthy_response="(")]},
            f"{MODES}[0].options.poll_url_healthy_response: is not a valid regular expression",
        ),
        (
            {"detection__detection_modes": [poll_url_mode(poll_url_retry_limit=101)]},
            f"{MODES}[0].options.poll_url_retry_limit: Input should be less than or equal to 100",
        ),
        (
            {"detection__detection_modes": [poll_url_mode(poll_url_retry_interval=-1)]},
            f"{MODES}[0].options.poll_url_retry_interval: Input should be greater",
        ),
        (
            {"detection__detection_modes": [poll_url_mode(poll_url_conn_error_as_unhealty=1)]},
            f"{MODES}[0].options.poll_url_conn_error_as_unhealty: Extra inputs",
        ),
        (
            {"detection__detection_modes": [{"type": "LB_STATUS_POLLING", "options": {"x": 1}}]},
            f"{MODES}[0].options.x: Extra inputs",
        ),
        (
            {"detection__detection_modes": [{"type": "NODE_STATUS_POLLING", "options": {"a": 1}}]},
            f"{MODES}[0].options.a: Extra inputs are not permitted",
        ),
    ],
)
def test_invalid_detection_is_rejected_naming_the_property(
    changes: dict[str, Any], message: str
) -> None:
    rejects(health_spec(**changes), message)


ACTIONS = "spec.properties.recovery.actions"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"recovery__actions": []}, f"{ACTIONS}: List should have at least 1 item"),
        ({"recovery__actions": [{"name": "RECREATE"}] * 11}, f"{ACTIONS}: List should have at mo"),
        (
            {"recovery__actions": [{"name": "RECREATE"}, {"name": "EVACUATE"}]},
            f"{ACTIONS}[1].name: unknown recovery action 'EVACUATE'; expected REBOOT, REBUILD, "
            "RECREATE, STACK_UPDATE or a workflow name with type TEMPORAL_WORKFLOW",
        ),
        ({"recovery__actions": [{"params": {}}]}, f"{ACTIONS}[0].name: Field required"),
        ({"recovery__actions": [{"name": ""}]}, f"{ACTIONS}[0].name: String should have at least"),
        (
            {"recovery__actions": [{"name": "REBOOT", "params": {"type": "WARM"}}]},
            f"{ACTIONS}[0].params.type: must be SOFT or HARD",
        ),
        (
            {"recovery__actions": [{"name": "REBOOT", "params": {"type": 1}}]},
            f"{ACTIONS}[0].params.type: must be SOFT or HARD",
        ),
        (
            {"recovery__actions": [{"name": "REBOOT", "params": {"force": True}}]},
            f"{ACTIONS}[0].params.force: not a parameter of REBOOT",
        ),
        (
            {"recovery__actions": [{"name": "REBUILD", "params": {"image": "x"}}]},
            f"{ACTIONS}[0].params.image: not a parameter of REBUILD",
        ),
        (
            {"recovery__actions": [{"name": "wf", "type": "MISTRAL_WORKFLOW"}]},
            f"{ACTIONS}[0].type: Input should be 'TEMPORAL_WORKFLOW'",
        ),
        (
            {"recovery__actions": [{"name": "my wf", "type": "TEMPORAL_WORKFLOW"}]},
            f"{ACTIONS}[0].name: is not a valid workflow name",
        ),
        (
            {
                "recovery__actions": [
                    {"name": "wf", "type": "TEMPORAL_WORKFLOW", "params": {"task_queue": 7}}
                ]
            },
            f"{ACTIONS}[0].params.task_queue: must be a string of 1 to 255 characters",
        ),
        (
            {
                "recovery__actions": [
                    {"name": "wf", "type": "TEMPORAL_WORKFLOW", "params": {"blob": "x" * 20000}}
                ]
            },
            f"{ACTIONS}[0].params: must be at most 16384 bytes as JSON",
        ),
        (
            {"recovery__actions": [{"name": "RECREATE", "retries": 2}]},
            f"{ACTIONS}[0].retries: Extra inputs are not permitted",
        ),
        ({"recovery__fencing": ["STORAGE"]}, "spec.properties.recovery.fencing[0]: Input should"),
        ({"recovery__node_delete_timeout": 0}, "spec.properties.recovery.node_delete_timeout: "),
        ({"recovery__node_delete_timeout": 3601}, "spec.properties.recovery.node_delete_timeout"),
        ({"recovery__node_retry_limit": 101}, "spec.properties.recovery.node_retry_limit: Input"),
        ({"recovery__retry_backoff": 0}, "spec.properties.recovery.retry_backoff: Input should"),
        (
            {"recovery__max_unhealthy": "101%"},
            "spec.properties.recovery.max_unhealthy: must be a percentage from 0% to 100%",
        ),
        ({"recovery__max_unhealthy": "half"}, "spec.properties.recovery.max_unhealthy: must be"),
        ({"recovery__max_unhealthy": -1}, "spec.properties.recovery.max_unhealthy: must be betwe"),
        ({"recovery__max_unhealthy": True}, "spec.properties.recovery.max_unhealthy: must be an "),
        ({"recovery__max_unhealthy": 0.5}, "spec.properties.recovery.max_unhealthy: must be an i"),
        (
            {"recovery__max_concurrent_recoveries": 0},
            "spec.properties.recovery.max_concurrent_recoveries: must be between 1 and",
        ),
        (
            {"recovery__max_concurrent_recoveries": "0%"},
            "spec.properties.recovery.max_concurrent_recoveries: must be a percentage from "
            "more than 0%",
        ),
    ],
)
def test_invalid_recovery_is_rejected_naming_the_property(
    changes: dict[str, Any], message: str
) -> None:
    rejects(health_spec(**changes), message)


@pytest.mark.parametrize("section", ["detection", "recovery"])
def test_health_policy_needs_detection_and_recovery(section: str) -> None:
    spec = health_spec()
    del spec["properties"][section]
    rejects(spec, f"spec.properties.{section}: Field required")


# --- safety limits --------------------------------------------------------------------


def health_props(**recovery: Any) -> HealthPolicyProperties:
    props = parse_policy_spec(
        health_spec(**{f"recovery__{k}": v for k, v in recovery.items()})
    ).properties
    assert isinstance(props, HealthPolicyProperties)
    return props


@pytest.mark.parametrize(
    ("limit", "size", "expected"),
    [
        ("49%", 100, 49),
        ("49%", 10, 4),
        ("49%", 2, 1),  # a positive percentage always tolerates one node
        ("49%", 1, 1),
        ("49%", 0, 1),
        ("0%", 10, 0),
        ("100%", 7, 7),
        ("12.5%", 40, 5),
        (3, 100, 3),
        (0, 100, 0),
    ],
)
def test_max_unhealthy_count(limit: int | str, size: int, expected: int) -> None:
    assert health_props(max_unhealthy=limit).max_unhealthy_count(size) == expected


@pytest.mark.parametrize(
    ("limit", "size", "expected"),
    [
        (None, 10, 1),
        (None, 100, 5),
        (None, 101, 6),
        (None, 0, 1),
        ("50%", 5, 3),
        ("1%", 10, 1),
        (4, 100, 4),
    ],
)
def test_max_concurrent_recoveries(limit: int | str | None, size: int, expected: int) -> None:
    assert health_props(max_concurrent_recoveries=limit).max_concurrent(size) == expected


# --- profile support ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["REBOOT", "REBUILD"])
def test_reboot_and_rebuild_need_a_nova_server_profile(name: str) -> None:
    props = health_props(actions=[{"name": name}])
    ensure_profile_supports(props, "os.nova.server")
    with pytest.raises(
        InvalidRequest,
        match=rf"^recovery\.actions\[0\]\.name: Recovery action {name} is only applicable to "
        r"os\.nova\.server clusters \(profile type is os\.heat\.stack\)",
    ):
        ensure_profile_supports(props, "os.heat.stack")


def test_stack_update_needs_a_heat_stack_profile_and_recreate_fits_both() -> None:
    ensure_profile_supports(health_props(actions=[{"name": "stack_update"}]), "os.heat.stack")
    for profile_type in ("os.nova.server", "os.heat.stack"):
        ensure_profile_supports(health_props(actions=[{"name": "RECREATE"}]), profile_type)
    with pytest.raises(
        InvalidRequest,
        match=r"^recovery\.actions\[0\]\.name: Recovery action STACK_UPDATE is only applicable "
        r"to os\.heat\.stack clusters",
    ):
        ensure_profile_supports(health_props(actions=[{"name": "STACK_UPDATE"}]), "os.nova.server")


def test_workflow_recovery_runs_on_any_profile() -> None:
    props = health_props(actions=[{"name": "fix", "type": "TEMPORAL_WORKFLOW"}])
    ensure_profile_supports(props, "os.heat.stack")


def test_deletion_policy_fits_any_profile() -> None:
    ensure_profile_supports(parse_policy_spec(deletion_spec()).properties, "os.heat.stack")


# --- ParsedPolicy ---------------------------------------------------------------------


def test_parsed_policy_survives_a_json_round_trip() -> None:
    for spec in (
        deletion_spec(hooks=webhook()),
        health_spec(detection__detection_modes=[poll_url_mode()]),
    ):
        parsed = parse_policy_spec(spec)
        assert ParsedPolicy.model_validate_json(parsed.model_dump_json()) == parsed


def test_parsed_policy_refuses_properties_of_another_type() -> None:
    with pytest.raises(ValueError, match=r"do not belong to a senlin\.policy\.health policy"):
        ParsedPolicy(type=PolicyType.HEALTH, properties=DeletionPolicyProperties())


def test_health_policy_has_no_secret() -> None:
    parsed = parse_policy_spec(health_spec())
    assert parsed.secret is None
    assert parsed.without_secret() is parsed


def test_parse_does_not_modify_the_callers_spec() -> None:
    spec = health_spec(recovery__actions=[{"name": "reboot", "params": {"type": "soft"}}])
    before = copy.deepcopy(spec)
    parse_policy_spec(spec)
    assert spec == before


def test_lb_status_polling_without_a_pool_reads_the_lb_policy_s_pool() -> None:
    from domain.cluster.health import detection_with_pool

    def detection(mode: dict[str, object]) -> dict[str, object]:
        spec = parse_policy_spec(
            {
                "type": "senlin.policy.health",
                "version": "1.1",
                "properties": {
                    "detection": {"detection_modes": [mode]},
                    "recovery": {"actions": [{"name": "RECREATE"}]},
                },
            }
        )
        dumped: dict[str, object] = spec.properties.detection.model_dump(mode="json")  # type: ignore[union-attr]
        return dumped

    def pool(found: dict[str, object]) -> object:
        return found["detection_modes"][0]["options"]["pool_id"]  # type: ignore[index]

    default = detection({"type": "LB_STATUS_POLLING"})
    assert pool(detection_with_pool(default, "lb-pool")) == "lb-pool"
    assert pool(detection_with_pool(default, None)) is None
    own = detection({"type": "LB_STATUS_POLLING", "options": {"pool_id": "own"}})
    assert pool(detection_with_pool(own, "lb-pool")) == "own"
