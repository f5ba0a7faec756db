#!/usr/bin/env bash
# Builds scripts/archive-check (containerd's image importer and go-containerregistry's
# docker-archive reader, run on the archive `make image` writes; tests/image uses it) from its Go
# module, pinned by archive-check/go.sum. The binary lands in
#   ${ARCHIVE_CHECK_DIR:-$HOME/.cache/vk8s-bin/archive-check-<hash of its sources>}
# and a second run with the same sources does nothing. Prints the binary's path on its last
# line of stdout; exits 3 (and says why) when Go is absent. Cold: about a minute; warm: instant.
set -euo pipefail
cd "$(dirname "$0")/archive-check"
STAMP=$(cat go.mod go.sum main.go | sha256sum | cut -c1-12)
OUT=${ARCHIVE_CHECK_DIR:-$HOME/.cache/vk8s-bin/archive-check-$STAMP}
if [[ -x "$OUT/archive-check" ]]; then
  echo "$OUT/archive-check"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "archive-check-bin: Go is not installed; cannot build the archive checker" >&2
  exit 3
fi
mkdir -p "$OUT"
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod
export GOMODCACHE=${GOMODCACHE:-$HOME/.cache/vk8s-go/mod}
export GOCACHE=${GOCACHE:-$HOME/.cache/vk8s-go/build}
exec 9>"$OUT.lock"
flock 9
if [[ ! -x "$OUT/archive-check" ]]; then
  echo "archive-check-bin: building into $OUT" >&2
  go build -trimpath -ldflags "-s -w" -o "$OUT/archive-check.tmp" . >&2
  mv "$OUT/archive-check.tmp" "$OUT/archive-check"
fi
echo "$OUT/archive-check"
