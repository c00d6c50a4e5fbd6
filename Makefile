# One entry point for newcomers, CI and reviewers. `make install` is implied by every target.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RUN ?= demo

.PHONY: install test test-shuffled lint bench mutation replay demo-record clean

install: $(VENV)/.installed

# pip byte-compiles what it installs, but not an editable package: without the compileall step every
# CLI process a test (or a user) starts compiles the modules it imports until one writes their .pyc,
# and none does where PYTHONDONTWRITEBYTECODE is set.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m compileall -q oracleproto benchmarks
	touch $@

# pytest rewrites the asserts of each test module (and of the package, a pytest plugin) as it imports
# it, and keeps the rewritten code beside the source, but writes nothing where PYTHONDONTWRITEBYTECODE
# is set; all workers collect at once, so in a fresh clone each rewrote every module (about 7 CPU-s
# per worker). The first `make test` of a venv writes that cache, in two collecting processes with
# half of tests/ each; a module edited later is rewritten in memory until the cache is written again
# (`rm $(REWRITE_CACHE)`). A collection error here is left to the test run to report.
REWRITE_CACHE := $(VENV)/.rewrite-cache

$(REWRITE_CACHE): $(VENV)/.installed
	@parts="$$(ls -d tests/*/ tests/test_*.py | grep -v __pycache__)"; \
	for half in 0 1; do \
		env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest --collect-only -q -p no:xdist \
			$$(printf '%s\n' $$parts | awk -v h=$$half 'NR % 2 == h') > /dev/null 2>&1 & \
	done; wait
	touch $@

# The suite on every core (pytest-xdist, each worker its own session and temp dirs; an idle worker
# takes tests queued for a busy one, so a few long tests do not make a long tail). One worker more
# than there are CPUs: about a seventh of a worker's time is spent waiting (on the CLI and server
# processes a test starts, on a simulator's latency), and the extra worker fills it.
# A single file or test runs serially: `$(BIN)/python -m pytest tests/scoring/test_parser.py`.
WORKERS ?= $(shell $(PYTHON) -c 'import os; print((os.cpu_count() or 1) + 1)')

test: install $(REWRITE_CACHE)
	$(BIN)/python -m pytest -n $(WORKERS) --dist worksteal

# The same in a random order (pytest-randomly, off by default in pyproject.toml); the seed is
# printed, and `SEED=<n> make test-shuffled` repeats an order. The seed is drawn here, so it is in
# the command line make prints (pytest-randomly's own header line is hidden by addopts' -q).
test-shuffled: install $(REWRITE_CACHE)
	$(BIN)/python -m pytest -n $(WORKERS) --dist worksteal -p randomly --randomly-seed=$(or $(SEED),$(shell $(BIN)/python -c 'import random; print(random.randrange(1 << 32))'))

lint: install
	$(BIN)/ruff check --no-cache oracleproto tests benchmarks
	$(BIN)/mypy --strict --no-incremental oracleproto
	$(BIN)/lint-imports --no-cache

bench: install
	$(BIN)/python -m benchmarks

# Mutation testing (mutmut) of verify/, the secret scrub, cache keys, the parser, admission and
# the metric families, one group of mutation/groups.toml at a time (GROUPS="secrets parser" for
# some); fails unless every surviving mutant is documented in mutation/equivalent.toml. Runs at
# the lowest CPU priority in build/mutation/; times per group in mutation/README.md.
mutation: install
	$(BIN)/python mutation/run.py $(GROUPS)

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

# The documentation site (mkdocs.yml, docs/) into build/site, offline; --strict turns every warning
# (a broken link or anchor, a page left out of the nav) into a failure. The CLI and settings
# references are generated during the build (docs/hooks/). tests/docs/test_site.py builds it too.
.PHONY: docs
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/site

clean:
	rm -rf $(VENV) build *.egg-info
