"""Pydantic v2 models of Volcano's CRDs and of volcano-scheduler.conf (the edges only)."""
