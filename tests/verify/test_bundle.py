"""Bundles: deterministic export, verified import, replay round trip, secret and traversal refusal."""

from __future__ import annotations

import asyncio
import io
import random
import socket
import tarfile
from pathlib import Path

import pytest

from oracleproto.cli.run import write_run_analysis
from oracleproto.primitives.clock import SystemClock
from oracleproto.runner.replay import ReplayReport, replay_run
from oracleproto.verify import export_bundle, import_bundle, verify_path
from oracleproto.verify.bundle import BundleError


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
