# AdaRoll's two commands: `make run` (set up + main job) and `make test` (set up + whole suite).
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= dev,web,llm,ray,browsergym,integrations
# verl without its dependencies (its metadata pins numpy<2); the integrations extra has the rest
VERL ?= verl>=0.7.1,<0.8
OUT ?= runs/main

.PHONY: setup system run test lint typecheck clean

setup: $(VENV)/.installed

# CPU torch first from its pinned release, so the package's torch range never pulls a CUDA build.
$(VENV)/.installed: pyproject.toml Makefile
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check torch==2.13.0
	$(PY) -m pip install -q --disable-pip-version-check -e ".[$(EXTRAS)]"
	$(PY) -m pip install -q --disable-pip-version-check --no-deps "$(VERL)"
	$(PY) scripts/remove_verl_tests.py
	touch $@

# Debian packages (Chromium) and CRIU in a private prefix; needs root, idempotent.
system:
	bash scripts/install_system.sh
	bash scripts/install_criu.sh

run: setup
	$(VENV)/bin/adaroll run --out $(OUT)

lint: setup
	$(VENV)/bin/ruff check adaroll tests benchmarks scripts
	$(VENV)/bin/ruff format --check adaroll tests benchmarks scripts

# the whole package (tests/test_architecture.py checks its shape: no import circle, module sizes)
typecheck: setup
	$(VENV)/bin/mypy adaroll

test: setup system lint typecheck
	$(VENV)/bin/python -m pytest -q -rA --durations=15 tests

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
