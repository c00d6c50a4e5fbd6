"""verify's cassette checks called directly on small cassette folders built from demo entries.

Every expected digest, key and root is read from the written files' text or worked out from the
documented Merkle rule, not from the checks under test.
"""

from __future__ import annotations

import dataclasses
import hashlib
import multiprocessing
import os
import re
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from oracleproto.store import Manifest
from oracleproto.store.manifest import CassettesInfo
from oracleproto.transport.entry import Entry
from oracleproto.transport.fileio import dump_entries, parse_entries
from oracleproto.verify import cassettes
from oracleproto.verify.cassettes import (
    _check_file,
    _file_digests,
    _finish,
    _start_files,
    check_cassettes,
    start_check_cassettes,
)
from oracleproto.verify.demo import find_demo_run
from oracleproto.verify.findings import Check, failed, passed, skipped

RUN_ID = "20260101-000000-cc00"
#: sha256 of the empty string: the root of an empty cassette set.
EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
TAIL_FILES = (
    "bytes differ from the deterministic serialisation of its verified entries (edited outside any entry); "
    "restore the file"
)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _root(digests: list[str]) -> str:
    """The Merkle rule of the manifest's root digest, by hand: sorted distinct leaves, odd node carried up."""
    level = [_sha(f"leaf:{d}") for d in sorted(set(digests))]
    if not level:
        return EMPTY
    while len(level) > 1:
        pairs = [_sha(f"node:{level[i]}{level[i + 1]}") for i in range(0, len(level) - 1, 2)]
        level = pairs + ([level[-1]] if len(level) % 2 else [])
    return level[0]


def _stored(path: Path) -> list[tuple[str, str]]:
    """(key, digest) of each entry of a cassette file, in file order, read from its text."""
    text = path.read_text(encoding="utf-8")
    keys = re.findall(r"^    key: ([0-9a-f]{64})$", text, flags=re.MULTILINE)
    digests = re.findall(r"^    digest: ([0-9a-f]{64})$", text, flags=re.MULTILINE)
    assert len(keys) == len(digests) > 0
    return list(zip(keys, digests, strict=True))


@pytest.fixture(scope="module")
def entries() -> dict[str, list[Entry]]:
    """A few entries of the committed demo (read only: tests copy them with dataclasses.replace)."""
    root = find_demo_run() / "cassettes"
    search = parse_entries((root / "search.yaml").read_bytes(), "search.yaml")
    llm = parse_entries((root / "llm" / "sim__hasty__r5__c4.yaml").read_bytes(), "llm")
    return {"search": search[:3], "llm": llm[:2]}


def _manifest(root_digest: str | None, *, finished: bool = True, recorded: bool = True) -> Manifest:
    manifest = Manifest.load(find_demo_run() / "manifest.json")
    info = CassettesInfo(dir="cassettes", root_digest=root_digest, mode="record") if recorded else None
    update: dict[str, Any] = {"run_id": RUN_ID, "cassettes": info}
    if not finished:
        update["finished_at"] = None
    return manifest.model_copy(update=update)


def _write(path: Path, items: list[Entry]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dump_entries(items))
    return path


@pytest.fixture
def run(tmp_path: Path, entries: dict[str, list[Entry]]) -> Path:
    """A run folder with two generations: search.yaml (2), llm/sim__hasty.yaml (2), then one
    generation-1 entry under search's first key (another digest: its generation field differs)."""
    root = tmp_path / RUN_ID
    search = entries["search"]
    _write(root / "cassettes" / "search.yaml", search[:2])
    _write(root / "cassettes" / "llm" / "sim__hasty.yaml", entries["llm"])
    first = min(search[:2], key=lambda e: e.key)
    again = dataclasses.replace(first, generation=1, digest=None)
    _write(root / "cassettes" / "generations" / "0001" / "search.yaml", [again])
    return root


LLM = "cassettes/llm/sim__hasty.yaml"
SEARCH = "cassettes/search.yaml"
GEN1 = "cassettes/generations/0001/search.yaml"


def _digests(run: Path) -> dict[str, list[tuple[str, str]]]:
    return {label: _stored(run / label) for label in (LLM, SEARCH, GEN1)}


def test_a_clean_set_passes_file_by_file_then_the_root(run: Path) -> None:
    stored = _digests(run)
    every = [d for label in (LLM, SEARCH, GEN1) for _, d in stored[label]]
    assert len(set(every)) == 5  # the generation-1 copy has its own digest
    root = _root(every)
    checks, effective = check_cassettes(run, run / "cassettes", _manifest(root))
    assert checks == [
        passed(LLM, "2 entries match their digests"),
        passed(SEARCH, "2 entries match their digests"),
        passed(GEN1, "1 entries match their digests"),
        passed("cassettes root digest", f"5 entries, root {root[:16]}…"),
    ]
    # Latest generation wins: search's first key maps to its generation-1 digest.
    expected = dict(stored[LLM]) | dict(stored[SEARCH]) | dict(stored[GEN1])
    assert effective == expected
    (key, gen1_digest) = stored[GEN1][0]
    assert dict(stored[SEARCH])[key] != gen1_digest


def test_a_repeated_digest_across_generations_counts_twice_but_hashes_once(
    run: Path, entries: dict[str, list[Entry]]
) -> None:
    # Generation 1 carries search's second entry over unchanged (same digest as in generation 0).
    second = max(entries["search"][:2], key=lambda e: e.key)
    first_again = parse_entries((run / GEN1).read_bytes(), "g1")
    _write(run / GEN1, [*first_again, second])
    stored = _digests(run)
    every = [d for label in (LLM, SEARCH, GEN1) for _, d in stored[label]]
    assert len(every) == 6 and len(set(every)) == 5
    root = _root(every)
    checks, effective = check_cassettes(run, run / "cassettes", _manifest(root))
    assert checks[-1] == passed("cassettes root digest", f"6 entries, root {root[:16]}…")
    assert checks[2] == passed(GEN1, "2 entries match their digests")
    assert effective == dict(stored[LLM]) | dict(stored[SEARCH]) | dict(stored[GEN1])


def test_a_removed_file_changes_the_root(run: Path) -> None:
    stored = _digests(run)
    recorded = _root([d for label in (LLM, SEARCH, GEN1) for _, d in stored[label]])
    (run / LLM).unlink()
    left = [d for label in (SEARCH, GEN1) for _, d in stored[label]]
    checks, effective = check_cassettes(run, run / "cassettes", _manifest(recorded))
    assert checks == [
        passed(SEARCH, "2 entries match their digests"),
        passed(GEN1, "1 entries match their digests"),
        failed(
            "cassettes root digest",
            f"manifest.json cassettes.root_digest is {recorded}, the 3 entries on disk hash to "
            f"{_root(left)} (an entry was added, removed or the manifest was edited)",
        ),
    ]
    # Every file parsed: the map is still handed on (the root's failure is reported on its own).
    assert effective == dict(stored[SEARCH]) | dict(stored[GEN1])


def test_an_extra_file_changes_the_root(run: Path, entries: dict[str, list[Entry]]) -> None:
    stored = _digests(run)
    recorded = _root([d for label in (LLM, SEARCH, GEN1) for _, d in stored[label]])
    extra = _write(run / "cassettes" / "detector.yaml", [entries["search"][2]])
    (added,) = _stored(extra)
    checks, _ = check_cassettes(run, run / "cassettes", _manifest(recorded))
    every = [added[1], *(d for label in (LLM, SEARCH, GEN1) for _, d in stored[label])]
    assert [c.what for c in checks] == ["cassettes/detector.yaml", LLM, SEARCH, GEN1, "cassettes root digest"]
    assert checks[-1] == failed(
        "cassettes root digest",
        f"manifest.json cassettes.root_digest is {recorded}, the 6 entries on disk hash to "
        f"{_root(every)} (an entry was added, removed or the manifest was edited)",
    )


def test_a_file_that_does_not_parse_fails_and_the_root_is_not_computed(run: Path) -> None:
    (run / SEARCH).write_bytes(b"interactions: 5\n")
    checks, effective = check_cassettes(run, run / "cassettes", _manifest("0" * 64))
    assert checks == [
        passed(LLM, "2 entries match their digests"),
        failed(SEARCH, f"{SEARCH}: not a cassette (no 'interactions' list)"),
        passed(GEN1, "1 entries match their digests"),
        skipped("cassettes root digest", "not computed: a cassette file failed above"),
    ]
    assert effective is None


def test_a_duplicated_entry_fails_its_file(run: Path, entries: dict[str, list[Entry]]) -> None:
    data = (run / GEN1).read_bytes()
    head, item = data.split(b"interactions:\n", 1)
    body, version = item.rsplit(b"version: 1\n", 1)
    (run / GEN1).write_bytes(head + b"interactions:\n" + body + body + b"version: 1\n" + version)
    (key, _) = _stored(run / SEARCH)[0]
    checks, effective = check_cassettes(run, run / "cassettes", _manifest("0" * 64))
    assert checks[2] == failed(
        GEN1,
        f"{GEN1}, entry #1: duplicate of entry #0 (key {key}); a cassette file holds each key once — "
        "restore the file from the original recording or re-record it",
    )
    assert checks[3] == skipped("cassettes root digest", "not computed: a cassette file failed above")
    assert effective is None


def test_bytes_changed_outside_any_entry_are_located(run: Path) -> None:
    canonical = (run / SEARCH).read_bytes()
    (run / SEARCH).write_bytes(canonical + b"\n")
    lines = canonical.count(b"\n") + 1
    n = len(canonical)
    check, found = _check_file(run / SEARCH, "label")
    assert check == failed(
        "label", f"byte offset {n} (line {lines}, column 1): lengths differ ({n} vs {n + 1}): {TAIL_FILES}"
    )
    assert found is None


def test_a_changed_entry_fails_its_digest(run: Path) -> None:
    data = (run / GEN1).read_bytes()
    ((key, digest),) = _stored(run / GEN1)
    (run / GEN1).write_bytes(data.replace(b"    generation: 1\n", b"    generation: 0\n", 1))
    # Back at generation 0 the entry is search.yaml's own, whose digest is known.
    computed = dict(_stored(run / SEARCH))[key]
    check, found = _check_file(run / GEN1, GEN1)
    assert check == failed(
        GEN1,
        f"{GEN1}, entry #0: entry {key} does not match its digest (stored {digest}, computed {computed}); "
        "the entry was edited or corrupted — restore the file or re-record the entry",
    )
    assert found is None


def test_an_unreadable_file_fails_with_the_reason(tmp_path: Path) -> None:
    folder = tmp_path / "x.yaml"
    folder.mkdir()
    check, found = _check_file(folder, "x.yaml")
    assert check == failed("x.yaml", f"{folder}: cannot read the cassette (Is a directory)")
    assert found is None


def test_check_file_returns_the_parsed_entries_and_file_digests_their_keys(run: Path) -> None:
    stored = _stored(run / LLM)
    check, found = _check_file(run / LLM, "x")
    assert check == passed("x", "2 entries match their digests")
    assert found is not None and [e.key for e in found] == [k for k, _ in stored]
    assert _file_digests(run / LLM, "x") == (check, stored)
    (run / LLM).write_bytes(b"- [")
    check, digests = _file_digests(run / LLM, "x")
    assert check.status == "FAIL" and check.what == "x" and digests is None


def test_a_missing_manifest_entry_is_skipped(run: Path) -> None:
    pending = start_check_cassettes(run, run / "cassettes", _manifest(None, recorded=False))
    assert pending() == (
        [skipped("cassettes", "the manifest has no 'cassettes' entry (run not recorded by oracleproto)")],
        None,
    )


def test_a_missing_cassette_folder_is_an_empty_set(tmp_path: Path) -> None:
    checks, effective = check_cassettes(tmp_path, tmp_path / "cassettes", _manifest(EMPTY))
    assert checks == [passed("cassettes root digest", "0 entries, root e3b0c44298fc1c14…")]
    assert effective == {}
    checks, effective = check_cassettes(tmp_path, tmp_path / "cassettes", _manifest("f" * 64))
    assert checks == [
        failed(
            "cassettes root digest",
            f"manifest.json cassettes.root_digest is {'f' * 64}, the 0 entries on disk hash to {EMPTY} "
            "(an entry was added, removed or the manifest was edited)",
        )
    ]


def test_a_null_root_says_whether_the_run_finished(run: Path) -> None:
    resume = (
        "the run has not finished (finished_at is null): resume it (rerun the command that recorded it "
        f"with `--run-id {RUN_ID}`) and verify the finished run"
    )
    checks, effective = check_cassettes(run, run / "cassettes", _manifest(None, finished=False))
    assert checks[-1] == failed("cassettes root digest", resume)
    assert effective is not None and len(effective) == 4
    checks, _ = check_cassettes(run, run / "cassettes", _manifest(None))
    assert checks[-1] == failed("cassettes root digest", "manifest.json cassettes.root_digest is null")


def test_journal_leftovers_are_named_between_the_files_and_the_root(run: Path) -> None:
    journal = run / "cassettes" / ".journal"
    journal.mkdir()
    (journal / "b-2.jsonl").write_text('{"x": 1}\n', encoding="utf-8")
    (journal / "a-1.jsonl").write_text('{"x": 1}\n', encoding="utf-8")
    (journal / "c-3.jsonl").write_bytes(b"")  # a writer that closed cleanly truncates its journal
    (journal / "d-4.txt").write_text("not a journal\n", encoding="utf-8")
    stored = _digests(run)
    root = _root([d for label in (LLM, SEARCH, GEN1) for _, d in stored[label]])
    checks, effective = check_cassettes(run, run / "cassettes", _manifest(root))
    assert [c.what for c in checks] == [LLM, SEARCH, GEN1, "cassettes journal", "cassettes root digest"]
    assert checks[3] == failed(
        "cassettes journal",
        "cassettes/.journal holds uncompacted entries (a-1.jsonl, b-2.jsonl); the recording did not close "
        f"cleanly — resume it (rerun the command that recorded it with `--run-id {RUN_ID}`), which folds "
        "the journal into the cassettes",
    )
    assert checks[4].status == "pass" and effective is not None


def test_an_empty_journal_folder_or_a_journal_file_is_not_reported(run: Path) -> None:
    journal = run / "cassettes" / ".journal"
    journal.mkdir()
    (journal / "a-1.jsonl").write_bytes(b"")
    checks, _ = check_cassettes(run, run / "cassettes", _manifest(None))
    assert "cassettes journal" not in [c.what for c in checks]
    (journal / "a-1.jsonl").unlink()
    journal.rmdir()
    journal.write_text('{"x": 1}\n', encoding="utf-8")  # not a folder: nothing to resume
    checks, _ = check_cassettes(run, run / "cassettes", _manifest(None))
    assert "cassettes journal" not in [c.what for c in checks]


def test_finish_keeps_the_later_result_and_counts_every_digest(tmp_path: Path) -> None:
    results: list[tuple[Check, list[tuple[str, str]] | None]] = [
        (passed("one", "a"), [("k1", "d1"), ("k2", "d2")]),
        (passed("two", "b"), [("k1", "d3")]),
        (passed("three", "c"), []),
    ]
    root = _root(["d1", "d2", "d3"])
    checks, effective = _finish(tmp_path, tmp_path / "cassettes", _manifest(root), results)
    assert checks == [
        passed("one", "a"),
        passed("two", "b"),
        passed("three", "c"),
        passed("cassettes root digest", f"3 entries, root {root[:16]}…"),
    ]
    assert effective == {"k1": "d3", "k2": "d2"}


def test_finish_goes_on_past_a_failed_file(tmp_path: Path) -> None:
    results: list[tuple[Check, list[tuple[str, str]] | None]] = [
        (passed("one", "a"), [("k1", "d1")]),
        (failed("two", "bad"), None),
        (passed("three", "c"), [("k3", "d3")]),
    ]
    checks, effective = _finish(tmp_path, tmp_path / "cassettes", _manifest(_root(["d1", "d3"])), results)
    assert checks == [
        passed("one", "a"),
        failed("two", "bad"),
        passed("three", "c"),
        skipped("cassettes root digest", "not computed: a cassette file failed above"),
    ]
    assert effective is None


class _Pool:
    """A stand-in for the process pool: runs each job at once and records how it was used."""

    def __init__(self, log: list[_Pool], *, max_workers: int, mp_context: Any) -> None:
        self.workers = max_workers
        self.context = mp_context
        self.jobs: list[tuple[Any, ...]] = []
        self.shutdowns: list[dict[str, Any]] = []
        self.fail = False
        log.append(self)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        self.jobs.append(args)
        future: Future[Any] = Future()
        if self.fail:
            future.set_exception(RuntimeError("worker died"))
        else:
            future.set_result(fn(*args))
        return future

    def shutdown(self, **kwargs: Any) -> None:
        self.shutdowns.append(kwargs)


def _fake_pool(monkeypatch: pytest.MonkeyPatch, cpus: int | None, *, fail: bool = False) -> list[_Pool]:
    log: list[_Pool] = []

    def make(*, max_workers: int, mp_context: Any) -> _Pool:
        pool = _Pool(log, max_workers=max_workers, mp_context=mp_context)
        pool.fail = fail
        return pool

    monkeypatch.setattr(cassettes, "ProcessPoolExecutor", make)
    monkeypatch.setattr(os, "cpu_count", lambda: cpus)
    return log


def _files(run: Path) -> list[Path]:
    return [run / LLM, run / SEARCH, run / GEN1]


def _size(files: list[Path]) -> int:
    return sum(len(p.read_bytes()) for p in files)


def test_a_set_of_the_threshold_size_is_checked_in_a_forked_pool(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _files(run)
    monkeypatch.setattr(cassettes, "PARALLEL_MIN_BYTES", _size(files))
    log = _fake_pool(monkeypatch, 8)
    # Fork asked for by name, not the platform's default start method (spawn on macOS, forkserver
    # from Python 3.14 on Linux), which would import the package again in every worker.
    asked: list[str | None] = []
    real = multiprocessing.get_context

    def get_context(method: str | None = None) -> Any:
        asked.append(method)
        return real(method)

    monkeypatch.setattr(multiprocessing, "get_context", get_context)
    gather = _start_files(run, files)
    assert asked == ["fork"]
    # Started before anyone asks: every file was submitted, in order, with its label.
    (pool,) = log
    assert pool.jobs == [(p, label) for p, label in zip(files, [LLM, SEARCH, GEN1], strict=True)]
    assert pool.workers == 3  # no more workers than files
    assert isinstance(pool.context, multiprocessing.context.ForkContext)
    assert pool.shutdowns == []
    got = gather()
    counts = ((LLM, 2), (SEARCH, 2), (GEN1, 1))
    assert got == [
        (passed(label, f"{n} entries match their digests"), _stored(run / label)) for label, n in counts
    ]
    assert pool.shutdowns == [{"cancel_futures": True}]


def test_the_pool_has_as_many_workers_as_cpus_when_files_outnumber_them(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cassettes, "PARALLEL_MIN_BYTES", 0)
    log = _fake_pool(monkeypatch, 2)
    _start_files(run, _files(run))()
    assert [p.workers for p in log] == [2]


def test_the_pool_is_shut_down_when_a_worker_fails(run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cassettes, "PARALLEL_MIN_BYTES", 0)
    log = _fake_pool(monkeypatch, 4, fail=True)
    gather = _start_files(run, _files(run))
    with pytest.raises(RuntimeError, match="worker died"):
        gather()
    assert log[0].shutdowns == [{"cancel_futures": True}]


@pytest.mark.parametrize(
    ("cpus", "count", "below"),
    [(8, 3, 1), (1, 3, 0), (None, 3, 0), (8, 1, 0)],
    ids=["under the threshold", "one cpu", "cpu count unknown", "one file"],
)
def test_small_sets_one_cpu_or_one_file_are_checked_in_process(
    run: Path, monkeypatch: pytest.MonkeyPatch, cpus: int | None, count: int, below: int
) -> None:
    files = _files(run)[:count]
    monkeypatch.setattr(cassettes, "PARALLEL_MIN_BYTES", _size(files) + below)
    log = _fake_pool(monkeypatch, cpus)
    gather = _start_files(run, files)
    assert log == []
    expected = [(passed(LLM, "2 entries match their digests"), _stored(run / LLM))]
    if count == 3:
        expected += [
            (passed(SEARCH, "2 entries match their digests"), _stored(run / SEARCH)),
            (passed(GEN1, "1 entries match their digests"), _stored(run / GEN1)),
        ]
    assert gather() == expected
    assert log == []


def test_start_check_cassettes_defers_the_result_to_the_call(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cassettes, "PARALLEL_MIN_BYTES", 0)
    log = _fake_pool(monkeypatch, 4)
    stored = _digests(run)
    root = _root([d for label in (LLM, SEARCH, GEN1) for _, d in stored[label]])
    pending = start_check_cassettes(run, run / "cassettes", _manifest(root))
    assert len(log[0].jobs) == 3 and log[0].shutdowns == []
    checks, effective = pending()
    assert log[0].shutdowns == [{"cancel_futures": True}]
    assert checks[-1] == passed("cassettes root digest", f"5 entries, root {root[:16]}…")
    assert effective == dict(stored[LLM]) | dict(stored[SEARCH]) | dict(stored[GEN1])
