"""kopf handlers and the live API-server adapters (binder, evictor, status writer)."""
