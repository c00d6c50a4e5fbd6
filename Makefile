# One entry point for newcomers, CI and reviewers. `make install` is implied by every target.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RUN ?= demo

.PHONY: install test lint bench replay demo-record clean

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

# Replay RUN offline (re-execute from its cassettes, compare byte for byte), then verify it
# without re-executing (digests, hash chain, analysis regeneration); both print a verdict.
replay: install
	$(BIN)/oracleproto replay $(RUN)
	$(BIN)/oracleproto verify $(RUN)

# Re-record the bundled demo run against the simulator into cassettes/demo/, then refresh its
# expected tables (golden/demo/).
demo-record: install
	$(BIN)/oracleproto demo record --repo .
	$(BIN)/python -m pytest tests/demo --snapshot-update -q

clean:
	rm -rf $(VENV) build *.egg-info
