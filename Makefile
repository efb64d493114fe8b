# Two commands do all setup on a fresh machine: `make site` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: site test lint venv browser sandbox node bench-lighthouse clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

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
	cd bench/lighthouse && npm ci --no-audit --no-fund --loglevel=error

# Debian's bubblewrap is the wall around verification scripts (qbank fails closed without it).
sandbox:
	@if [ ! -x /usr/bin/bwrap ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null) \
	      || { echo "make: could not install bubblewrap" >&2; exit 1; }; \
	  else echo "make: /usr/bin/bwrap missing; install Debian's bubblewrap package" >&2; exit 1; fi; \
	fi

site: $(STAMP) sandbox
	$(BIN)/qbank build

lint: $(STAMP)
	$(BIN)/ruff check
	$(BIN)/mypy

test: $(STAMP) browser sandbox node lint
	$(BIN)/python -m pytest -n 2 --dist loadgroup

clean:
	rm -rf site .qbank .pytest_cache .mypy_cache .ruff_cache
