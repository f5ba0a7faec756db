"""Job, PodGroup, Queue and HyperNode controllers as pure state machines."""
