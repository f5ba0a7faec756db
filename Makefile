# volcano-py: every target sets up what it needs (a virtualenv in .venv from pyproject.toml).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
SETUP  := $(VENV)/.installed
K8S_BINS := scripts/k8s-test-bins.sh
DEPLOY_BINS := scripts/deploy-test-bins.sh
# The image deploy/ and the Helm chart name (tests/operator/test_install_manifests.py keeps them
# equal): volcano-py:<the package version>.
VERSION := $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' volcano_py/__init__.py)
IMAGE   ?= volcano-py:$(VERSION)
IMAGE_ARCHIVE ?= build/$(subst /,_,$(subst :,_,$(IMAGE))).tar

.PHONY: setup demo test test-unit test-cluster test-deploy test-image lint crds crds-check bench \
	bench-e2e bench-churn bench-side-by-side bench-controller-rate bench-restart bench-watch-load cluster image e2e clean

setup: $(SETUP)

$(SETUP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@# An editable install leaves the package's bytecode unwritten: where Python does not write
	@# it either (PYTHONDONTWRITEBYTECODE, a read-only checkout) every process would compile
	@# its ~300 modules again, over a second of CPU before simulate reads its input.
	$(BIN)/python -m compileall -q volcano_py
	@touch $@

## The main job on the embedded default: the offline scheduler on a bundled example.
demo: setup
	$(BIN)/volcano-py simulate examples/gang-deadlock.yaml --format table

## Everything CI runs: unit tests, scenario tests, the cluster tests (real kube-apiserver,
## etcd and kwok) and the install test (make test-deploy: kubectl and helm), the Go tools built
## once from their Go modules and cached under ~/.cache.
test: setup
	@VK8S_BIN_DIR="$$(bash $(K8S_BINS) | tail -n 1)" || VK8S_BIN_DIR=""; \
	  VK8S_DEPLOY_BIN_DIR="$$(bash $(DEPLOY_BINS) | tail -n 1)" || VK8S_DEPLOY_BIN_DIR=""; \
	  export VK8S_BIN_DIR VK8S_DEPLOY_BIN_DIR; \
	  $(BIN)/pytest; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; fi; exit $$rc

test-unit: setup
	$(BIN)/pytest -m "not cluster"

test-cluster: setup
	@VK8S_BIN_DIR="$$(bash $(K8S_BINS) | tail -n 1)"; export VK8S_BIN_DIR; \
	  $(BIN)/pytest -m cluster

## deploy/ and the Helm chart, rendered (kubectl kustomize, helm template), applied with
## server-side apply to the local control plane, and run: the three processes as the shipped
## ServiceAccounts, the webhooks called by the API server over TLS with the generated CA, a
## gang job scheduled (tests/cluster/test_deploy_install.py).
test-deploy: setup
	@VK8S_BIN_DIR="$$(bash $(K8S_BINS) | tail -n 1)"; \
	  VK8S_DEPLOY_BIN_DIR="$$(bash $(DEPLOY_BINS) | tail -n 1)"; \
	  export VK8S_BIN_DIR VK8S_DEPLOY_BIN_DIR; \
	  $(BIN)/pytest tests/cluster/test_deploy_install.py

lint: setup
	$(BIN)/ruff check volcano_py tests bench e2e scripts
	$(BIN)/mypy --strict volcano_py scripts/imagebuild
	$(BIN)/lint-imports

## Regenerate crds/*.yaml from the pydantic models (a test fails when they drift).
crds: setup
	$(BIN)/python -m volcano_py.models.crdgen crds

crds-check: setup
	$(BIN)/python -m volcano_py.models.crdgen crds --check

bench: setup
	$(BIN)/python -m bench

bench-e2e: setup
	@VK8S_BIN_DIR="$$(bash $(K8S_BINS) | tail -n 1)"; export VK8S_BIN_DIR; \
	  $(BIN)/python -m bench.e2e

## volcano-py against Volcano's vc-scheduler on one control plane: VOLCANO_SCHEDULER=/path/to/vc-scheduler
bench-side-by-side: setup
	@VK8S_BIN_DIR="$$(bash $(K8S_BINS) | tail -n 1)"; export VK8S_BIN_DIR; \
	  $(BIN)/python -m bench side-by-side $(ARGS)

## The live job controller's pod-creation rate on one 10k-pod job
bench-controller-rate: setup
	@VK8S_BIN_DIR="$$(bash $(K8S_BINS) | tail -n 1)"; export VK8S_BIN_DIR; \
	  $(BIN)/python -m bench controller-rate $(ARGS)

## The live scheduler restarted on 5k nodes / 150k pods: time to its first session, RSS
bench-restart: setup
	@VK8S_BIN_DIR="$$(bash $(K8S_BINS) | tail -n 1)"; export VK8S_BIN_DIR; \
	  $(BIN)/python -m bench restart $(ARGS)

## The live scheduler's sessions, quiet and under a busy watch stream (issue 14)
bench-watch-load: setup
	@VK8S_BIN_DIR="$$(bash $(K8S_BINS) | tail -n 1)"; export VK8S_BIN_DIR; \
	  $(BIN)/python -m bench watch-load $(ARGS)

bench-churn: setup
	@VK8S_BIN_DIR="$$(bash $(K8S_BINS) | tail -n 1)"; export VK8S_BIN_DIR; \
	  $(BIN)/python -m bench churn $(ARGS)

## A local control plane for people: kube-apiserver + etcd + kwok on loopback, our CRDs, kwok nodes.
cluster: setup
	@VK8S_BIN_DIR="$$(bash $(K8S_BINS) | tail -n 1)"; export VK8S_BIN_DIR; \
	  $(BIN)/python -m e2e.controlplane

## The image deploy/ and the chart name, built without a container engine, a registry or root
## (scripts/build_image.py): Debian trixie's Python 3.13 unpacked from its .debs, the wheels on
## top, user 65532, no pip or compiler. Writes $(IMAGE_ARCHIVE), which `docker load -i` and
## `kind load image-archive` read; downloads are cached under ~/.cache/volcano-py-image.
image: setup
	$(BIN)/python scripts/build_image.py --tag $(IMAGE) --output $(IMAGE_ARCHIVE)

## The image built and run unpacked, as its user (chroot; part of `make test`).
test-image: setup
	$(BIN)/pytest tests/image

## For users with docker (or podman) and kind, not run in CI: a kind cluster, the image loaded
## into it, deploy/overlays/dev applied, and a gang job run to completion. Stops at once, saying
## so, when no container engine answers (scripts/kind-e2e.sh).
e2e: setup
	IMAGE=$(IMAGE) IMAGE_ARCHIVE=$(IMAGE_ARCHIVE) PYTHON=$(BIN)/python bash scripts/kind-e2e.sh

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
