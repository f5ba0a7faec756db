"""Volcano's admission webhooks served live (vc-webhook-manager): an HTTPS server answering
``admission.k8s.io/v1`` AdmissionReviews on upstream's paths (``/jobs/mutate``,
``/queues/validate``, ...) with the pure rules of ``volcano_py.controllers.admission``, the
job validation and the queue models.

* ``jsonpatch``: the RFC 6902 patch between an object and its mutated copy (and applying one);
* ``review``: reading an AdmissionReview and writing the answer;
* ``lookups``: what the webhooks read from the cluster (queues, namespace annotations);
* ``admit_jobs``, ``admit_queues``, ``admit_podgroups``, ``admit_hypernodes``: the handlers;
* ``routes``: the path table, shared with the deploy manifests' test;
* ``server``: the aiohttp application and the process.
"""
