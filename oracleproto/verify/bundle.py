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
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from oracleproto.dataset.demo import demo_db_path
from oracleproto.errors import OracleprotoError, StoreError
from oracleproto.hashing import canonical_json, sha256_hex
from oracleproto.oserrors import cannot_write
from oracleproto.store import RunDir
from oracleproto.verify.attest import published_files
from oracleproto.verify.chain import find_dataset
from oracleproto.verify.findings import VerifyReport, failed, passed
from oracleproto.verify.run import Progress, _quiet, verify_run
from oracleproto.verify.secret_scan import SecretHit, scan_bytes

FORMAT = "oracleproto-bundle/1"
BUNDLE_MANIFEST = "bundle.json"
EXPECTED_TABLES = ("table3_overall", "table4_buckets", "table5_consistency")
_TOP = ("run", "dataset", "expected")


class BundleError(OracleprotoError):
    """A bundle cannot be exported or imported; the message says which member and why."""


@dataclass(frozen=True)
class ImportedBundle:
    """Where an imported bundle's pieces are."""

    root: Path
    run_dir: Path
    dataset: Path | None
    manifest: dict[str, Any]


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
    progress: Progress = _quiet,
) -> Path:
    """Verify the run, scan every byte for secrets, then write the bundle atomically."""
    run = RunDir.open(run_dir)
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
    data = _tar_bytes(members)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, out)
    except OSError as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)  # nothing partial is left beside OUT
        raise BundleError(cannot_write(out, exc)) from None
    return out


def _safe_name(name: str) -> str:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or not path.parts or "\\" in name:
        raise BundleError(f"member {name!r} escapes the bundle (absolute path or '..'); refusing to import")
    if path.parts[0] not in _TOP and name != BUNDLE_MANIFEST:
        raise BundleError(f"member {name!r} is outside the bundle layout (run/, dataset/, expected/)")
    return name


def read_bundle(bundle: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Read and check every member against the bundle manifest (no extraction)."""
    try:
        tar = tarfile.open(bundle, mode="r:gz")  # noqa: SIM115 - closed by the with below
    except (tarfile.TarError, OSError) as exc:
        raise BundleError(f"{bundle}: not a readable .tar.gz bundle ({exc})") from exc
    members: dict[str, bytes] = {}
    with tar:
        for info in tar.getmembers():
            name = _safe_name(info.name)
            if not info.isfile():
                raise BundleError(
                    f"{bundle}: member {name!r} is not a regular file (link or device); refusing"
                )
            handle = tar.extractfile(info)
            if handle is None:
                raise BundleError(f"{bundle}: member {name!r} cannot be read")
            members[name] = handle.read()
    raw = members.pop(BUNDLE_MANIFEST, None)
    if raw is None:
        raise BundleError(f"{bundle}: no {BUNDLE_MANIFEST}; not an oracleproto bundle")
    try:
        doc = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BundleError(f"{bundle}: {BUNDLE_MANIFEST} is not valid JSON ({exc})") from exc
    body = {k: v for k, v in doc.items() if k != "self_digest"} if isinstance(doc, dict) else {}
    if body.get("format") != FORMAT or sha256_hex(canonical_json(body)) != doc.get("self_digest"):
        raise BundleError(f"{bundle}: {BUNDLE_MANIFEST} is damaged (format or self_digest does not match)")
    listed: dict[str, Any] = body["members"]
    for name in sorted(set(listed) | set(members)):
        if name not in members:
            raise BundleError(f"{bundle}: member {name} is listed in {BUNDLE_MANIFEST} but missing")
        if name not in listed:
            raise BundleError(f"{bundle}: member {name} is not listed in {BUNDLE_MANIFEST}")
        if sha256_hex(members[name]) != listed[name]["sha256"]:
            raise BundleError(f"{bundle}: member {name} does not match its sha256 in {BUNDLE_MANIFEST}")
    return body, members


def import_bundle(bundle: Path, dest: Path) -> ImportedBundle:
    """Check every member, then extract into ``dest`` (new or empty) atomically."""
    body, members = read_bundle(bundle)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BundleError(f"{dest} exists and is not empty; import into a new or empty folder")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.import-", dir=dest.parent))
    try:
        for name, data in members.items():
            target = tmp / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        (tmp / BUNDLE_MANIFEST).write_text(
            json.dumps(body, sort_keys=True, indent=1) + "\n", encoding="utf-8"
        )
        if dest.exists():
            dest.rmdir()
        tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    member = body["dataset"]["member"]
    run_id = str(body["run_id"])
    if not (dest / "run" / run_id / "manifest.json").is_file():
        raise StoreError(f"{bundle}: the bundle holds no run/{run_id}/manifest.json")
    return ImportedBundle(dest, dest / "run" / run_id, None if member is None else dest / member, body)


def verify_bundle(bundle: Path, *, dataset: Path | None = None, progress: Progress = _quiet) -> VerifyReport:
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
