"""The in-memory cluster and the `volcano-py simulate` engine."""
