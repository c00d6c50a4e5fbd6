# One entry point for newcomers, CI and reviewers. `make install` is implied by every target.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RUN ?= demo

.PHONY: install test lint bench replay clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

test: install
	$(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check oracleproto tests benchmarks
	$(BIN)/mypy --strict oracleproto

bench: install
	$(BIN)/python -m benchmarks

replay: install
	$(BIN)/oracleproto replay $(RUN)

clean:
	rm -rf $(VENV) build *.egg-info
