"""The scheduler's data model: resources, tasks, jobs, nodes, queues, HyperNodes. No I/O."""
