"""Every example document (the user's seed documents, and our own examples covering each kind)
validates unchanged and survives a round trip through the models."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from models_testdata import SEED_FIXTURES, fixture_documents, load_documents

from volcano_py.models.command import Command
from volcano_py.models.cronjob import CronJob
from volcano_py.models.hypernode import HyperNode
from volcano_py.models.job import Job
from volcano_py.models.jobflow import JobFlow, JobTemplate
from volcano_py.models.podgroup import PodGroup
from volcano_py.models.queue import Queue
from volcano_py.models.validation import parse_object

SEEDS_DIR = Path("/work/shared/seeds")
VOLCANO_KINDS = {
    "Queue", "Job", "CronJob", "JobFlow", "JobTemplate", "PodGroup", "HyperNode", "Command"
}  # fmt: skip

DOCUMENTS = fixture_documents()
IDS = [f"{name}#{index}" for name, index, _ in DOCUMENTS]


@pytest.mark.parametrize(("name", "index", "doc"), DOCUMENTS, ids=IDS)
def test_example_validates_and_round_trips(name, index, doc):
    model = parse_object(doc)
    assert model.CRD.kind == doc["kind"]
    assert model.model_dump(exclude_unset=True) == doc
    # The JSON spelling (what goes to the API server) is the same document too.
    assert json.loads(model.model_dump_json(exclude_unset=True)) == json.loads(json.dumps(doc))


@pytest.mark.parametrize(("name", "index", "doc"), DOCUMENTS, ids=IDS)
def test_reparsing_the_dump_gives_an_equal_model(name, index, doc):
    model = parse_object(doc)
    assert parse_object(model.model_dump(exclude_unset=True)) == model
    assert parse_object(model.model_dump()) == model


def test_every_kind_has_an_example():
    assert {doc["kind"] for _, _, doc in DOCUMENTS} == VOLCANO_KINDS


def test_examples_parse_to_the_kind_models():
    by_kind = {doc["kind"]: type(parse_object(doc)) for _, _, doc in DOCUMENTS}
    assert by_kind == {
        "Queue": Queue,
        "PodGroup": PodGroup,
        "Job": Job,
        "CronJob": CronJob,
        "JobFlow": JobFlow,
        "JobTemplate": JobTemplate,
        "Command": Command,
        "HyperNode": HyperNode,
    }


def _seed_yaml_blocks() -> list[str]:
    blocks = []
    for path in sorted(SEEDS_DIR.glob("*.txt")):
        blocks += re.findall(r"```yaml\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
    return blocks


@pytest.mark.skipif(not SEEDS_DIR.is_dir(), reason="the seed documents are not mounted here")
def test_seed_fixtures_are_exactly_the_seed_examples():
    # Guards the copy: every Volcano object in a seed's YAML blocks is in a fixture, unchanged.
    from_seeds = [
        doc
        for block in _seed_yaml_blocks()
        for doc in yaml.safe_load_all(block)
        if isinstance(doc, dict) and doc.get("kind") in VOLCANO_KINDS
    ]
    from_fixtures = [
        doc for path in sorted(SEED_FIXTURES.glob("*.yaml")) for doc in load_documents(path)
    ]
    assert from_seeds
    assert sorted(map(json.dumps, from_seeds)) == sorted(map(json.dumps, from_fixtures))


def test_unknown_fields_are_kept():
    doc = next(doc for name, _, doc in DOCUMENTS if name.endswith("job-future-fields.yaml"))
    job = parse_object(doc)
    assert isinstance(job, Job)
    assert job.spec.model_extra == {"someNewScheduling": {"knob": 3}}
    assert job.spec.tasks[0].model_extra == {"shinyNewTaskField": True}
    assert job.spec.tasks[0].policies[0].model_extra == {"newPolicyOption": "fast"}
    assert job.metadata.model_extra == {
        "managedFields": [{"manager": "kubectl", "operation": "Update"}]
    }


def test_seed_queue_reads_as_volcano_reads_it():
    doc = next(doc for name, _, doc in DOCUMENTS if name == "seeds/seed003-queue.yaml")
    queue = parse_object(doc)
    assert isinstance(queue, Queue)
    assert queue.spec.capability == {"cpu": "8", "memory": "16Gi"}
    assert queue.spec.deserved == {"cpu": "4", "memory": "8Gi"}
    assert queue.spec.guarantee.resource == {"cpu": "2", "memory": "4Gi"}
    assert (queue.spec.priority, queue.spec.weight, queue.spec.reclaimable) == (100, 1, True)


def test_timestamps_yaml_turned_into_datetimes_come_back_as_rfc3339_text():
    doc = yaml.safe_load(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
        "metadata: {name: pg, creationTimestamp: 2025-03-01T08:00:00Z}\n"
        "status:\n  conditions:\n  - type: Scheduled\n"
        "    lastTransitionTime: 2025-03-01T10:00:00+08:00\n"
    )
    podgroup = parse_object(doc)
    assert isinstance(podgroup, PodGroup)
    assert podgroup.metadata.creation_timestamp == "2025-03-01T08:00:00Z"
    assert podgroup.status.conditions[0].last_transition_time == "2025-03-01T10:00:00+08:00"
