"""The live side of the scheduler: informers (raw-JSON list and watch of every kind the cache
tracks), the binder, evictor, status and event writers, and ``LiveScheduler``, which wires them
to the same cache and cycle the simulator runs. (The controllers' kopf handlers come here too.)"""
