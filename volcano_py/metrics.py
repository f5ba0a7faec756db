"""Volcano-named Prometheus metrics (subsystem ``volcano``)."""
