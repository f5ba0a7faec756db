"""User guide ``how_to_configure_sharding_configmap``: the sharding controller reads its shard
specifications (``schedulerConfigs`` with ``allocation-rate``, ``warmup`` and ``node-limit``
policies) from a ConfigMap.

Volcano's controller manager runs without that controller by default (``--controllers``
``*,-sharding-controller``) and its scheduler without sharding (``--scheduler-sharding-mode``
``none``), so with the guide's ConfigMap and default flags nothing reads it: placements are as
without it. volcano-py has no sharding controller: the ConfigMap changes nothing here either;
turning the controller on is named as not implemented, its flags as without effect, and the
scheduler refuses the ``hard``/``soft`` modes rather than run unsharded (docs/configuration.md).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.guides.guide_sim import node, simulate, task, vcjob
from volcano_py.cli import controllers as controllers_cli
from volcano_py.cli.main import main, parse_args
from volcano_py.cli.process_flags import log_compat_flags

SHARDING = {
    "schedulerConfigs": [
        {
            "name": "volcano",
            "type": "volcano",
            "policies": [
                {
                    "name": "allocation-rate",
                    "weight": 1,
                    "arguments": {"minCPUUtil": 0.0, "maxCPUUtil": 0.6},
                },
                {
                    "name": "warmup",
                    "weight": 2,
                    "arguments": {
                        "warmupLabel": "node.volcano.sh/warmup",
                        "warmupLabelValue": "true",
                    },
                },
                {"name": "node-limit", "arguments": {"minNodes": 2, "maxNodes": 100}},
            ],
        },
        {
            "name": "agent-scheduler",
            "type": "agent",
            "policies": [
                {
                    "name": "allocation-rate",
                    "weight": 1,
                    "arguments": {"minCPUUtil": 0.7, "maxCPUUtil": 1.0},
                },
                {"name": "warmup", "weight": 5},
                {"name": "node-limit", "arguments": {"minNodes": 2, "maxNodes": 50}},
            ],
        },
    ],
    "shardSyncPeriod": "60s",
    "enableNodeEventTrigger": True,
}


def sharding_config_map() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "volcano-sharding-configmap", "namespace": "volcano-system"},
        "data": {"sharding.yaml": yaml.safe_dump(SHARDING)},
    }


def test_the_configmap_changes_no_placement(tmp_path: Path) -> None:
    """A warmup-labelled node gets no preference: no shard is computed."""
    cluster = [
        node("n1", cpu="4"),
        node("n2", cpu="4", labels={"node.volcano.sh/warmup": "true"}),
        vcjob("job", [task("worker", 4, cpu="1")], minAvailable=4),
    ]
    without, _, _ = simulate(tmp_path, cluster)
    report, _, err = simulate(tmp_path, [sharding_config_map(), *cluster])
    assert err == ""
    assert report["binds"] == without["binds"] and len(report["binds"]) == 4


def test_the_sharding_controller_is_named_as_not_implemented() -> None:
    assert controllers_cli._check_controllers("*,+sharding-controller") == ["sharding-controller"]
    assert controllers_cli._check_controllers("*,-sharding-controller") == []


def test_the_guides_flags_are_named_as_without_effect(caplog: pytest.LogCaptureFixture) -> None:
    args = parse_args(
        [
            "controllers",
            "--sharding-configmap=volcano-sharding-configmap",
            "--sharding-configmap-namespace=volcano-system",
        ]
    )
    with caplog.at_level(logging.WARNING):
        log_compat_flags(args, "controllers")
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 2
    assert all("there is no sharding-controller here" in m for m in messages)


@pytest.mark.parametrize("mode", ["hard", "soft"])
def test_a_sharded_scheduler_is_refused(mode: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["scheduler", f"--scheduler-sharding-mode={mode}", "--kubeconfig=/nonexistent"])
    assert code != 0
    assert "--scheduler-sharding-mode" in capsys.readouterr().err
