"""End-to-end harnesses: a real control plane on loopback (`e2e.controlplane`) for the cluster
tests and for `make cluster`."""
