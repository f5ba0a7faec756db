"""volcano-py: a Volcano-compatible batch scheduler for Kubernetes."""

__version__ = "0.1.0"
