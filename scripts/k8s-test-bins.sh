#!/usr/bin/env bash
# Builds the real control plane that the cluster tests run against: kube-apiserver, etcd and
# kwok, from their published Go modules, pinned. The binaries land in
#   ${VK8S_BIN_DIR:-$HOME/.cache/vk8s-bin/<stamp>}
# and a second run with the same pins does nothing. Go is used only here, to build test tools;
# nothing it builds is part of the product or committed.
#
# Prints the binary directory on its last line of stdout (progress goes to stderr). Exits 3
# (and says why) when Go is absent. Concurrent runs wait for each other (flock), so `make test`
# started while a build is under way reuses that build instead of starting a second one.
# Cold: ~20-30 min on 2 cores (kube-apiserver dominates); warm: milliseconds.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.34.4}
ETCD_VERSION=${ETCD_VERSION:-3.6.5}
KWOK_VERSION=${KWOK_VERSION:-0.7.0}
STAMP="k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}"
OUT=${VK8S_BIN_DIR:-$HOME/.cache/vk8s-bin/$STAMP}

complete() {
  [[ -x "$OUT/kube-apiserver" && -x "$OUT/etcd" && -x "$OUT/kwok" && -f "$OUT/.complete" ]]
}
if complete; then
  echo "$OUT"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "k8s-test-bins: Go is not installed; cannot build kube-apiserver/etcd/kwok" >&2
  exit 3
fi

mkdir -p "$OUT"
log() { echo "k8s-test-bins: $(date -u +%H:%M:%S) $*" >&2; }

# One build at a time per output directory; a waiter finds the work done.
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
WORKDIRS=()
cleanup() { [[ ${#WORKDIRS[@]} -eq 0 ]] || rm -rf "${WORKDIRS[@]}"; }
trap cleanup EXIT
new_workdir() { # sets WORK (no command substitution: WORKDIRS must grow in this shell)
  WORK=$(mktemp -d)
  WORKDIRS+=("$WORK")
}

build_apiserver() {
  [[ -x "$OUT/kube-apiserver" ]] && return 0
  local work minor gomod ldflags version_pkg
  new_workdir
  work=$WORK
  minor=$(echo "$K8S_VERSION" | cut -d. -f2)
  (
    cd "$work"
    go mod init local/k8sbins >/dev/null 2>&1
    # k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with local
    # paths; a consumer must replace each with the published v0.<minor>.<patch>.
    gomod=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')
    for module in $(sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) => \./staging/.*#\1#p' "$gomod"); do
      go mod edit -replace="$module=$module@v0.${K8S_VERSION#1.}"
    done
    go get "k8s.io/kubernetes/cmd/kube-apiserver@v$K8S_VERSION" >&2
    version_pkg=k8s.io/component-base/version
    ldflags="-s -w -X $version_pkg.gitVersion=v$K8S_VERSION -X $version_pkg.gitMajor=1"
    ldflags="$ldflags -X $version_pkg.gitMinor=$minor -X $version_pkg.gitTreeState=clean"
    go build -trimpath -ldflags "$ldflags" -o "$OUT/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
    mv "$OUT/kube-apiserver.tmp" "$OUT/kube-apiserver"
  )
}

build_etcd() {
  [[ -x "$OUT/etcd" ]] && return 0
  local work
  new_workdir
  work=$WORK
  (
    cd "$work"
    go mod init local/etcdbin >/dev/null 2>&1
    # etcd's server module carries replace directives, so `go install` refuses it; built as a
    # dependency of a throw-away module, those replaces are ignored.
    go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >&2
    go build -trimpath -ldflags "-s -w" -o "$OUT/etcd.tmp" go.etcd.io/etcd/server/v3
    mv "$OUT/etcd.tmp" "$OUT/etcd"
  )
}

build_kwok() {
  [[ -x "$OUT/kwok" ]] && return 0
  GOBIN="$OUT" GOFLAGS= go install "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION"
}

# Go's own progress (hundreds of "go: added ..." lines) goes to a log; a failure shows its tail.
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

log "building into $OUT with $(go version) (cold: tens of minutes; warm: milliseconds)"
began=$SECONDS
timed etcd build_etcd
timed kwok build_kwok
timed kube-apiserver build_apiserver
"$OUT/kube-apiserver" --version >&2
echo "k8s=$K8S_VERSION etcd=$ETCD_VERSION kwok=$KWOK_VERSION built=$(date -u +%FT%TZ) seconds=$((SECONDS - began))" >"$OUT/.complete"
log "done in $((SECONDS - began))s"
echo "$OUT"
