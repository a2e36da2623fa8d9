# Every target creates .venv and installs what it needs by itself.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: test test-all test-versions demo bench lab lint typecheck format clean

# Python writes the bytecode of what it imports, whatever the shell says: with
# PYTHONDONTWRITEBYTECODE set, every test worker, kernel and command compiled each module it
# imported on every run, and pytest rewrote every test module's asserts in every worker (9 s of
# CPU each, of 15 s collecting). Compiling all 170-odd packages up front instead took 30 s (50 s
# of CPU) for modules most runs never import.
unexport PYTHONDONTWRITEBYTECODE

# uv lays the developers' packages into a new venv in seconds where pip takes most of a minute;
# what gets installed is the same resolution of pyproject.toml's bounds. The venv starts without
# pip (ensurepip took 8 s): the Python's own pip puts uv in, or, if it has none, ensurepip does,
# and uv adds pip with the rest.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv --without-pip $(VENV)
	$(PYTHON) -m pip --python $(PY) install --quiet 'uv>=0.9' 2>/dev/null \
	  || { $(PY) -m ensurepip --default-pip > /dev/null && $(PY) -m pip install --quiet 'uv>=0.9'; }
	$(VENV)/bin/uv pip install --quiet --python $(PY) pip -e '.[dev]'
	touch $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# the package ships py.typed: its types are checked ([tool.mypy] in pyproject.toml)
typecheck: $(STAMP)
	$(VENV)/bin/mypy

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# mypy runs beside pytest, into a log shown when both are done: the suite waits on real time
# (deadlines, kernels, servers) for a share of its run, and mypy takes that idle CPU. Either
# failing fails the target. One collection goes first, beside mypy too: it writes the bytecode
# (test modules' rewritten asserts included) the workers would otherwise each compile at once.
# tests/_site on PYTHONPATH: a stand-in that keeps jsonschema from building rfc3987_syntax's IRI
# grammar (3.5 s of CPU) in every process of the suite that imports nbformat (tests/_site says why)
TEST_ENV := PYTHONPATH=$(CURDIR)/tests/_site$${PYTHONPATH:+:$$PYTHONPATH}

test: $(STAMP) lint
	@# CI must run the browser tests: it installs Debian's Chromium (headless shell) if none is there.
	@if [ "$$CI" = "true" ]; then bash scripts/install-browser.sh; fi
	@$(VENV)/bin/mypy > $(VENV)/mypy.log 2>&1 & types=$$!; \
	$(TEST_ENV) $(PY) -m pytest --collect-only -q -n 0 -p no:cacheprovider > /dev/null 2>&1; \
	$(TEST_ENV) $(PY) -m pytest; tests=$$?; \
	wait $$types; typed=$$?; \
	echo "mypy:"; cat $(VENV)/mypy.log; \
	exit $$((tests || typed))

# the slow sweeps too (400 random dialects) and every fuzzer's full example count
test-all: $(STAMP) lint typecheck
	SVCNB_HYPOTHESIS_PROFILE=svcnb-all $(TEST_ENV) $(PY) -m pytest -m ""

# the wheel, built once, installed on each of Python 3.11, 3.12 and 3.13 this machine has (3.10,
# if there, must be refused), in new venvs outside the repository: the quick start and the help
test-versions: $(STAMP)
	$(PY) scripts/check_versions.py

# In the repository the notebooks are worked on where they are (nbval checks them there):
# --notebooks notebooks, instead of the copies `svcnb demo` and `svcnb lab` make for users.
demo: $(STAMP)
	$(PY) -m svcnb demo --notebooks notebooks

# Each bench exits 1 when it misses its target: every one runs and says PASS or FAIL by that;
# the helpers the benches import (no __main__) are no bench.
bench: $(STAMP)
	@failed=; for f in bench/*.py; do grep -q '^if __name__ == "__main__":' $$f || continue; \
	  echo "== $$f"; if $(PY) $$f; then echo "== $$f: PASS"; \
	  else echo "== $$f: FAIL"; failed="$$failed $$f"; fi; done; \
	if [ -n "$$failed" ]; then echo "make bench: FAIL:$$failed"; exit 1; fi; echo "make bench: PASS"

lab: $(STAMP)
	$(PY) -m svcnb lab --notebooks notebooks

clean:
	rm -rf $(VENV) out .pytest_cache .mypy_cache
