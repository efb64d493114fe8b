# Two commands do all setup on a fresh machine: `make site` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: site test lint venv browser sandbox vendor node bench-lighthouse clean gpu-check mutation

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

# Pyodide for the code drills, served from the site's own origin (the build copies the 5 files a drill
# needs, 12 MB of the package's 13 MB). Pinned; from the npm registry; no install scripts run.
PYODIDE_VERSION := 0.29.3
PYODIDE := .vendor/pyodide/node_modules/pyodide/pyodide.asm.wasm
vendor: $(PYODIDE)

$(PYODIDE):
	npm install --prefix .vendor/pyodide --no-save --no-audit --no-fund --ignore-scripts pyodide@$(PYODIDE_VERSION)
	@test -f $@

# Debian's Chromium drives the browser tests; installed when missing and we are root.
browser:
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || { echo "make: could not install chromium" >&2; exit 1; }; \
	  else echo "make: /usr/bin/chromium missing; install Debian's chromium package" >&2; fi; \
	fi

# axe-core (pinned in package.json and package-lock.json) for the accessibility tests, which inject it in Chromium.
NODE_STAMP := node_modules/.installed-stamp
node: $(NODE_STAMP)

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $(NODE_STAMP)

# Lighthouse 12.2.3 (13 needs Node 22) for bench/lighthouse.py only: not needed by the tests.
bench-lighthouse: $(STAMP) browser
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,bench]'
	cd bench/lighthouse && npm ci --no-audit --no-fund --loglevel=error

# Debian's bubblewrap is the wall around verification scripts (qbank fails closed without it).
sandbox:
	@if [ ! -x /usr/bin/bwrap ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null) \
	      || { echo "make: could not install bubblewrap" >&2; exit 1; }; \
	  else echo "make: /usr/bin/bwrap missing; install Debian's bubblewrap package" >&2; exit 1; fi; \
	fi

site: $(STAMP) sandbox vendor
	$(BIN)/qbank build

lint: $(STAMP)
	$(BIN)/ruff check
	$(BIN)/mypy

test: $(STAMP) browser sandbox vendor node lint
	$(BIN)/python -m pytest -n 2 --dist loadgroup

# On a GPU machine with $$QBANK_GPU_SIGNING_KEY set: every kernel check compiled and timed, results frozen and
# signed into verify/_frozen/ (docs/gpu.md)
gpu-check: $(STAMP) sandbox
	$(BIN)/qbank gpu-check

# Mutation testing of the trust-critical modules (mutation/modules.toml; docs/testing.md). Not part of `make test`:
# hours on two cores. MODULES="render-text paywall-csp" runs only those; JOBS modules run side by side, each in
# its own copy of the tree (one per CPU by default); the report goes to .mutation/report.md.
MODULES ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
MUTATION_STAMP := $(VENV)/.mutation-stamp

$(MUTATION_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,mutation]'
	@touch $(MUTATION_STAMP)

mutation: $(MUTATION_STAMP) sandbox
	$(BIN)/python -m mutation.run --jobs $(JOBS) $(if $(strip $(MODULES)),--only $(MODULES))

clean:
	rm -rf site .qbank .pytest_cache .mypy_cache .ruff_cache .mutation
