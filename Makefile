# `make run` serves the example function on port 8080; `make test` runs every test CI runs;
# `make docs` builds the documentation site into build/site, failing on any broken link.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= test,docs

.PHONY: setup run test docs settings-doc clean

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

docs: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir build/site

settings-doc: setup
	$(PY) -m funcwsgi.settings_doc docs/configuration.md

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
