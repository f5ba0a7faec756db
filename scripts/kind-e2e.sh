#!/usr/bin/env bash
# `make e2e`: volcano-py on a real (kind) cluster, as a user installs it. Needs docker, kind and
# kubectl on PATH; not run in CI (no docker daemon there: `make test-deploy` proves the same
# manifests against the local control plane instead).
#   1. a kind cluster named $KIND_CLUSTER (created if missing; kept afterwards),
#   2. the image `make image` built ($IMAGE) loaded into its nodes,
#   3. deploy/overlays/dev applied with server-side apply; the certificate Job and the three
#      Deployments waited for,
#   4. a Volcano Job of 2 gang members run to Completed through the webhooks and the scheduler.
# Delete the cluster with: kind delete cluster --name "$KIND_CLUSTER"
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE=${IMAGE:?set IMAGE (make e2e does)}
KIND_CLUSTER=${KIND_CLUSTER:-volcano-py}
for tool in docker kind kubectl; do
  command -v "$tool" >/dev/null || { echo "kind-e2e: $tool is not on PATH" >&2; exit 3; }
done
say() { echo "kind-e2e: $*" >&2; }

if ! kind get clusters | grep -qx "$KIND_CLUSTER"; then
  say "creating kind cluster $KIND_CLUSTER"
  kind create cluster --name "$KIND_CLUSTER" --wait 120s
fi
kubectl config use-context "kind-$KIND_CLUSTER" >/dev/null
say "loading $IMAGE"
kind load docker-image "$IMAGE" --name "$KIND_CLUSTER"

say "applying deploy/overlays/dev"
kubectl apply --server-side --force-conflicts -k deploy/overlays/dev
kubectl -n volcano-system wait --for=condition=complete job/volcano-py-webhooks-certgen --timeout=180s
for deployment in volcano-scheduler volcano-py-controllers volcano-py-webhooks; do
  kubectl -n volcano-system rollout status "deployment/$deployment" --timeout=180s
done

# The scheduler creates the default queue at start; the Job below names none (webhook default).
kubectl wait --for=create queue.scheduling.volcano.sh/default --timeout=60s

namespace=volcano-py-e2e
kubectl create namespace "$namespace" --dry-run=client -o yaml | kubectl apply -f -
kubectl -n "$namespace" delete job.batch.volcano.sh/gang --ignore-not-found --wait=true
say "running a gang job of 2"
kubectl -n "$namespace" apply -f - <<'JOB'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gang
spec:
  minAvailable: 2
  schedulerName: volcano
  tasks:
    - name: worker
      replicas: 2
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: main
              image: busybox:1.36
              command: [sh, -c, "sleep 5"]
              resources:
                requests:
                  cpu: 10m
JOB
# The mutating webhook gave it the default queue: proof the API server called it over TLS.
test "$(kubectl -n "$namespace" get job.batch.volcano.sh/gang -o jsonpath='{.spec.queue}')" = default
kubectl -n "$namespace" wait job.batch.volcano.sh/gang \
  --for=jsonpath='{.status.state.phase}'=Completed --timeout=300s
say "ok: the gang job completed"
