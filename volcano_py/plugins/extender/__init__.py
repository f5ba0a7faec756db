"""extender: delegate scheduling decisions to an HTTP service (``plugins/extender``).

Each configured verb is one hook; the hook POSTs JSON to ``<extender.urlPrefix>/<verb>`` and
uses the answer. Bodies and answers are upstream's (``wire.py``)::

    onSessionOpenVerb   {"Jobs","Nodes","Queues","NamespaceInfo","RevocableNodes","NodeList"}
    onSessionCloseVerb  {}
    predicateVerb       {"task","node"}          -> {"status": error text, "code": status code}
    prioritizeVerb      {"task","nodes": [...]}  -> {"nodeScore": {node: score}, "errorMessage"}
    preemptableVerb     {"evictor","evictees"}   -> {"status": vote, "victims": [tasks]}
    reclaimableVerb     {"evictor","evictees"}   -> {"status": vote, "victims": [tasks]}
    jobEnqueueableVerb  {"job"}                  -> {"status": vote}
    jobEnqueuedVerb     {"job"}                  -> {}
    queueOverusedVerb   {"queue"}                -> {"overused": bool}
    jobReadyVerb        {"job"}                  -> {"status": bool}
    allocateFuncVerb    {"task"}                 -> {"errorMessage"}  (a message vetoes)
    deallocateFuncVerb  {"task"}                 -> {"errorMessage"}

With ``extender.managedResources`` (a list of resource names), tasks that request or limit
none of them are not sent for predicate, prioritize, preemptable, reclaimable and the event
handlers. ``extender.ignorable`` makes a failed call count as "no objection" instead of a
failure; a failed onSessionOpen without it registers nothing for the session.
``extender.httpTimeout`` is a Go duration (1s).

Cost: upstream calls predicate once per task and node, and so does this plugin (the protocol
has no batched form): one keep-alive HTTP round trip per (task, node that passed the other
predicates), only for tasks the extender is interested in, sequentially (upstream runs 16 in
parallel). Measured against a Python ``http.server`` extender on 127.0.0.1: about 0.75 ms per
node, most of it the server and the node's JSON (0.77 s per task at 1k nodes, 3.8 s at 5k).
Prioritize is one call per task with every candidate node; the other verbs one call per
decision. Nothing is called for a verb left unset.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from volcano_py.api.job import JobInfo
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import FloatArray, IntArray
from volcano_py.api.node_usage import NO_USAGE
from volcano_py.api.queue import QueueInfo
from volcano_py.api.task import TaskInfo, derived_fact
from volcano_py.api.types import Status, StatusCode, Vote
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.event import Event, EventHandler
from volcano_py.framework.hooks import PredicateFn
from volcano_py.framework.session import Session
from volcano_py.models.duration import DurationError, parse_duration
from volcano_py.plugins._plugin_helpers import warn_once
from volcano_py.plugins.extender import wire
from volcano_py.plugins.extender.client import ExtenderClient, ExtenderError, client_for

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "extender"
URL_PREFIX: Final = "extender.urlPrefix"
HTTP_TIMEOUT: Final = "extender.httpTimeout"
ON_SESSION_OPEN_VERB: Final = "extender.onSessionOpenVerb"
ON_SESSION_CLOSE_VERB: Final = "extender.onSessionCloseVerb"
PREDICATE_VERB: Final = "extender.predicateVerb"
PRIORITIZE_VERB: Final = "extender.prioritizeVerb"
PREEMPTABLE_VERB: Final = "extender.preemptableVerb"
RECLAIMABLE_VERB: Final = "extender.reclaimableVerb"
QUEUE_OVERUSED_VERB: Final = "extender.queueOverusedVerb"
JOB_ENQUEUEABLE_VERB: Final = "extender.jobEnqueueableVerb"
JOB_ENQUEUED_VERB: Final = "extender.jobEnqueuedVerb"
JOB_READY_VERB: Final = "extender.jobReadyVerb"
ALLOCATE_FUNC_VERB: Final = "extender.allocateFuncVerb"
DEALLOCATE_FUNC_VERB: Final = "extender.deallocateFuncVerb"
IGNORABLE: Final = "extender.ignorable"
MANAGED_RESOURCES: Final = "extender.managedResources"
DEFAULT_HTTP_TIMEOUT: Final = 1.0

VERBS: Final = (
    ON_SESSION_OPEN_VERB,
    ON_SESSION_CLOSE_VERB,
    PREDICATE_VERB,
    PRIORITIZE_VERB,
    PREEMPTABLE_VERB,
    RECLAIMABLE_VERB,
    QUEUE_OVERUSED_VERB,
    JOB_ENQUEUEABLE_VERB,
    JOB_ENQUEUED_VERB,
    JOB_READY_VERB,
    ALLOCATE_FUNC_VERB,
    DEALLOCATE_FUNC_VERB,
)
ARGUMENTS: Final[frozenset[str]] = frozenset(
    {URL_PREFIX, HTTP_TIMEOUT, IGNORABLE, MANAGED_RESOURCES, *VERBS}
)


def _warn_once(message: str) -> None:
    warn_once(log, f"{PLUGIN_NAME}: {message}")


@dataclass(frozen=True, slots=True)
class ExtenderConfig:
    url_prefix: str = ""
    http_timeout: float = DEFAULT_HTTP_TIMEOUT
    verbs: Mapping[str, str] | None = None
    ignorable: bool = False
    managed_resources: frozenset[str] = frozenset()

    def verb(self, key: str) -> str:
        return (self.verbs or {}).get(key, "")

    @classmethod
    def from_arguments(cls, arguments: Arguments) -> ExtenderConfig:
        """``parseExtenderConfig``: string arguments; a non-string is warned about and unset."""
        url_prefix = arguments.get_str(URL_PREFIX, "")
        verbs = {key: arguments.get_str(key, "") for key in VERBS}
        timeout = DEFAULT_HTTP_TIMEOUT
        text = arguments.get_str(HTTP_TIMEOUT, "")
        if text:
            try:
                timeout = parse_duration(text)
            except DurationError:
                _warn_once(f"{HTTP_TIMEOUT} {text!r} is not a Go duration; 1s is used")
                timeout = DEFAULT_HTTP_TIMEOUT
        return cls(
            url_prefix=url_prefix,
            http_timeout=timeout,
            verbs={key: verb for key, verb in verbs.items() if verb},
            ignorable=arguments.get_bool(IGNORABLE, False),
            managed_resources=_managed_resources(arguments.get(MANAGED_RESOURCES)),
        )


def _managed_resources(value: object) -> frozenset[str]:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        # Upstream refuses to start on a string; the name of its constant says "split by ,".
        _warn_once(f"{MANAGED_RESOURCES} should be a list; the string is split at commas")
        return frozenset(name.strip() for name in value.split(",") if name.strip())
    if isinstance(value, list) and all(isinstance(name, str) for name in value):
        return frozenset(value)
    _warn_once(f"{MANAGED_RESOURCES} must be a list of resource names, got {value!r}; ignored")
    return frozenset()


def has_resources_in_list(managed: frozenset[str], resources: object) -> bool:
    """``hasResourcesInList``: the list names a managed resource."""
    return isinstance(resources, Mapping) and any(name in managed for name in resources)


def has_managed_resources(managed: frozenset[str], containers: Sequence[Any]) -> bool:
    """``hasManagedResources``: a container requests or limits a managed resource."""
    for container in containers:
        resources = (container or {}).get("resources") or {}
        if has_resources_in_list(managed, resources.get("requests")) or has_resources_in_list(
            managed, resources.get("limits")
        ):
            return True
    return False


def is_interested(managed: frozenset[str], pod: Mapping[str, Any]) -> bool:
    """``IsInterested``: no managed resources means every task; else one asking for one."""
    if not managed:
        return True
    spec = pod.get("spec") or {}
    return has_managed_resources(managed, spec.get("containers") or []) or has_managed_resources(
        managed, spec.get("initContainers") or []
    )


def _vote(code: int) -> Vote:
    return Vote.PERMIT if code > 0 else Vote.REJECT if code < 0 else Vote.ABSTAIN


def _status_code(code: int) -> StatusCode:
    try:
        return StatusCode(code)
    except ValueError:
        return StatusCode.ERROR


class ExtenderPlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.config = ExtenderConfig.from_arguments(arguments)
        self._client: ExtenderClient | None = None
        if self.config.verbs:
            if not self.config.url_prefix:
                _warn_once(f"verbs are set but {URL_PREFIX} is empty: every call fails")
            else:
                try:
                    self._client = client_for(self.config.url_prefix, self.config.http_timeout)
                except ExtenderError as error:
                    _warn_once(f"{error}: every call fails")

    # ------------------------------------------------------------------ transport

    def send(self, verb: str, body: Any, want_answer: bool = True) -> Any:
        if self._client is None:
            raise ExtenderError(f"{verb}: no usable {URL_PREFIX}")
        return self._client.send(verb, body, want_answer)

    def interested(self, task: TaskInfo) -> bool:
        """``IsInterested``, remembered on the task (it depends on the pod only)."""
        managed = self.config.managed_resources
        if not managed:
            return True
        key = _INTEREST_KEY + ",".join(sorted(managed))
        return bool(derived_fact(task, key, lambda t: is_interested(managed, t.pod)))

    # ------------------------------------------------------------------ session

    def on_session_open(self, ssn: Session) -> None:
        config = self.config
        open_verb = config.verb(ON_SESSION_OPEN_VERB)
        if open_verb:
            body = {
                "Jobs": {uid: wire.job(job) for uid, job in ssn.jobs.items()},
                "Nodes": {
                    name: wire.node(node, ssn.node_usage.get(name, NO_USAGE))
                    for name, node in ssn.nodes.items()
                },
                "Queues": {name: wire.queue(queue) for name, queue in ssn.queues.items()},
                "NamespaceInfo": {},
                "RevocableNodes": {},
                "NodeList": None,
            }
            try:
                self.send(open_verb, body, want_answer=False)
            except ExtenderError as error:
                log.warning("OnSessionOpen failed with error %s", error)
                if not config.ignorable:
                    return
        if config.verb(PREDICATE_VERB):
            ssn.add_task_predicate_fn(self.name, self._predicate_for)
        if config.verb(PRIORITIZE_VERB):
            ssn.add_batch_node_order_fn(
                self.name, lambda task, rows: self._prioritize(ssn, task, rows)
            )
        if config.verb(PREEMPTABLE_VERB):
            ssn.add_preemptable_fn(
                self.name,
                lambda evictor, evictees: self._evictable(PREEMPTABLE_VERB, evictor, evictees),
            )
        if config.verb(RECLAIMABLE_VERB):
            ssn.add_reclaimable_fn(
                self.name,
                lambda evictor, evictees: self._evictable(RECLAIMABLE_VERB, evictor, evictees),
            )
        if config.verb(JOB_ENQUEUEABLE_VERB):
            ssn.add_job_enqueueable_fn(self.name, self._job_enqueueable)
        if config.verb(JOB_ENQUEUED_VERB):
            ssn.add_job_enqueued_fn(self.name, self._job_enqueued)
        if config.verb(QUEUE_OVERUSED_VERB):
            ssn.add_overused_fn(self.name, self._queue_overused)
        if config.verb(JOB_READY_VERB):
            ssn.add_job_ready_fn(self.name, self._job_ready)
        allocate, deallocate = config.verb(ALLOCATE_FUNC_VERB), config.verb(DEALLOCATE_FUNC_VERB)
        if allocate or deallocate:
            ssn.add_event_handler(
                EventHandler(
                    allocate=self._event_handler("AllocateFunc", allocate) if allocate else None,
                    deallocate=(
                        self._event_handler("DeallocateFunc", deallocate) if deallocate else None
                    ),
                    owner=self.name,
                )
            )

    def on_session_close(self, ssn: Session) -> None:
        verb = self.config.verb(ON_SESSION_CLOSE_VERB)
        if verb:
            try:
                self.send(verb, {}, want_answer=False)
            except ExtenderError as error:
                log.warning("OnSessionClose failed with error %s", error)

    # ------------------------------------------------------------------ hooks

    def _predicate_for(self, task: TaskInfo) -> PredicateFn | None:
        """The per-node check for ``task``; None (no HTTP at all) when not interested."""
        if not self.interested(task):
            return None
        verb = self.config.verb(PREDICATE_VERB)
        task_body = wire.task(task)

        def predicate(task: TaskInfo, node: NodeInfo) -> Status | None:
            try:
                answer = self.send(verb, {"task": task_body, "node": wire.node(node)})
                message = wire.as_str(wire.field(answer, "status"), "status")
                code = wire.as_int(wire.field(answer, "code"), "code")
            except (ExtenderError, wire.WireError) as error:
                log.warning("Predicate failed with error %s", error)
                if self.config.ignorable:
                    return None
                return Status(StatusCode.ERROR, str(error), PLUGIN_NAME)
            if not message:
                return None
            # An error text without a code has always meant Error.
            status = StatusCode.ERROR if code == 0 else _status_code(code)
            return Status(status, message, PLUGIN_NAME)

        return predicate

    def _prioritize(self, ssn: Session, task: TaskInfo, rows: IntArray) -> FloatArray:
        scores: FloatArray = np.zeros(len(rows))
        if not self.interested(task):
            return scores
        nodes = [ssn.node_list[int(row)] for row in rows]
        body = {"task": wire.task(task), "nodes": [wire.node(node) for node in nodes]}
        try:
            answer = self.send(self.config.verb(PRIORITIZE_VERB), body)
            node_score = wire.as_scores(wire.field(answer, "nodeScore"), "nodeScore")
            message = wire.as_str(wire.field(answer, "errorMessage"), "errorMessage")
            if message or node_score is None:
                raise wire.WireError(message or "no nodeScore in the answer")
        except (ExtenderError, wire.WireError) as error:
            # Upstream drops every score of the task when this fails without ignorable (no
            # node is chosen); a vectorised score has no such channel, so it scores nothing.
            log.warning("Prioritize failed with error %s", error)
            return scores
        for i, node in enumerate(nodes):
            scores[i] = node_score.get(node.name, 0.0)
        return scores

    def _evictable(
        self, key: str, evictor: TaskInfo, evictees: list[TaskInfo]
    ) -> tuple[list[TaskInfo], int]:
        if not self.interested(evictor):
            return [], int(Vote.ABSTAIN)
        body = {"evictor": wire.task(evictor), "evictees": [wire.task(t) for t in evictees]}
        try:
            answer = self.send(self.config.verb(key), body)
            status = wire.as_int(wire.field(answer, "status"), "status")
            uids = wire.victim_uids(wire.field(answer, "victims"), "victims")
        except (ExtenderError, wire.WireError) as error:
            log.warning("%s failed with error %s", key.split(".")[-1], error)
            return [], int(Vote.PERMIT if self.config.ignorable else Vote.REJECT)
        # The extender answers with copies of the tasks: they are the session's by UID.
        by_uid = {task.uid: task for task in evictees}
        victims = [by_uid[uid] for uid in uids if uid in by_uid]
        if len(victims) != len(uids):
            log.warning("%s: victims that were not candidates are ignored", key)
        return victims, status

    def _job_enqueueable(self, job: JobInfo) -> Vote:
        try:
            answer = self.send(self.config.verb(JOB_ENQUEUEABLE_VERB), {"job": wire.job(job)})
            return _vote(wire.as_int(wire.field(answer, "status"), "status"))
        except (ExtenderError, wire.WireError) as error:
            log.warning("JobEnqueueable failed with error %s", error)
            return Vote.PERMIT if self.config.ignorable else Vote.REJECT

    def _job_enqueued(self, job: JobInfo) -> None:
        try:
            self.send(self.config.verb(JOB_ENQUEUED_VERB), {"job": wire.job(job)})
        except ExtenderError as error:
            log.warning("JobEnqueued failed with error %s", error)

    def _queue_overused(self, queue: QueueInfo) -> bool:
        try:
            answer = self.send(self.config.verb(QUEUE_OVERUSED_VERB), {"queue": wire.queue(queue)})
            return wire.as_bool(wire.field(answer, "overused"), "overused")
        except (ExtenderError, wire.WireError) as error:
            log.warning("QueueOverused failed with error %s", error)
            return not self.config.ignorable

    def _job_ready(self, job: JobInfo) -> bool:
        try:
            answer = self.send(self.config.verb(JOB_READY_VERB), {"job": wire.job(job)})
            return wire.as_bool(wire.field(answer, "status"), "status")
        except (ExtenderError, wire.WireError) as error:
            log.warning("JobReady failed with error %s", error)
            return not self.config.ignorable

    def _event_handler(self, name: str, verb: str) -> Any:
        def handle(event: Event) -> None:
            if not self.interested(event.task):
                return
            try:
                answer = self.send(verb, {"task": wire.task(event.task)})
                message = wire.as_str(wire.field(answer, "errorMessage"), "errorMessage")
            except (ExtenderError, wire.WireError) as error:
                log.warning("%s failed with error %s", name, error)
                if not self.config.ignorable:
                    event.error = str(error)
                return
            if message:
                event.error = message

        return handle


_INTEREST_KEY: Final = "extender.interested:"


def new(arguments: Arguments) -> ExtenderPlugin:
    return ExtenderPlugin(arguments)
