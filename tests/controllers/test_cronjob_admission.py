"""The CronJob validating webhook (upstream ``pkg/webhooks/admission/cronjobs/validate/
admit_cronjob_test.go``: TestValidateCronjobSpec, TestValidateCronJobName,
TestValidateCronJobSeparatesMultipleErrors, TestValidateCronJobSingleErrorHasNoSeparator), the
job-template check volcano-py adds, and the same rules in the model (``simulate``, the CLI)."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.controllers.cronjob_validation import cronjob_problems, template_problems
from volcano_py.models.validation import ModelError, parse_object


def _job_template() -> dict[str, Any]:
    """``getJobTemplate``."""
    return {
        "minAvailable": 1,
        "queue": "default",
        "tasks": [
            {
                "name": "task-1",
                "replicas": 1,
                "template": {
                    "metadata": {"labels": {"name": "test"}},
                    "spec": {"containers": [{"name": "fake-name", "image": "busybox:1.24"}]},
                },
            }
        ],
        "policies": [{"event": "PodEvicted", "action": "RestartTask"}],
    }


def _cronjob(
    schedule: str = "* * * * *", time_zone: str | None = None, name: str = "cronvcjob"
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedule": schedule,
        "concurrencyPolicy": "Allow",
        "jobTemplate": {"spec": _job_template()},
    }
    if time_zone is not None:
        spec["timeZone"] = time_zone
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": "default", "uid": "1a2b3c"},
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("case", "schedule", "time_zone", "expected"),
    [
        ("validate valid-cronjob", "* * * * *", None, ""),
        ("validate non-standard scheduled", "@every 1m", None, ""),
        ("validate correct timeZone", "*/5 * * * *", "Pacific/Honolulu", ""),
        (
            "validate contain TZ schedule",
            "TZ=UTC 0 20 * * *",
            "Pacific/Honolulu",
            "schedule should not contain TZ or CRON_TZ, TZ should only be set in the timeZone"
            " field",
        ),
        (
            "validate error schedule",
            "error schedule",
            "Pacific/Honolulu",
            "schedule is not a valid cron expression",
        ),
        ("validate empty schedule", "", "Pacific/Honolulu", "schedule is required, but got empty"),
        ("validate unknown . timezone", "*/5 * * * *", "Asia/./Shanghai", "unknown timeZone"),
        ("validate unknown _ timezone", "*/5 * * * *", "America/-NewYork", "unknown timeZone"),
        ("validate unknown space timezone", "*/5 * * * *", "New York", "unknown timeZone"),
        ("validate unknown ! timezone", "*/5 * * * *", "UTC!", "unknown timeZone"),
        (
            "validate Local timezone",
            "*/5 * * * *",
            "Local",
            "timeZone can't be Local, and must be defined in https://www.iana.org/time-zones",
        ),
        (
            "validate empty timezone",
            "",
            "",
            "timeZone must be nil or non-empty string, got empty string",
        ),
        ("validate error timezone", "", "Amerrica/New_York", "invalid timeZone"),
    ],
)
def test_validate_cronjob_spec(
    case: str, schedule: str, time_zone: str | None, expected: str
) -> None:
    problems = cronjob_problems(_cronjob(schedule, time_zone))
    if expected:
        assert problems and expected in problems[0], case
    else:
        assert problems == [], case


@pytest.mark.parametrize(
    ("case", "name", "expected"),
    [
        ("valid name", "my-cronjob", ""),
        ("exactly max length", "a" * 52, ""),
        ("too long name", "a" * 65, "must be no more than 52 characters"),
        ("invalid chars", "-UPPERCASE", "invalid cronJob name"),
    ],
)
def test_validate_cronjob_name(case: str, name: str, expected: str) -> None:
    problems = cronjob_problems(_cronjob(name=name))
    if expected:
        assert len(problems) == 1 and expected in problems[0], case
    else:
        assert problems == [], case


def test_validate_cronjob_separates_multiple_errors() -> None:
    message = "; ".join(cronjob_problems(_cronjob("error schedule", name="a" * 53)))
    for wanted in ("schedule is not a valid cron expression", "; ", "must be no more than 52"):
        assert wanted in message


def test_validate_cronjob_single_error_has_no_separator() -> None:
    message = "; ".join(cronjob_problems(_cronjob("", name="valid-cronjob")))
    assert message == "schedule is required, but got empty"


# -- beyond upstream: the template as the job webhook sees each job -------------------------


def test_a_valid_template_passes_and_the_queue_is_left_to_job_creation() -> None:
    cronjob = _cronjob()
    cronjob["spec"]["jobTemplate"]["spec"]["queue"] = "not-created-yet"
    assert template_problems(cronjob) == []


def test_an_invalid_template_is_refused_naming_the_template_field() -> None:
    cronjob = _cronjob()
    cronjob["spec"]["jobTemplate"]["spec"]["minAvailable"] = 5
    problems = template_problems(cronjob)
    assert problems == [
        "spec.jobTemplate.spec.minAvailable: 5 should not be greater than total replicas in"
        " tasks (1)"
    ]


def test_the_example_is_admitted() -> None:
    from pathlib import Path

    import yaml

    example = yaml.safe_load(
        (Path(__file__).parents[1] / "models/fixtures/examples/cronjob.yaml").read_text()
    )
    assert cronjob_problems(example) == []
    assert template_problems(example) == []


# -- the model says the same, naming the field ----------------------------------------------


@pytest.mark.parametrize(
    ("schedule", "time_zone", "field", "words"),
    [
        ("error schedule", None, "spec.schedule", "not a valid cron expression"),
        ("0 0 * * 7", None, "spec.schedule", "above maximum (6)"),
        ("0 0 L * *", None, "spec.schedule", "failed to parse int from L"),
        ("* * * * * *", None, "spec.schedule", "expected exactly 5 fields"),
        ("CRON_TZ=UTC * * * * *", None, "spec.schedule", "should not contain TZ"),
        ("* * * * *", "Mars/Olympus", "spec.timeZone", "invalid timeZone"),
    ],
)
def test_the_model_refuses_what_the_webhook_refuses(
    schedule: str, time_zone: str | None, field: str, words: str
) -> None:
    with pytest.raises(ModelError) as raised:
        parse_object(_cronjob(schedule, time_zone))
    assert str(raised.value).startswith(f"CronJob default/cronvcjob: {field}: ")
    assert words in str(raised.value)


def test_the_model_defaults_are_upstreams() -> None:
    model = parse_object(_cronjob())
    spec = model.model_dump()["spec"]
    assert spec["concurrencyPolicy"] == "Allow"
    assert spec["suspend"] is False
    assert spec["successfulJobsHistoryLimit"] == 3
    assert spec["failedJobsHistoryLimit"] == 1


def test_the_model_refuses_a_name_without_room_for_the_suffix() -> None:
    with pytest.raises(ModelError, match=r"metadata\.name: cronJob name must be no more than 52"):
        parse_object(_cronjob(name="a" * 53))
