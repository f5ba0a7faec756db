"""The webhooks by path, with upstream's rules (``pkg/webhooks/admission/*/``): which
operations on which resource each one sees. The deploy manifests register exactly these."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from volcano_py.operator.webhooks import (
    admit_cronjobs,
    admit_hypernodes,
    admit_jobflows,
    admit_jobs,
    admit_podgroups,
    admit_pods,
    admit_queues,
)
from volcano_py.operator.webhooks.lookups import ClusterView
from volcano_py.operator.webhooks.options import WebhookOptions
from volcano_py.operator.webhooks.review import AdmissionRequest, Verdict

Handler = Callable[[AdmissionRequest, ClusterView, WebhookOptions], Awaitable[Verdict]]


@dataclass(frozen=True, slots=True)
class Route:
    path: str
    kind: str
    group: str
    version: str
    resource: str
    operations: tuple[str, ...]
    mutating: bool
    handler: Handler


ROUTES: tuple[Route, ...] = (
    Route("/pods/mutate", "Pod", "", "v1", "pods",
          ("CREATE",), True, admit_pods.mutate),
    Route("/pods/validate", "Pod", "", "v1", "pods",
          ("CREATE",), False, admit_pods.validate),
    Route("/jobs/mutate", "Job", "batch.volcano.sh", "v1alpha1", "jobs",
          ("CREATE",), True, admit_jobs.mutate),
    Route("/jobs/validate", "Job", "batch.volcano.sh", "v1alpha1", "jobs",
          ("CREATE", "UPDATE"), False, admit_jobs.validate),
    Route("/queues/mutate", "Queue", "scheduling.volcano.sh", "v1beta1", "queues",
          ("CREATE",), True, admit_queues.mutate),
    Route("/queues/validate", "Queue", "scheduling.volcano.sh", "v1beta1", "queues",
          ("CREATE", "UPDATE", "DELETE"), False, admit_queues.validate),
    Route("/podgroups/mutate", "PodGroup", "scheduling.volcano.sh", "v1beta1", "podgroups",
          ("CREATE",), True, admit_podgroups.mutate),
    Route("/podgroups/validate", "PodGroup", "scheduling.volcano.sh", "v1beta1", "podgroups",
          ("CREATE",), False, admit_podgroups.validate),
    Route("/cronjobs/validate", "CronJob", "batch.volcano.sh", "v1alpha1", "cronjobs",
          ("CREATE", "UPDATE"), False, admit_cronjobs.validate),
    Route("/jobflows/validate", "JobFlow", "flow.volcano.sh", "v1alpha1", "jobflows",
          ("CREATE", "UPDATE"), False, admit_jobflows.validate),
    Route("/hypernodes/validate", "HyperNode", "topology.volcano.sh", "v1alpha1", "hypernodes",
          ("CREATE", "UPDATE"), False, admit_hypernodes.validate),
)  # fmt: skip

ROUTES_BY_PATH = {route.path: route for route in ROUTES}
