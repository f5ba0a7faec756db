#!/usr/bin/env bash
# `make e2e`: volcano-py on a real (kind) cluster, as a user installs it. Needs kind, kubectl and
# a running container engine kind can use (docker, or podman with KIND_EXPERIMENTAL_PROVIDER);
# not run in CI (no container engine there: `make test-deploy` proves the same manifests
# against the local control plane, `make test-image` runs the image unpacked). Stops before
# doing anything, saying why, when a tool is missing or no engine answers.
#   1. the image built (scripts/build_image.py: $IMAGE written to $IMAGE_ARCHIVE; no engine is
#      needed for that),
#   2. a kind cluster named $KIND_CLUSTER (created if missing; kept afterwards),
#   3. the archive loaded into its nodes (kind load image-archive),
#   4. deploy/overlays/dev applied with server-side apply; the certificate Job and the three
#      Deployments waited for,
#   5. a Volcano Job of 2 gang members run to Completed through the webhooks and the scheduler.
# Delete the cluster with: kind delete cluster --name "$KIND_CLUSTER"
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE=${IMAGE:?set IMAGE (make e2e does)}
IMAGE_ARCHIVE=${IMAGE_ARCHIVE:?set IMAGE_ARCHIVE (make e2e does)}
PYTHON=${PYTHON:-python3}
KIND_CLUSTER=${KIND_CLUSTER:-volcano-py}
say() { echo "kind-e2e: $*" >&2; }
for tool in kind kubectl; do
  command -v "$tool" >/dev/null || { say "$tool is not on PATH (https://kind.sigs.k8s.io)"; exit 3; }
done
# kind runs its nodes as containers of this engine.
engine=docker
[[ "${KIND_EXPERIMENTAL_PROVIDER:-}" == podman ]] && engine=podman
if ! command -v "$engine" >/dev/null; then
  say "$engine is not on PATH: kind needs a container engine"
  exit 3
fi
if ! engine_error=$("$engine" info 2>&1 >/dev/null); then
  say "no $engine engine answers, so kind cannot create a cluster here; start one (or set"
  say "DOCKER_HOST), or prove the manifests without one: make test-deploy, make test-image."
  say "$engine said: $(echo "$engine_error" | tail -n 1)"
  exit 3
fi

say "building $IMAGE"
"$PYTHON" scripts/build_image.py --tag "$IMAGE" --output "$IMAGE_ARCHIVE" >/dev/null

if ! kind get clusters | grep -qx "$KIND_CLUSTER"; then
  say "creating kind cluster $KIND_CLUSTER"
  kind create cluster --name "$KIND_CLUSTER" --wait 120s
fi
kubectl config use-context "kind-$KIND_CLUSTER" >/dev/null
say "loading $IMAGE_ARCHIVE"
kind load image-archive "$IMAGE_ARCHIVE" --name "$KIND_CLUSTER"

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
