"""The live side of the scheduler: informers (raw-JSON list and watch of every kind the cache
tracks), the binder, evictor, status and event writers, and ``LiveScheduler``, which wires them
to the same cache and cycle the simulator runs; the live controllers (``controllers``) and the
admission webhooks (``webhooks``) on the same informers and HTTP client."""
