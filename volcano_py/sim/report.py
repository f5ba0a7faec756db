"""What ``volcano-py simulate`` prints: the JSON contract of SIMULATION.md, or a table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from volcano_py.api.resource import Resource
from volcano_py.api.types import KUBE_DEFAULT_SCHEDULER_NAME, TaskStatus
from volcano_py.controllers.timefmt import format_go_duration
from volcano_py.framework.session import Session
from volcano_py.sim.clock import SimClock
from volcano_py.sim.cluster import object_key, resource_strings, timestamp
from volcano_py.sim.engine import Simulation
from volcano_py.sim.forecast import shown_key
from volcano_py.sim.json_text import dumps_indented

_UNPLACED_PHASES = ("", "Pending", "Inqueue", "Unknown")


def _deserved(ssn: Session | None) -> dict[str, Resource]:
    """Queue shares computed by a fair-share plugin (proportion or capacity), if one ran:
    their ``queue_attributes`` (queue name -> attributes with ``deserved``)."""
    if ssn is None:
        return {}
    for name in ("proportion", "capacity"):
        attributes = getattr(ssn.plugins.get(name), "queue_attributes", None)
        if isinstance(attributes, Mapping):
            found: dict[str, Resource] = {}
            for queue, attrs in attributes.items():
                deserved = getattr(attrs, "deserved", None)
                if isinstance(deserved, Resource):
                    found[str(queue)] = deserved
            return found
    return {}


def _pod_entry(pod: Mapping[str, Any], bound: Mapping[str, str] | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "phase": (pod.get("status") or {}).get("phase", "Pending"),
        "node": (pod.get("spec") or {}).get("nodeName") or None,
    }
    # Only what the scheduler's bind added and the pod still carries (a pod recreated under
    # the same name since carries none of it).
    own = (pod.get("metadata") or {}).get("annotations") or {}
    added = {k: v for k, v in (bound or {}).items() if own.get(k) == v}
    if added and entry["node"]:
        entry["annotations"] = dict(sorted(added.items()))
    return entry


def _conditions(pod_group: Mapping[str, Any]) -> list[dict[str, str]]:
    return [
        {k: str(c.get(k, "")) for k in ("type", "status", "reason", "message")}
        for c in (pod_group.get("status") or {}).get("conditions") or []
    ]


def _enqueue_rejections(sim: Simulation) -> dict[str, str]:
    """PodGroup key -> the last reason an enqueue plugin gave for not admitting it (a
    Normal ``Unschedulable`` event), from one pass over the events."""
    rejections: dict[str, str] = {}
    for kind, namespace, name, event_type, reason, message in sim.cluster.events:
        if (kind, event_type, reason) == ("PodGroup", "Normal", "Unschedulable"):
            rejections[f"{namespace}/{name}"] = message
    return rejections


def _queue_limit(ssn: Session, queue_name: str) -> str | None:
    """Why a queue takes no more tasks: its share as the fair-share plugin computed it."""
    for plugin_name in ("proportion", "capacity"):
        attributes = getattr(ssn.plugins.get(plugin_name), "queue_attributes", None)
        if isinstance(attributes, Mapping) and queue_name in attributes:
            attrs = attributes[queue_name]
            allocated = getattr(attrs, "allocated", None)
            limit = getattr(
                attrs, "deserved" if plugin_name == "proportion" else "real_capability", None
            )
            if isinstance(allocated, Resource) and isinstance(limit, Resource):
                word = "deserved" if plugin_name == "proportion" else "capability"
                used, share = _fmt(resource_strings(allocated)), _fmt(resource_strings(limit))
                return (
                    f"queue {queue_name} is at its {word} share: allocated {used} of {word} {share}"
                )
    return None


def _unschedulable_reason(
    sim: Simulation, key: str, pod_group: Mapping[str, Any], rejections: Mapping[str, str]
) -> str | None:
    """Why a PodGroup is not (fully) placed at the end, in the words of the fit errors; None
    when nothing of it waits."""
    ssn = sim.last_session
    queue = str((pod_group.get("spec") or {}).get("queue") or "default")
    if sim.cluster.get("Queue", queue) is None:
        return f'queue "{queue}" does not exist'
    phase = str((pod_group.get("status") or {}).get("phase", ""))
    job = ssn.jobs.get(key) if ssn is not None else None
    if phase in ("", "Pending"):
        return rejections.get(key) or "pod group is pending: not admitted to its queue yet"
    if job is None or ssn is None:
        return None if phase not in _UNPLACED_PHASES else "pod group is not ready"
    waiting = sorted(
        [*job.tasks_in(TaskStatus.PENDING).values(), *job.tasks_in(TaskStatus.PIPELINED).values()],
        key=lambda task: task.name,
    )
    if not waiting:
        return None if phase not in _UNPLACED_PHASES else job.fit_error()
    for task in waiting:
        errors = job.nodes_fit_errors.get(task.uid)
        if errors is not None:
            return errors.message()
    if job.job_fit_errors:
        return job.job_fit_errors
    queue_info = ssn.queues.get(job.queue)
    if queue_info is not None and not ssn.allocatable(queue_info, waiting[0]):
        if not queue_info.is_open:
            return f"queue {job.queue} is {queue_info.state or 'without a state'}, not Open"
        return _queue_limit(ssn, job.queue) or f"queue {job.queue} cannot take more tasks"
    return job.fit_error()


def _other_schedulers_pods(sim: Simulation) -> dict[str, str]:
    """Pending pods that are not ours, and why simulate leaves them: a pod is placed by the
    scheduler its ``spec.schedulerName`` names, and the API server names kube-scheduler's
    (``default-scheduler``) when the pod names none."""
    ours = ", ".join(sorted(sim.scheduler_names))
    found: dict[str, str] = {}
    for key, pod in sim.cluster.items("Pod"):
        spec = pod.get("spec") or {}
        if spec.get("nodeName") or (pod.get("status") or {}).get("phase") != "Pending":
            continue
        scheduler = str(spec.get("schedulerName") or KUBE_DEFAULT_SCHEDULER_NAME)
        if scheduler in sim.scheduler_names:
            continue
        found[key] = (
            f"pod of scheduler {scheduler!r}, not ours ({ours}); simulate does not place it"
            + (
                " (a pod without spec.schedulerName is default-scheduler's, as the API server"
                " fills it in)"
                if scheduler == KUBE_DEFAULT_SCHEDULER_NAME
                else ""
            )
        )
    return found


def build_report(sim: Simulation) -> dict[str, Any]:
    cluster = sim.cluster
    deserved = _deserved(sim.last_session)
    pods = {
        key: _pod_entry(pod, cluster.bind_annotations.get(key)) for key, pod in cluster.items("Pod")
    }
    for key in cluster.binds:
        pods.setdefault(key, {"phase": "Deleted", "node": cluster.binds[key]})
    for key in cluster.evictions:
        pods.setdefault(key, {"phase": "Deleted", "node": cluster.binds.get(key)})
    pod_groups: dict[str, Any] = {}
    unschedulable: dict[str, str] = {}
    rejections = _enqueue_rejections(sim)
    for key, pod_group in cluster.items("PodGroup"):
        shown = shown_key(key, pod_group)
        pod_groups[shown] = {
            "phase": (pod_group.get("status") or {}).get("phase", "Pending"),
            "conditions": _conditions(pod_group),
        }
        reason = _unschedulable_reason(sim, key, pod_group, rejections)
        if reason is not None:
            unschedulable[shown] = reason
    unschedulable.update(_other_schedulers_pods(sim))
    jobs = {
        key: {
            "phase": ((job.get("status") or {}).get("state") or {}).get("phase", "Pending"),
            "retryCount": (job.get("status") or {}).get("retryCount", 0),
        }
        for key, job in cluster.items("Job")
    }
    queues: dict[str, Any] = {}
    for name, queue in cluster.items("Queue"):
        spec, status = queue.get("spec") or {}, queue.get("status") or {}
        entry: dict[str, Any] = {
            "state": status.get("state", "Open"),
            "allocated": resource_strings(Resource.from_list(status.get("allocated") or {})),
        }
        if name in deserved:
            entry["deserved"] = resource_strings(deserved[name])
        elif spec.get("deserved"):
            entry["deserved"] = dict(spec["deserved"])
        if spec.get("capability"):
            entry["capability"] = dict(spec["capability"])
        queues[name] = entry
    report: dict[str, Any] = {
        "cycles": sim.cycles,
        "binds": dict(sorted(cluster.binds.items())),
        "evictions": list(cluster.evictions),
        "pods": pods,
        "podgroups": pod_groups,
        "jobs": jobs,
        "queues": queues,
        "unschedulable": unschedulable,
        "starts": _starts(sim),
        # Not part of the JSON output: the table's forecast reads them.
        "_forecast": _forecast(sim, pod_groups),
        "_cycles_run": sim.cycles_run,
    }
    claims = _resource_claims(cluster.items("ResourceClaim"))
    if claims:
        report["resourceClaims"] = claims
    return report


def _resource_claims(items: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """DRA: each claim's devices (``driver/pool/device``), the node its allocation is bound
    to, and the pods it is reserved for (docs/simulate.md, "DRA")."""
    found: dict[str, Any] = {}
    for key, claim in items:
        status = claim.get("status") or {}
        allocation = status.get("allocation") or {}
        results = (allocation.get("devices") or {}).get("results") or []
        entry: dict[str, Any] = {
            "allocated": [f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}" for r in results]
        }
        for term in (allocation.get("nodeSelector") or {}).get("nodeSelectorTerms") or []:
            for field_ in term.get("matchFields") or []:
                if field_.get("key") == "metadata.name" and field_.get("values"):
                    entry["node"] = field_["values"][0]
        reserved = [str(r.get("name")) for r in status.get("reservedFor") or []]
        if reserved:
            entry["reservedFor"] = reserved
        found[key] = entry
    return found


def _starts(sim: Simulation) -> dict[str, str]:
    """For each PodGroup not running at the start that reached minMember running in the
    run, when (RFC 3339, simulated time)."""
    found = {shown: timestamp(when) for shown, when in sim.forecast.started.values()}
    return dict(sorted(found.items()))


def _forecast(sim: Simulation, pod_groups: Mapping[str, Any]) -> dict[str, Any]:
    """Per group that was waiting at the start: when it started (seconds after the start,
    or None) and what it waited for."""
    offset = sim.clock.offset
    started = {shown: when - offset for shown, when in sim.forecast.started.values()}
    waiting = {
        shown
        for key, pod_group in sim.cluster.items("PodGroup")
        if key not in sim.forecast.running_at_start
        and (shown := shown_key(key, pod_group)) in pod_groups
    }
    return {
        shown: {
            "after": started.get(shown),
            "waited_for": sim.forecast.waited_for.get(shown, []),
        }
        for shown in sorted(waiting | set(started))
    }


def render_json(report: Mapping[str, Any]) -> str:
    shown = {key: value for key, value in report.items() if not key.startswith("_")}
    return dumps_indented(shown) + "\n"


def _forecast_lines(
    report: Mapping[str, Any], clock: SimClock | None, until: float | None
) -> list[str]:
    """One line per job that waited at the start: when it starts and what it waited for."""
    forecast: Mapping[str, Any] = report.get("_forecast") or {}
    if not forecast:
        return []
    start = timestamp(clock.offset) if clock is not None else timestamp(0)
    lines = ["", f"FORECAST (from {start})"]
    width = max(len(key) for key in forecast)
    for key, entry in forecast.items():
        after = entry["after"]
        if after is None:
            if until is not None:
                span = format_go_duration(round(until * 1_000_000_000))
                text = f"does not start within {span}"
            else:
                text = "does not start in this run (give --until to look further)"
            reason = report["unschedulable"].get(key)
            if reason:
                text += f"; at the end: {reason}"
        else:
            when = format_go_duration(round(after * 1_000_000_000))
            text = f"starts at +{when}"
            if entry["waited_for"]:
                text += ", waited for " + ", ".join(entry["waited_for"])
            elif after <= (clock.period if clock is not None else 1.0) * 2:
                text += ", waited for nothing (room was free)"
        lines.append(f"  {key:<{width}}  {text}")
    return lines


def render_table(
    report: Mapping[str, Any], clock: SimClock | None = None, until: float | None = None
) -> str:
    """For people: pods by node, waiting groups with their reasons, queue usage, and when
    each job that waited at the start starts."""
    header = f"Simulated {report['cycles']} scheduling cycle(s)"
    run = report.get("_cycles_run", report["cycles"])
    if run < report["cycles"]:
        header += f" ({run} run, the clock jumped over the others: nothing could change in them)"
    lines = [header + ".", ""]
    by_node: dict[str, list[str]] = {}
    waiting: list[str] = []
    for key, pod in report["pods"].items():
        if pod["node"] and pod["phase"] not in ("Deleted",):
            by_node.setdefault(pod["node"], []).append(f"{key} ({pod['phase']})")
        elif pod["phase"] == "Pending":
            waiting.append(key)
    lines.append("PODS BY NODE")
    if not by_node:
        lines.append("  (none placed)")
    for node in sorted(by_node):
        lines.append(f"  {node}:")
        lines.extend(f"    {pod}" for pod in sorted(by_node[node]))
    if waiting:
        lines.append("  pending: " + ", ".join(sorted(waiting)))
        for key in sorted(waiting):
            if key in report["unschedulable"] and key not in report["podgroups"]:
                lines.append(f"    {key}: {report['unschedulable'][key]}")
    if report["evictions"]:
        lines += ["", "EVICTIONS"] + [f"  {key}" for key in report["evictions"]]
    if report.get("resourceClaims"):
        lines += ["", "RESOURCE CLAIMS"]
        for key, claim in report["resourceClaims"].items():
            devices = ", ".join(claim["allocated"]) or "not allocated"
            users = ", ".join(claim.get("reservedFor") or [])
            lines.append(f"  {key}: {devices}" + (f" (for {users})" if users else ""))
    lines += ["", "POD GROUPS"]
    width = max((len(k) for k in report["podgroups"]), default=10)
    for key, pod_group in report["podgroups"].items():
        lines.append(f"  {key:<{width}}  {pod_group['phase']}")
        reason = report["unschedulable"].get(key)
        if reason:
            lines.append(f"  {'':<{width}}  why: {reason}")
    lines += ["", "QUEUES"]
    for name, queue in report["queues"].items():
        parts = [f"state {queue['state']}", f"allocated {_fmt(queue['allocated'])}"]
        if "deserved" in queue:
            parts.append(f"deserved {_fmt(queue['deserved'])}")
        if "capability" in queue:
            parts.append(f"capability {_fmt(queue['capability'])}")
        lines.append(f"  {name}: " + ", ".join(parts))
    lines += _forecast_lines(report, clock, until)
    return "\n".join(lines) + "\n"


def _fmt(resources: Mapping[str, str]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in resources.items()) + "}"


__all__ = ["build_report", "object_key", "render_json", "render_table"]
