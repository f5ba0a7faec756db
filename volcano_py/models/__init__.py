"""Pydantic v2 models of Volcano's CRDs and of volcano-scheduler.conf (the edges only).

The scheduler never sees these models: the cache converts them (or raw watch JSON) into the
plain dataclasses of ``volcano_py.api`` once. They serve the places where users' documents come
in or go out: ``volcano-py simulate`` files, the CLI, admission, status writes, CRD generation.

Kinds (``registry.all_models()``), with Volcano's JSON names and CRD defaults:

* ``queue.Queue`` and ``podgroup.PodGroup`` (``scheduling.volcano.sh/v1beta1``),
* ``job.Job`` (``batch.volcano.sh/v1alpha1``), its lifecycle policies in ``lifecycle``,
* ``command.Command`` (``bus.volcano.sh/v1alpha1``) and the bus actions and events,
* ``hypernode.HyperNode`` (``topology.volcano.sh/v1alpha1``).

Entry points:

* ``validation.parse_object(doc)`` picks the model from apiVersion/kind and raises
  ``validation.ModelError`` with one line such as
  ``Job default/job1: spec.tasks[0].minAvailable: minAvailable (3) is greater than replicas (2)``;
* ``defaults.default_job`` / ``default_queue`` add what Volcano's mutating webhooks add;
* ``python -m volcano_py.models.crdgen crds`` (``make crds``) writes ``crds/*.yaml`` from the
  models (``crd_schema`` makes the structural OpenAPI schemas).

Unknown fields are kept (``extra="allow"``) so objects written by newer Volcano releases load
and dump back unchanged; ``model_dump(exclude_unset=True)`` returns a document as written.
"""
