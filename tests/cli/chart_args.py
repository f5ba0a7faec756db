"""The arguments Volcano's Helm chart (installer/helm/chart/volcano/templates) passes to each
process, every optional one switched on, with values of our own choosing."""

from __future__ import annotations

SCHEDULER = [
    "--logtostderr",
    "--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf",
    "--scheduler-name=volcano",
    "--enable-healthz=true",
    "--enable-metrics=true",
    "--enable-pprof=true",
    "--leader-elect=true",
    "--leader-elect-resource-namespace=volcano-system",
    "--kube-api-qps=2000",
    "--kube-api-burst=2000",
    "--schedule-period=1s",
    "--node-worker-threads=20",
    "--percentage-nodes-to-find=30",
    "--feature-gates=PodDisruptionBudgetsSupport=false,ResourceTopology=false",
    "--ignored-provisioners=rancher.io/local-path,hostpath.csi.k8s.io",
    "--scheduler-sharding-mode=none",
    "--plugins-dir=/plugins",
    "-v=3",
    "2>&1",
]

CONTROLLERS = [
    "--logtostderr",
    "--enable-healthz=true",
    "--enable-metrics=true",
    "--leader-elect=true",
    "--scheduler-name=volcano",
    "--leader-elect-resource-namespace=volcano-system",
    "--kube-api-qps=50",
    "--kube-api-burst=100",
    "--worker-threads=3",
    "--worker-threads-for-gc=1",
    "--worker-threads-for-podgroup=5",
    "--sharding-configmap=volcano-sharding-configmap",
    "--sharding-configmap-namespace=volcano-system",
    "--controllers=*,-sharding-controller,-hyperNode-controller",
    "-v=4",
    "2>&1",
]

WEBHOOKS = [
    "--enabled-admission=/jobs/mutate,/jobs/validate,/podgroups/mutate,/pods/validate,"
    "/pods/mutate,/queues/mutate,/queues/validate,/hypernodes/validate",
    "--tls-cert-file=/admission.local.config/certificates/tls.crt",
    "--tls-private-key-file=/admission.local.config/certificates/tls.key",
    "--ca-cert-file=/admission.local.config/certificates/ca.crt",
    "--admission-conf=/admission.local.config/configmap/volcano-admission.conf",
    "--webhook-namespace=volcano-system",
    "--webhook-service-name=volcano-admission-service",
    "--scheduler-name=volcano",
    "--feature-gates=SchedulingGatesQueueAdmission=false",
    "--enable-healthz=true",
    "--logtostderr",
    "--port=8443",
    "-v=4",
    "2>&1",
]
