"""Bundles: deterministic export, verified import, replay round trip, secret and traversal refusal."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import io
import json
import random
import shutil
import socket
import tarfile
import tempfile
from pathlib import Path

import pytest

from oracleproto.cli.run import write_run_analysis
from oracleproto.dataset.demo import demo_db_path
from oracleproto.errors import StoreError
from oracleproto.primitives.clock import SystemClock
from oracleproto.primitives.hashing import canonical_json, sha256_hex
from oracleproto.primitives.oslock import lock_exclusive
from oracleproto.runner.replay import ReplayReport, replay_run
from oracleproto.store import RunDir
from oracleproto.verify import export_bundle, import_bundle, verify_path
from oracleproto.verify import run as verify_run_module
from oracleproto.verify.attest import published_files
from oracleproto.verify.bundle import BundleError, _bundle_manifest, _members, _tar_bytes, verify_bundle
from oracleproto.verify.bundle_schema import BUNDLE_MANIFEST, FORMAT, parse_bundle_manifest


def test_export_is_deterministic_and_import_replays_offline(
    demo_run: Path, tmp_path: Path, oracleproto_offline: bool
) -> None:
    first = export_bundle(demo_run, tmp_path / "a.tar.gz")
    second = export_bundle(demo_run, tmp_path / "b.tar.gz")
    assert first.read_bytes() == second.read_bytes()
    with tarfile.open(first) as tar:
        infos = tar.getmembers()
    assert [i.name for i in infos] == sorted(i.name for i in infos)
    assert {(i.mtime, i.uid, i.gid) for i in infos} == {(0, 0, 0)}
    assert first.read_bytes()[4:8] == b"\0\0\0\0"  # gzip header mtime

    imported = import_bundle(first, tmp_path / "imported")
    assert imported.dataset is not None and imported.dataset.is_file()
    assert verify_path(first).ok

    # Replay the imported run with the network blocked (the plugin's fixture, replay mode).
    assert oracleproto_offline
    with pytest.raises(Exception, match=r"(?i)socket"):
        socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    report = await_replay(imported.run_dir, imported.dataset, tmp_path / "replayed")
    assert report.ok, [c for c in report.checks if not c.ok]


def await_replay(run_dir: Path, dataset: Path, out: Path) -> ReplayReport:
    """Replay as ``oracleproto replay`` does, including the analysis pass."""
    return asyncio.run(
        replay_run(
            run_dir,
            out,
            clock=SystemClock(),
            rand=random.Random(0),
            dataset=dataset,
            progress=False,
            after=write_run_analysis,
        )
    )


def test_export_refuses_a_planted_secret_without_printing_it(demo_copy: Path, tmp_path: Path) -> None:
    secret = "sk-or-v1-" + "0123456789abcdef" * 3
    log = demo_copy / "logs" / "notes.log"
    log.parent.mkdir()
    prefix = b'{"event": "debug", "header": "Authorization: Bearer '
    log.write_bytes(prefix + secret.encode() + b'"}\n')
    out = tmp_path / "out.tar.gz"
    with pytest.raises(BundleError) as info:
        export_bundle(demo_copy, out)
    message = str(info.value)
    assert f"run/{demo_copy.name}/logs/notes.log: byte offset {len(prefix)}: OpenRouter key" in message
    assert "Bearer token" in message
    assert secret not in message and secret[:14] not in message
    assert not out.exists()


def _rewrite(bundle: Path, out: Path, change: dict[str, bytes]) -> None:
    with tarfile.open(bundle) as src, tarfile.open(out, "w:gz") as dst:
        for info in src.getmembers():
            handle = src.extractfile(info)
            assert handle is not None
            data = change.pop(info.name, None) or handle.read()
            info.size = len(data)
            dst.addfile(info, io.BytesIO(data))
        for name, data in change.items():
            extra = tarfile.TarInfo(name)
            extra.size = len(data)
            dst.addfile(extra, io.BytesIO(data))


def test_import_refuses_path_traversal(demo_run: Path, tmp_path: Path) -> None:
    bundle = export_bundle(demo_run, tmp_path / "a.tar.gz")
    evil = tmp_path / "evil.tar.gz"
    _rewrite(bundle, evil, {"run/../../escape.txt": b"x"})
    with pytest.raises(BundleError, match="escapes its folder"):
        import_bundle(evil, tmp_path / "dest")
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "dest").exists()


def test_import_refuses_a_changed_member(demo_run: Path, tmp_path: Path) -> None:
    bundle = export_bundle(demo_run, tmp_path / "a.tar.gz")
    bad = tmp_path / "bad.tar.gz"
    member = f"run/{demo_run.name}/analysis/table3_overall.md"
    with tarfile.open(bundle) as tar:
        handle = tar.extractfile(member)
        assert handle is not None
        data = bytearray(handle.read())
    data[-3] ^= 1
    _rewrite(bundle, bad, {member: bytes(data)})
    with pytest.raises(BundleError, match=f"member {member} does not match its sha256"):
        import_bundle(bad, tmp_path / "dest")
    report = verify_path(bad)
    assert not report.ok and member in report.failures[0].detail


def test_no_dataset_bundle_needs_the_dataset_to_verify(demo_run: Path, tmp_path: Path) -> None:
    bundle = export_bundle(demo_run, tmp_path / "a.tar.gz", include_dataset=False)
    with tarfile.open(bundle) as tar:
        assert not [n for n in tar.getnames() if n.startswith("dataset/")]
    assert verify_path(bundle).ok  # the packaged demo DB is found by its hash
    imported = import_bundle(bundle, tmp_path / "imported")
    assert imported.dataset is None


# --- the pieces of an export, checked directly (no verify pass) ---------------------------------


def test_the_bundle_manifest_lists_every_member_and_digests_itself() -> None:
    run_id = "20260101-000000-ab12"
    members = {f"run/{run_id}/b.txt": b"bee", f"run/{run_id}/manifest.json": b"", "dataset/é.db": b"db"}
    text = _bundle_manifest(run_id, members, "f" * 64, "dataset/é.db")
    body = {
        "format": FORMAT,
        "run_id": run_id,
        "dataset": {"sha256": "f" * 64, "member": "dataset/é.db"},
        "members": {
            "dataset/é.db": {"sha256": hashlib.sha256(b"db").hexdigest(), "size": 2},
            f"run/{run_id}/b.txt": {"sha256": hashlib.sha256(b"bee").hexdigest(), "size": 3},
            f"run/{run_id}/manifest.json": {"sha256": hashlib.sha256(b"").hexdigest(), "size": 0},
        },
    }
    digest = sha256_hex(canonical_json(body))
    assert (
        text
        == (
            json.dumps({**body, "self_digest": digest}, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
        ).encode()
    )
    assert "dataset/é.db".encode() in text  # names as UTF-8, not \\u escapes
    assert text.startswith(b'{\n "dataset": {\n  "member": "dataset/\xc3\xa9.db",\n')
    assert parse_bundle_manifest(text, "w")[0] == body  # what import checks it against


def test_the_archive_is_sorted_zeroed_and_maximally_compressed() -> None:
    long_name = "run/r/" + "x" * 150 + ".txt"  # past ustar's 100 characters: a PAX header
    members = {"run/r/b.txt": b"bee", "bundle.json": b"{}\n", long_name: b"long"}
    data = _tar_bytes(members)
    assert data[:3] == b"\x1f\x8b\x08" and data[3] == 0  # gzip, deflate, no name field
    assert data[4:8] == b"\0\0\0\0" and data[8] == 2  # mtime 0; XFL 2: slowest, best compression
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        infos = tar.getmembers()
        assert [i.name for i in infos] == sorted(members)
        for info in infos:
            assert (info.mtime, info.mode, info.uid, info.gid, info.uname, info.gname) == (
                0,
                0o644,
                0,
                0,
                "",
                "",
            )
            handle = tar.extractfile(info)
            assert handle is not None and handle.read() == members[info.name]
        assert tar.getmember(long_name).pax_headers.get("path") == long_name
    assert _tar_bytes(dict(reversed(members.items()))) == data
    assert gzip.decompress(data) == gzip.decompress(_tar_bytes(members))


def test_members_are_the_published_files_the_dataset_and_the_expected_tables(
    demo_copy: Path, tmp_path: Path
) -> None:
    run = RunDir.open(demo_copy)
    dataset = tmp_path / "source.db"
    dataset.write_bytes(b"the dataset")
    (run.analysis_dir / "table5_consistency.md").unlink()
    members = _members(run, dataset)
    run_files = {f"run/{run.run_id}/{rel}" for rel in published_files(run.root)}
    expected = {"expected/table3_overall.md", "expected/table4_buckets.md"}
    assert set(members) == run_files | {"dataset/source.db"} | expected
    assert members["dataset/source.db"] == b"the dataset"
    assert members["expected/table3_overall.md"] == (run.analysis_dir / "table3_overall.md").read_bytes()
    assert members[f"run/{run.run_id}/manifest.json"] == (run.root / "manifest.json").read_bytes()
    assert set(_members(run, None)) == run_files | expected


def test_export_without_the_runs_dataset_says_how_to_continue(demo_copy: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    other.write_bytes(b"not the source")
    out = tmp_path / "out.tar.gz"
    with pytest.raises(
        BundleError,
        match=r"^no dataset with the run's source_db hash [0-9a-f]{16}…; pass --dataset PATH with the "
        r"source DB the run was recorded on, or --no-dataset to publish only its digest$",
    ):
        export_bundle(demo_copy, out, dataset=other)
    assert not out.exists()


def test_export_lists_twenty_secrets_and_counts_them_all(demo_copy: Path, tmp_path: Path) -> None:
    log = demo_copy / "logs" / "notes.log"
    log.parent.mkdir()
    log.write_bytes(b"".join(b"key sk-or-v1-%064d\n" % i for i in range(25)))
    with pytest.raises(BundleError) as caught:
        export_bundle(demo_copy, tmp_path / "out.tar.gz")
    message = str(caught.value)
    assert message.startswith("refusing to export: 25 key-like string(s) found (values not shown):\n  - ")
    assert message.count("\n  - ") == 20
    assert message.endswith("\nremove or redact them (re-record with a scrubbed transport) before publishing")


def test_export_of_a_run_that_does_not_verify_names_the_first_failure(
    demo_copy: Path, tmp_path: Path
) -> None:
    table = demo_copy / "analysis" / "table3_overall.md"
    table.write_bytes(table.read_bytes() + b"edited\n")
    out = tmp_path / "out.tar.gz"
    with pytest.raises(BundleError) as caught:
        export_bundle(demo_copy, out)
    report = verify_path(demo_copy)
    first = report.failures[0]
    assert str(caught.value) == (
        f"{demo_copy} does not verify, refusing to publish it: {first.what}: {first.detail}"
    )
    assert not out.exists()


def test_export_of_a_run_being_recorded_says_to_wait(demo_copy: Path, tmp_path: Path) -> None:
    with (demo_copy / ".lock").open("w", encoding="utf-8") as held:
        held.write("777")
        held.flush()
        lock_exclusive(held.fileno())
        with pytest.raises(StoreError, match=r"\(pid 777, .*then export it$"):
            export_bundle(demo_copy, tmp_path / "out.tar.gz")


def test_verify_bundle_checks_each_expected_table_against_the_run(demo_run: Path, tmp_path: Path) -> None:
    run = RunDir.open(demo_run)
    members = _members(run, None)
    members["expected/table3_overall.md"] = b"| not | what |\n| the run says |\n"
    del members["expected/table4_buckets.md"]
    source_db = run.load_manifest().hashes.source_db
    members[BUNDLE_MANIFEST] = _bundle_manifest(run.run_id, members, source_db, None)
    bundle = tmp_path / "b.tar.gz"
    bundle.write_bytes(_tar_bytes(members))
    report = verify_bundle(bundle)
    checks = {c.what: c for c in report.checks}
    assert report.target == bundle
    assert report.checks[0].what == "bundle members" and report.checks[0].ok
    assert report.checks[0].detail == f"{len(members) - 1} members match"
    assert not checks["expected/table3_overall.md"].ok
    assert checks["expected/table3_overall.md"].detail == (
        "expected/table3_overall.md differs from run analysis/table3_overall.md"
    )
    assert "expected/table4_buckets.md" not in checks  # not bundled: nothing to compare
    assert checks["expected/table5_consistency.md"].ok
    assert [c.what for c in report.failures] == ["expected/table3_overall.md"]


def test_verify_bundle_of_a_damaged_archive_is_one_failed_check(tmp_path: Path) -> None:
    bundle = tmp_path / "b.tar.gz"
    bundle.write_bytes(b"not gzip at all")
    report = verify_bundle(bundle)
    assert report.target == bundle and not report.ok
    assert [(c.what, c.ok) for c in report.checks] == [("bundle members", False)]
    assert "not a readable .tar.gz bundle" in report.checks[0].detail


@pytest.fixture
def only_given_datasets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """verify's fallback (the packaged demo DB) made absent, and a copy of the demo DB elsewhere:
    a dataset counts only when it is handed over."""
    source = tmp_path / "elsewhere" / "source.db"
    source.parent.mkdir()
    shutil.copyfile(demo_db_path(), source)
    monkeypatch.setattr(verify_run_module, "demo_db_path", lambda: tmp_path / "absent.db")
    return source


def test_export_hands_its_dataset_and_progress_to_verify(
    demo_copy: Path, tmp_path: Path, only_given_datasets: Path
) -> None:
    seen: list[str] = []
    export_bundle(demo_copy, tmp_path / "out.tar.gz", dataset=only_given_datasets, progress=seen.append)
    scan = seen.index("scanning every byte for secrets")
    check = seen.index("verifying the run before publishing it")
    assert scan < check < len(seen) - 1  # verify's own steps follow
    assert not verify_path(demo_copy).ok  # without the dataset handed over, the run cannot be checked


def test_verify_bundle_uses_the_bundled_dataset_and_its_own_temp_folder(
    demo_copy: Path, tmp_path: Path, only_given_datasets: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = export_bundle(demo_copy, tmp_path / "out.tar.gz", dataset=only_given_datasets)
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    seen: list[tuple[str, list[str]]] = []

    def progress(step: str) -> None:
        seen.append((step, sorted(p.relative_to(temp).as_posix() for p in temp.glob("*/*"))))

    report = verify_bundle(bundle, progress=progress)
    assert report.ok, report.failures
    assert seen[0][0] == "bundle members" and len(seen) > 1
    (folder,) = {name for _, names in seen[1:] for name in names}
    assert folder.startswith("oracleproto-bundle-") and folder.endswith("/bundle")
    assert list(temp.iterdir()) == []  # removed afterwards


def test_verify_bundle_without_a_dataset_uses_the_one_given(
    demo_copy: Path, tmp_path: Path, only_given_datasets: Path
) -> None:
    bundle = export_bundle(
        demo_copy, tmp_path / "out.tar.gz", dataset=only_given_datasets, include_dataset=False
    )
    assert not verify_bundle(bundle).ok
    report = verify_bundle(bundle, dataset=only_given_datasets)
    assert report.ok, report.failures
