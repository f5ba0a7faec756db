"""SchedulerCache: one event-fed copy of the cluster, snapshotted for each session."""
