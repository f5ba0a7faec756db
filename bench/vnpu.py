"""One scheduling session with MindCluster 310P vNPU pods at 5k Atlas nodes (issue 12: the
device fit must stay vectorised over nodes).

5k nodes of 4 Ascend 310P chips (``huawei.com/npu-core`` 32, ``servertype`` Ascend310P-8), their
chips listed by one ClusterD device-info ConfigMap; 2 running ``vir02_1c`` pods per node (chips
0 and 1), then 100 gangs of 100 pending pods asking 2 AI cores (``vir02_1c``), with a score
weight (deviceshare's batch score).

    python -m bench vnpu            # 5k nodes
    python -m bench vnpu --small    # 1k nodes
    python -m bench vnpu --baseline # also without deviceshare (the rest of the session)
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
from typing import Any

from bench import objects
from bench.deviceshare import CONF
from bench.session import measure_session, print_timings
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder
from volcano_py.framework.conf import parse_conf
from volcano_py.scheduler.cycle import freeze_long_lived, gc_paused
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, PluginRegistry

CHIPS = 4
RUNNING_PER_NODE = 2
GANGS, GANG_SIZE = 100, 100

# The conf of bench.deviceshare, with MindCluster's switch in deviceshare's place.
DEVICESHARE = """\
  - name: deviceshare
    arguments:
      deviceshare.AscendMindClusterVNPUEnable: true
      deviceshare.ScheduleWeight: 10
"""


def atlas_node(name: str) -> dict[str, Any]:
    node = objects.node(name, "64", "256Gi")
    node["metadata"]["labels"].update(
        {
            "accelerator": "huawei-Ascend310P",
            "servertype": "Ascend310P-8",
            "node.kubernetes.io/npu.chip.name": "310P3",
        }
    )
    node["status"]["allocatable"]["huawei.com/npu-core"] = str(8 * CHIPS)
    node["status"]["capacity"] = dict(node["status"]["allocatable"])
    cards = {f"Ascend310P-{i}": {"IP": "", "SuperDeviceID": 0} for i in range(CHIPS)}
    node["metadata"]["annotations"] = {"baseDeviceInfos": json.dumps(cards)}
    return node


def device_info(nodes: int) -> dict[str, Any]:
    name = "cluster-info-device-0"
    chips = ",".join(f"Ascend310P-{i}" for i in range(CHIPS))
    infos = {
        f"mindx-dl-deviceinfo-node-{i:05d}": {
            "DeviceList": {"huawei.com/Ascend310P": chips},
            "UpdateTime": 1700000000,
        }
        for i in range(nodes)
    }
    return {
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": "mindx-dl",
            "labels": {"mx-consumer-volcano": "true"},
        },
        "data": {name: json.dumps(infos)},
    }


def vnpu_pod(name: str, group: str, node: str = "", chip: int = 0) -> Any:
    pod = objects.pod(name, group, "1", node)
    pod["metadata"]["labels"] = {"ring-controller.atlas": "ascend-310P"}
    resources = pod["spec"]["containers"][0]["resources"]
    resources["requests"]["huawei.com/npu-core"] = "2"
    resources["limits"] = {"huawei.com/npu-core": "2"}
    if node:
        pod["metadata"]["annotations"].update(
            {"huawei.com/npu-core": f"{chip}-vir02_1c", "huawei.com/AscendReal": f"r-{chip}_0"}
        )
    return pod


def build_cache(nodes: int) -> SchedulerCache:
    cache = SchedulerCache(binder=RecordingBinder())
    cache.apply_event("Queue", "ADDED", objects.queue("default"))
    cache.apply_event("ConfigMap", "ADDED", device_info(nodes))
    for i in range(nodes):
        cache.apply_event("Node", "ADDED", atlas_node(f"node-{i:05d}"))
    for i in range(nodes):
        name = f"node-{i:05d}"
        group = f"running-{i:05d}"
        cache.apply_event("PodGroup", "ADDED", objects.pod_group(group, 1, "Running"))
        for j in range(RUNNING_PER_NODE):
            cache.apply_event("Pod", "ADDED", vnpu_pod(f"{group}-{j}", group, name, j))
    objects.add_pending_gangs(cache, GANGS, GANG_SIZE, lambda name, group, _: vnpu_pod(name, group))
    return cache


def run(nodes: int, baseline: bool = False) -> dict[str, float]:
    cache = build_cache(nodes)
    conf = parse_conf(CONF.format(deviceshare="" if baseline else DEVICESHARE), BUILTIN_ACTIONS)
    freeze_long_lived()
    with gc_paused():
        return measure_session(cache, conf, PluginRegistry())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench vnpu")
    parser.add_argument("--small", action="store_true", help="1k nodes instead of 5k")
    parser.add_argument("--baseline", action="store_true", help="also without deviceshare")
    args = parser.parse_args(argv)
    nodes = 1000 if args.small else 5000
    for baseline in (False, True) if args.baseline else (False,):
        timings = run(nodes, baseline)
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        kind = "baseline without deviceshare" if baseline else "MindCluster vNPU, weight 10"
        print(
            f"\nsession: {nodes} Atlas nodes x {CHIPS} 310P chips, {nodes * RUNNING_PER_NODE}"
            f" running + {GANGS * GANG_SIZE} pending vir02_1c pods ({GANGS} gangs of"
            f" {GANG_SIZE}), {kind}"
        )
        print_timings(timings, peak_mib)
    return 0


if __name__ == "__main__":
    sys.exit(main())
