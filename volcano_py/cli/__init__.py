"""The `volcano-py` command."""
