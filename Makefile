# `make run` serves the example function on port 8080; `make test` runs every test CI runs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= test

.PHONY: setup run test settings-doc clean

$(VENV)/.installed-$(EXTRAS): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[$(EXTRAS)]'
	touch $@

setup: $(VENV)/.installed-$(EXTRAS)

run: setup
	HANDLER_FOLDER=examples/hello SERVER_PORT=8080 $(VENV)/bin/gunicorn funcwsgi:app

test: setup
	$(PY) -m pytest -q

settings-doc: setup
	$(PY) -m funcwsgi.settings_doc docs/configuration.md

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
