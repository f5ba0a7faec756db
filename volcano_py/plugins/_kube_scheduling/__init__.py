"""Kubernetes pod and node scheduling semantics shared by the predicates and nodeorder plugins
(upstream both take them from kube-scheduler's framework): pod spec access, node selectors and
affinity, taints, the session's pods per node, pod (anti-)affinity and topology spread
bookkeeping. A shared helper package, not a plugin: any plugin may import it, and it imports no
plugin."""
