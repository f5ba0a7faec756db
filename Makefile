# volcano-py: every target sets up what it needs (a virtualenv in .venv from pyproject.toml).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
SETUP  := $(VENV)/.installed
K8S_BINS := scripts/k8s-test-bins.sh

.PHONY: setup demo test test-unit test-cluster lint crds crds-check bench bench-e2e cluster e2e clean

setup: $(SETUP)

$(SETUP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $@

## The main job on the embedded default: the offline scheduler on a bundled example.
demo: setup
	$(BIN)/volcano-py simulate examples/gang-deadlock.yaml --format table

## Everything CI runs: unit tests, scenario tests and the cluster tests (real kube-apiserver,
## etcd and kwok, built once from their Go modules and cached under ~/.cache).
test: setup
	@VK8S_BIN_DIR="$$(bash $(K8S_BINS) | tail -n 1)" || VK8S_BIN_DIR=""; \
	  export VK8S_BIN_DIR; \
	  $(BIN)/pytest; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; fi; exit $$rc

test-unit: setup
	$(BIN)/pytest -m "not cluster"

test-cluster: setup
	@VK8S_BIN_DIR="$$(bash $(K8S_BINS) | tail -n 1)"; export VK8S_BIN_DIR; \
	  $(BIN)/pytest -m cluster

lint: setup
	$(BIN)/ruff check volcano_py tests bench e2e
	$(BIN)/mypy --strict volcano_py
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

## A local control plane for people: kube-apiserver + etcd + kwok on loopback, our CRDs, kwok nodes.
cluster: setup
	@VK8S_BIN_DIR="$$(bash $(K8S_BINS) | tail -n 1)"; export VK8S_BIN_DIR; \
	  $(BIN)/python -m e2e.controlplane

## The user-facing end-to-end path against a kind cluster (needs docker + kind; not runnable here).
e2e: setup
	$(BIN)/pytest e2e -m e2e

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
