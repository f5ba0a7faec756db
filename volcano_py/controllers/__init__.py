"""Job, PodGroup, Queue controllers and the admission webhooks as pure state machines.

No I/O: each entry point takes plain Kubernetes dicts and returns the writes to make, so the
live controllers (``operator/controllers``) and the simulated cluster (offline) drive the very
same logic.

* ``admission``: ``mutate_job``, ``validate_job``, ``mutate_queue``, ``mutate_pod_group``.
* ``job``: ``sync_job`` (one request -> ``JobChanges``) and the ``job_request_for_*`` functions
  turning watch events into ``JobRequest``s.
* ``podgroup``: ``pod_group_for_pod`` for plain pods and workloads.
* ``queue``: ``next_queue_state``, ``sync_queue`` and ``queue_request_for_*``.
"""
