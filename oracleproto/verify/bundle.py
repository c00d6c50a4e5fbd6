"""Publishable bundles: a deterministic ``.tar.gz`` of a run, its dataset and expected tables.

Layout inside the archive::

    bundle.json               bundle manifest: sha256 + size of every other member, self digest
    run/<run_id>/...          the run directory (manifest, db/, analysis/, cassettes/, ...)
    dataset/<name>.db         the source DB (omitted with --no-dataset; its sha256 stays listed)
    expected/<table>.md       the paper-style tables a reviewer should see after replay

Members are sorted, with mtime 0, uid/gid 0 and fixed modes, and the gzip header has mtime 0,
so exporting the same run twice gives the same bytes.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
import tempfile
from pathlib import Path

from oracleproto.dataset.demo import demo_db_path
from oracleproto.errors import OracleprotoError
from oracleproto.primitives.fileio import SHARED_MODE, atomic_write
from oracleproto.primitives.hashing import canonical_json, sha256_hex
from oracleproto.primitives.oserrors import cannot_write
from oracleproto.store import RunDir
from oracleproto.verify.attest import published_files
from oracleproto.verify.bundle_import import ImportedBundle, import_bundle
from oracleproto.verify.bundle_schema import BUNDLE_MANIFEST, FORMAT, BundleError
from oracleproto.verify.chain import find_dataset
from oracleproto.verify.findings import Progress, VerifyReport, failed, passed, quiet
from oracleproto.verify.run import verify_run
from oracleproto.verify.secret_scan import SecretHit, scan_bytes
from oracleproto.verify.switch import finish_interrupted

EXPECTED_TABLES = ("table3_overall", "table4_buckets", "table5_consistency")
__all__ = ["BundleError", "ImportedBundle", "export_bundle", "import_bundle", "verify_bundle"]


def _members(run: RunDir, dataset: Path | None) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    for rel in published_files(run.root):
        members[f"run/{run.run_id}/{rel}"] = (run.root / rel).read_bytes()
    if dataset is not None:
        members[f"dataset/{dataset.name}"] = dataset.read_bytes()
    for name in EXPECTED_TABLES:
        table = run.analysis_dir / f"{name}.md"
        if table.is_file():
            members[f"expected/{name}.md"] = table.read_bytes()
    return members


def _bundle_manifest(
    run_id: str, members: dict[str, bytes], dataset_hash: str, dataset_member: str | None
) -> bytes:
    body = {
        "format": FORMAT,
        "run_id": run_id,
        "dataset": {"sha256": dataset_hash, "member": dataset_member},
        "members": {
            name: {"sha256": sha256_hex(data), "size": len(data)} for name, data in sorted(members.items())
        },
    }
    doc = {**body, "self_digest": sha256_hex(canonical_json(body))}
    return (json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def _tar_bytes(members: dict[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="", compresslevel=9) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for name in sorted(members):
            data = members[name]
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def export_bundle(
    run_dir: Path,
    out: Path,
    *,
    dataset: Path | None = None,
    include_dataset: bool = True,
    progress: Progress = quiet,
) -> Path:
    """Verify the run, scan every byte for secrets, then write the bundle atomically."""
    run = RunDir.open(run_dir)
    run.require_idle("export it")
    # A maintenance command killed after its commit: finish it, so the members are one seal's files.
    finish_interrupted(run)
    manifest = run.load_manifest()
    source = find_dataset(manifest.hashes.source_db, [dataset] if dataset else [demo_db_path()])
    if source is None and include_dataset:
        raise BundleError(
            f"no dataset with the run's source_db hash {manifest.hashes.source_db[:16]}…; "
            "pass --dataset PATH with the source DB the run was recorded on, "
            "or --no-dataset to publish only its digest"
        )
    members = _members(run, source if include_dataset else None)
    dataset_member = f"dataset/{source.name}" if include_dataset and source is not None else None
    members[BUNDLE_MANIFEST] = _bundle_manifest(
        run.run_id, members, manifest.hashes.source_db, dataset_member
    )
    progress("scanning every byte for secrets")
    hits: list[SecretHit] = [h for name, data in sorted(members.items()) for h in scan_bytes(data, name)]
    if hits:
        listed = "\n".join(f"  - {h}" for h in hits[:20])
        raise BundleError(
            f"refusing to export: {len(hits)} key-like string(s) found (values not shown):\n{listed}\n"
            "remove or redact them (re-record with a scrubbed transport) before publishing"
        )
    progress("verifying the run before publishing it")
    report = verify_run(run.root, dataset=source, progress=progress)
    if not report.ok:
        first = report.failures[0]
        raise BundleError(f"{run.root} does not verify, refusing to publish it: {first.what}: {first.detail}")
    return write_archive(_tar_bytes(members), out)


def write_archive(data: bytes, out: Path) -> Path:
    """Write ``data`` to ``out`` atomically (a temporary sibling renamed over it).

    The archive is for publishing, so it gets the mode any file the user makes gets: created with
    0o666 for the kernel to apply their umask (``mkstemp`` would make it 0o600, owner-only).
    """
    try:
        atomic_write(out, data, mode=SHARED_MODE)  # nothing partial is left beside OUT
    except OSError as exc:
        raise BundleError(cannot_write(out, exc)) from None
    return out


def verify_bundle(bundle: Path, *, dataset: Path | None = None, progress: Progress = quiet) -> VerifyReport:
    """Member hashes, then every run check on the extracted run, then the expected tables."""
    progress("bundle members")
    with tempfile.TemporaryDirectory(prefix="oracleproto-bundle-") as tmp:
        try:
            imported = import_bundle(bundle, Path(tmp) / "bundle")
        except OracleprotoError as exc:
            return VerifyReport(bundle, [failed("bundle members", str(exc))])
        extra = () if imported.dataset is None else (imported.dataset,)
        report = verify_run(imported.run_dir, dataset=dataset, extra_datasets=extra, progress=progress)
        report.target = bundle
        report.checks.insert(
            0, passed("bundle members", f"{len(imported.manifest['members'])} members match")
        )
        for name in EXPECTED_TABLES:
            expected = imported.root / "expected" / f"{name}.md"
            published = imported.run_dir / "analysis" / f"{name}.md"
            if expected.is_file():
                same = published.is_file() and published.read_bytes() == expected.read_bytes()
                what = f"expected/{name}.md"
                report.checks.append(
                    passed(what) if same else failed(what, f"{what} differs from run analysis/{name}.md")
                )
    return report
