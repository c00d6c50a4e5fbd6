"""``verify``: check a recorded run (or a bundle) offline, without re-executing anything."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from oracleproto.dataset.demo import demo_db_path
from oracleproto.errors import OracleprotoError
from oracleproto.runner.reconstruct import settings_from_snapshot
from oracleproto.store import Manifest, RunDir, RunMeta
from oracleproto.verify.attest import ATTESTATION_NAME, check_files, load_attestation
from oracleproto.verify.cassettes import PendingCassettes, start_check_cassettes
from oracleproto.verify.chain import (
    check_database,
    check_dataset,
    check_file_names,
    check_grid,
    check_snapshots_agree,
    find_dataset,
)
from oracleproto.verify.earlier import (
    accepted_manifest_bytes,
    analysis_settings,
    check_layout_coherent,
    foreign_analysis,
    recording_checks,
)
from oracleproto.verify.earlier import check_snapshots_agree as check_earlier_snapshots
from oracleproto.verify.earlier_dataset import locate_dataset
from oracleproto.verify.findings import (
    Check,
    Progress,
    VerifyReport,
    byte_location,
    failed,
    passed,
    quiet,
    skipped,
)
from oracleproto.verify.profile_check import check_harness_profile, check_protocol_texts
from oracleproto.verify.refresh_files import check_refresh_audit
from oracleproto.verify.regen import check_analysis
from oracleproto.verify.samples import check_sample_entries
from oracleproto.verify.switch import COMMITTED_DIR, STAGING_DIR, finish_interrupted, pending_switch


def _manifest(run: RunDir, report: VerifyReport) -> Manifest | None:
    data = run.manifest_path.read_bytes()
    try:
        manifest = Manifest.from_json(data.decode("utf-8"), source="manifest.json")
    except (OracleprotoError, UnicodeDecodeError) as exc:
        report.checks.append(failed("manifest.json", str(exc)))
        return None
    accepted = accepted_manifest_bytes(manifest)
    if data not in accepted:
        report.checks.append(
            failed(
                "manifest.json",
                f"manifest.json: {byte_location(accepted[0], data)}: bytes differ from the canonical form of "
                "its own content (hand-edited layout)",
            )
        )
    elif manifest.run_id != run.run_id:
        report.checks.append(
            failed("manifest.json", f"manifest.json: run_id {manifest.run_id!r} is not the folder name")
        )
    elif manifest.earlier_implementation:
        layout = "written by the earlier implementation (no oracleproto additions)"
        report.checks.append(passed("manifest.json", f"valid, canonical; {layout}"))
    else:
        report.checks.append(passed("manifest.json", "valid, canonical"))
    return manifest


def _open_idle(run_dir: Path) -> RunDir:
    """Open a run no process is recording (a recording in progress is not a run to verify yet)."""
    run = RunDir.open(run_dir)
    run.require_idle("verify the run")
    return run


def _finish_interrupted_switch(run: RunDir) -> Check | None:
    """Finish a maintenance command killed after its commit, so the run is checked under one seal.

    Its new files were all written before the commit; only moving them into place was left. When
    that cannot be done here (a read-only copy), the check says which command completes it. A
    command killed before its commit left only ``.switch.staging/``: the run's files are as they
    were, and the check says so (and that the folder is to be removed) when it cannot remove it.
    """
    try:
        finished = finish_interrupted(run)
    except (OSError, OracleprotoError) as exc:
        if not (run.root / COMMITTED_DIR).exists():
            return failed(
                "interrupted maintenance",
                f"{run.root / STAGING_DIR}: a maintenance command was interrupted before its commit, "
                "so none of the run's files were changed, but its staging folder is left over and "
                f"could not be removed here ({exc}); delete that folder (it is not part of the run), "
                "or verify the run where it is writable, which removes it",
            )
        try:
            operation = pending_switch(run.root) or "maintenance command"
        except OracleprotoError:  # its plan is damaged (exc says so): a failed check, not a crash
            operation = "maintenance command"
        return failed(
            "interrupted maintenance",
            f"{run.root / COMMITTED_DIR}: an interrupted `{operation}` is committed but not finished, and "
            f"finishing it failed ({exc}); rerun `oracleproto cassettes gc {run.root} --apply` where "
            "the run is writable",
        )
    if finished is None:
        return None
    return passed(
        "interrupted maintenance",
        f"finished an interrupted `{finished}` first (its new cassettes and seal are now in place)",
    )


def _cassettes(run: RunDir, manifest: Manifest) -> PendingCassettes:
    """The cassette checks, started (a large run's files are checked while the other checks run)."""
    try:
        pending = start_check_cassettes(run.root, run.cassette_path(manifest), manifest)
    except OracleprotoError as exc:  # e.g. the cassette folder is a symlink out of the run
        error = [failed("cassettes", str(exc))]
        return lambda: (error, None)

    def result() -> tuple[list[Check], dict[str, str] | None]:
        try:
            return pending()
        except OracleprotoError as exc:
            return [failed("cassettes", str(exc))], None

    return result


def verify_run(
    run_dir: Path,
    *,
    dataset: Path | None = None,
    extra_datasets: tuple[Path, ...] = (),
    progress: Progress = quiet,
) -> VerifyReport:
    """Every check on one run directory; never raises for a damaged run (the report says what)."""
    from oracleproto.panel.verify import is_panel, verify_panel

    if is_panel(run_dir):  # each member verified as a run, then the merge (panel/verify.py)
        return verify_panel(run_dir, verify_member=_verify_member, dataset=dataset, progress=progress)
    run = _open_idle(run_dir)
    report = VerifyReport(run.root)
    interrupted = _finish_interrupted_switch(run)
    if interrupted is not None:
        report.checks.append(interrupted)
    progress("manifest")
    manifest = _manifest(run, report)
    attestation_path = run.root / ATTESTATION_NAME
    if attestation_path.is_file():
        progress("files against the attestation")
        attestation, check = load_attestation(attestation_path)
        report.checks.append(check)
        if attestation is not None:
            report.checks.extend(check_files(run.root, attestation))
    else:
        report.checks.append(skipped("attestation.json", "absent: per-file digests not checked"))
    if manifest is None:
        return report
    earlier = manifest.earlier_implementation
    if earlier:
        report.checks.extend(recording_checks())
        pending: PendingCassettes | None = None
    else:
        progress("cassettes")
        pending = _cassettes(run, manifest)
    # The cassette checks go here in the report, whenever they finish.
    at = len(report.checks)

    def cassettes_done() -> dict[str, str] | None:
        nonlocal pending
        if pending is None:
            return None
        cassette_checks, digests = pending()
        pending = None
        report.checks[at:at] = cassette_checks
        return digests

    try:
        _databases_onward(
            run,
            manifest,
            report,
            dataset=dataset,
            extra_datasets=extra_datasets,
            progress=progress,
            cassettes_done=cassettes_done,
        )
    finally:
        cassettes_done()
    return report


def _databases_onward(
    run: RunDir,
    manifest: Manifest,
    report: VerifyReport,
    *,
    dataset: Path | None,
    extra_datasets: tuple[Path, ...],
    progress: Progress,
    cassettes_done: Callable[[], dict[str, str] | None],
) -> None:
    """The checks after the cassettes; the analysis regeneration runs before waiting for them."""
    earlier = manifest.earlier_implementation
    progress("databases")
    try:
        db_paths = run.model_db_paths(manifest)
    except OracleprotoError as exc:
        report.checks.append(failed("db/", str(exc)))
        return
    metas: dict[str, RunMeta] = {}
    labels = {f"db/{p.name}": p for p in db_paths.values()}
    for slug, path in db_paths.items():
        checks, meta = check_database(path, f"db/{path.name}", slug, manifest)
        report.checks.extend(checks)
        if meta is not None:
            metas[f"db/{path.name}"] = meta
    if len(metas) != len(db_paths) or not metas:
        return
    report.checks.append(check_file_names(manifest))
    report.checks.append(check_grid(manifest))
    progress("dataset hash chain")
    if earlier and dataset is None:
        # The earlier implementation names its dataset: the SOURCE_DB of its snapshots (which agree).
        snapshot = next(iter(metas.values())).config_snapshot
        dataset_checks = _earlier_dataset(run.root, snapshot, manifest, labels, extra_datasets)
    else:
        dataset_checks = _dataset(manifest, labels, dataset, extra_datasets)
    progress("analysis regeneration")
    analysis_checks = _analysis(run, metas, labels, earlier=earlier)
    if earlier:
        report.checks.append(check_layout_coherent(run, metas, db_paths))
        report.checks.append(check_earlier_snapshots(metas))
    else:
        report.checks.append(check_sample_entries(manifest, db_paths, cassettes_done()))
        report.checks.append(check_snapshots_agree(metas))
        report.checks.append(check_harness_profile(manifest, metas))
        report.checks.append(check_protocol_texts(metas))
    report.checks.extend(dataset_checks)
    report.checks.extend(analysis_checks)


def _dataset(
    manifest: Manifest, labels: dict[str, Path], dataset: Path | None, extra_datasets: tuple[Path, ...]
) -> list[Check]:
    """The dataset links, against ``dataset`` or the first candidate with the recorded hash."""
    candidates = [dataset] if dataset is not None else [*extra_datasets, demo_db_path()]
    found = find_dataset(manifest.hashes.source_db, candidates) if dataset is None else dataset
    if found is None:
        tried = ", ".join(str(p) for p in candidates)
        return [
            failed(
                "dataset",
                f"no dataset with source_db hash {manifest.hashes.source_db[:16]}… (tried {tried}); "
                "pass --dataset PATH with the source DB the run was recorded on",
            )
        ]
    return check_dataset(found, manifest, labels)


def _earlier_dataset(
    run_root: Path,
    snapshot: dict[str, Any],
    manifest: Manifest,
    labels: dict[str, Path],
    extra_datasets: tuple[Path, ...],
) -> list[Check]:
    """The dataset links of an earlier-implementation run, against the source DB its snapshot names."""
    found, check = locate_dataset(run_root, snapshot, manifest.hashes.source_db, extra=extra_datasets)
    return [check] if found is None else [check, *check_dataset(found, manifest, labels)]


def _analysis(
    run: RunDir, metas: dict[str, RunMeta], labels: dict[str, Path], *, earlier: bool
) -> list[Check]:
    """``analysis/`` against its regeneration under the run's analysis settings (and the refresh audit)."""
    if earlier:
        foreign = foreign_analysis(run.analysis_dir)
        return (
            [foreign]
            if foreign is not None
            else check_analysis(run.root, run.analysis_dir, analysis_settings())
        )
    first = next(iter(metas.values()))
    try:
        settings = settings_from_snapshot(first.config_snapshot, where=next(iter(labels.values())))
    except OracleprotoError as exc:
        return [failed("analysis settings", str(exc))]
    return [
        *check_analysis(run.root, run.analysis_dir, settings.analysis),
        *check_refresh_audit(run.root, run.analysis_dir, settings.analysis),
    ]


def _verify_member(run_dir: Path, dataset: Path | None) -> VerifyReport:
    return verify_run(run_dir, dataset=dataset)
