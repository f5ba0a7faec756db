#!/usr/bin/env bash
# Builds the install tools that `make test-deploy` renders and applies deploy/ with: kubectl
# (its built-in kustomize renders deploy/) and helm (renders deploy/helm/volcano-py), from their
# published Go modules, pinned. The sibling of k8s-test-bins.sh, and built the same way into
#   ${VK8S_DEPLOY_BIN_DIR:-$HOME/.cache/vk8s-bin/<stamp>}
# so that a second run with the same pins does nothing. Nothing it builds is part of the product.
#
# Both are built in one throw-away module: kubectl is k8s.io/kubernetes/cmd/kubectl at the
# control plane's version (its staging modules are the ones kube-apiserver was built from, so
# Go's build cache already holds most of them), and helm's k8s.io requirements (v0.34.x) resolve
# to the same versions.
#
# Prints the binary directory on its last line of stdout (progress goes to stderr, Go's own
# output to a log beside it). Exits 3 (and says why) when Go is absent. Concurrent runs wait for
# each other (flock). Cold: see README ("Build times"); warm: milliseconds.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.34.4}
HELM_VERSION=${HELM_VERSION:-3.19.5}
STAMP="deploy_kubectl-${K8S_VERSION}_helm-${HELM_VERSION}"
OUT=${VK8S_DEPLOY_BIN_DIR:-$HOME/.cache/vk8s-bin/$STAMP}

complete() {
  [[ -x "$OUT/kubectl" && -x "$OUT/helm" && -f "$OUT/.complete" ]]
}
if complete; then
  echo "$OUT"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "deploy-test-bins: Go is not installed; cannot build kubectl/helm" >&2
  exit 3
fi

mkdir -p "$OUT"
log() { echo "deploy-test-bins: $(date -u +%H:%M:%S) $*" >&2; }

if command -v flock >/dev/null 2>&1; then
  exec 9>"$OUT.lock"
  if ! flock -n 9; then
    log "another build into $OUT is running; waiting for it"
    flock 9
  fi
  if complete; then
    echo "$OUT"
    exit 0
  fi
fi

export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod
export GOMODCACHE=${GOMODCACHE:-$HOME/.cache/vk8s-go/mod}
export GOCACHE=${GOCACHE:-$HOME/.cache/vk8s-go/build}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

prepare_module() {
  cd "$WORK"
  go mod init local/deploybins >/dev/null 2>&1
  # k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with local
  # paths; a consumer must replace each with the published v0.<minor>.<patch>.
  local gomod
  gomod=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')
  for module in $(sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/.*#\1#p' "$gomod"); do
    go mod edit -replace="$module=$module@v0.${K8S_VERSION#1.}"
  done
  go get "k8s.io/kubernetes/cmd/kubectl@v$K8S_VERSION" "helm.sh/helm/v3/cmd/helm@v$HELM_VERSION"
}

build_kubectl() {
  [[ -x "$OUT/kubectl" ]] && return 0
  local minor version_pkg ldflags
  minor=$(echo "$K8S_VERSION" | cut -d. -f2)
  version_pkg=k8s.io/component-base/version
  ldflags="-s -w -X $version_pkg.gitVersion=v$K8S_VERSION -X $version_pkg.gitMajor=1"
  ldflags="$ldflags -X $version_pkg.gitMinor=$minor -X $version_pkg.gitTreeState=clean"
  (cd "$WORK" && go build -trimpath -ldflags "$ldflags" -o "$OUT/kubectl.tmp" \
    k8s.io/kubernetes/cmd/kubectl)
  mv "$OUT/kubectl.tmp" "$OUT/kubectl"
}

build_helm() {
  [[ -x "$OUT/helm" ]] && return 0
  # As helm's Makefile: its version, and the Kubernetes version `helm template` assumes
  # (that of its client-go, v0.<minor> -> 1.<minor>) instead of the v1.20 fallback.
  local minor ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=v$HELM_VERSION"
  minor=$(echo "$K8S_VERSION" | cut -d. -f2)
  for package in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    ldflags="$ldflags -X $package.k8sVersionMajor=1 -X $package.k8sVersionMinor=$minor"
  done
  (cd "$WORK" && go build -trimpath -ldflags "$ldflags" -o "$OUT/helm.tmp" \
    helm.sh/helm/v3/cmd/helm)
  mv "$OUT/helm.tmp" "$OUT/helm"
}

BUILD_LOG="$OUT.build.log"
: >"$BUILD_LOG"
timed() {
  local name=$1 began=$SECONDS
  shift
  log "$name: building (go's output in $BUILD_LOG)"
  if ! "$@" >>"$BUILD_LOG" 2>&1; then
    log "$name: build failed; the last lines of $BUILD_LOG:"
    tail -n 40 "$BUILD_LOG" >&2
    exit 1
  fi
  log "$name: ready ($((SECONDS - began))s)"
}

log "building into $OUT with $(go version) (cold: minutes; warm: milliseconds)"
began=$SECONDS
timed module prepare_module
timed kubectl build_kubectl
timed helm build_helm
"$OUT/kubectl" version --client >&2
"$OUT/helm" version --short >&2
echo "kubectl=$K8S_VERSION helm=$HELM_VERSION built=$(date -u +%FT%TZ) seconds=$((SECONDS - began))" >"$OUT/.complete"
log "done in $((SECONDS - began))s"
echo "$OUT"
