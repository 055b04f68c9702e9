# `make run` serves the example function on port 8080; `make test` runs every test CI runs;
# `make docs` builds the documentation site into build/site, failing on any broken link.
# `make bench` runs the benchmark (docs/performance.md; `make bench BENCH_ARGS=--quick` for a short run).
# `make soak` runs the 10-minute soak (docs/reliability.md; `make soak SOAK_SECONDS=60` for a short one).
# `make mutation` runs mutation testing of the core modules (docs/reliability.md; about an hour, not in CI).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= test,docs,waitress,granian

.PHONY: setup run test docs bench settings-doc clean test-cloudevents-1 soak mutation

$(VENV)/.installed-$(EXTRAS): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[$(EXTRAS)]'
	touch $@

setup: $(VENV)/.installed-$(EXTRAS)

run: setup
	HANDLER_FOLDER=examples/hello SERVER_PORT=8080 $(VENV)/bin/funcwsgi serve

test: setup
	$(PY) -m pytest -q
	$(MAKE) test-cloudevents-1
	$(MAKE) test-container

# The runtime image and a function image built and run by a real docker: starts
# its own dockerd, makes the python:3.14-slim stand-in with debootstrap (cached in
# ~/.cache/funcwsgi-test), needs root, docker.io and debootstrap; fails, naming the reason, without.
.PHONY: test-container
test-container: setup
	FUNCWSGI_CONTAINER_TESTS=1 $(PY) -m pytest -q -rs tests/container

docs: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir build/site

# The CloudEvent tests against the 1.x generation of the cloudevents library
# (the default install gets 2.x), in a virtual environment of their own. The
# 1.x generation comes with functions-framework, which pins it: that proves a
# function's old-platform requirements install next to funcwsgi.
CE1_VENV ?= .venv-cloudevents1
CLOUDEVENTS_TESTS ?= tests/compat/test_cloudevents_lib.py tests/middleware/test_cloudevents.py tests/test_sdk.py \
	tests/compat/test_legacy.py tests/corpus/test_kyma_eventing.py tests/corpus/test_functions_framework_library.py \
	tests/conformance/test_cloudevents.py
test-cloudevents-1:
	$(MAKE) setup VENV=$(CE1_VENV)
	$(CE1_VENV)/bin/python -m pip install --quiet 'functions-framework>=3.5,<4' 'cloudevents>=1.10,<2'
	$(CE1_VENV)/bin/python -m pytest -q $(CLOUDEVENTS_TESTS)

bench: setup
	$(PY) -m bench $(BENCH_ARGS)

# A bounded soak: 32 connections of mixed calls against gunicorn for SOAK_SECONDS (10 minutes),
# then the figures (calls, statuses, latencies, each worker's memory, threads and descriptors).
SOAK_SECONDS ?= 600
soak: setup
	$(PY) -m tests.reliability.soak --seconds $(SOAK_SECONDS)

# Mutation testing of the core modules (not in CI; about an hour): cosmic-ray mutates a copy of
# the checkout under build/mutation and runs each module's tests against every mutant; a rerun
# resumes. `make mutation MUTATION_ARGS="timeout metrics"` for some targets (tests/mutation.py).
mutation: setup
	$(PY) -m pip install --quiet -e '.[mutation]'
	$(PY) -m tests.mutation $(MUTATION_ARGS)

settings-doc: setup
	$(PY) -m funcwsgi.cli.settings_doc docs/configuration.md

clean:
	rm -rf $(VENV) $(CE1_VENV) build *.egg-info .pytest_cache .bench-cache
