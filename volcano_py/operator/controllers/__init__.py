"""The live controller process (``volcano-py controllers``): Volcano's vc-controller-manager
driving the pure state machines of ``volcano_py.controllers`` against a real API server.

* ``kinds``: the watched kinds and the REST paths of everything written;
* ``store``: the objects the informers delivered, with the lookups the controllers need;
* ``workqueue``: per-key serialised work, as client-go's workqueue;
* ``jobs``: watch events -> ``JobRequest``s, ``sync_job``, ``JobChanges`` -> API writes;
* ``podgroups``: a PodGroup for plain pods of ours;
* ``queues``: the Queue controller (states from Commands and spec);
* ``process``: informers, workers, leader election and endpoints wired into one process;
* ``rbac``: every request the process makes, as RBAC rules (``deploy/base`` grants them).

``volcano_py.sim.engine`` drives the same functions offline and is the reference for what
happens on each event.
"""
