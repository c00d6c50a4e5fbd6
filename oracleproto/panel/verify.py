"""``verify PANEL``: every member verified as a run, the merge checked byte for byte, the analysis
regenerated, and the panel's own files against its attestation and Merkle root."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from oracleproto.errors import OracleprotoError
from oracleproto.panel.build import FORMAT, merged_manifest, panel_document
from oracleproto.panel.members import Member, file_sha256, leaf_digest, open_member
from oracleproto.panel.spec import MemberSpec, PanelError
from oracleproto.primitives.hashing import canonical_json
from oracleproto.primitives.json_input import load_json
from oracleproto.store.manifest import MANIFEST_NAME
from oracleproto.store.rundir import DB_DIR, PANEL_NAME
from oracleproto.transport.integrity import merkle_root
from oracleproto.verify.attest import ATTESTATION_NAME, check_files, load_attestation
from oracleproto.verify.findings import Check, VerifyReport, failed, passed, skipped

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


def is_panel(path: Path) -> bool:
    """True for a directory ``panel build`` wrote (it holds ``panel.json``)."""
    return path.is_dir() and (path / PANEL_NAME).is_file()


def load_panel(panel_dir: Path) -> dict[str, Any]:
    """``panel.json``, parsed; a damaged one is a :class:`PanelError` naming the file."""
    path = panel_dir / PANEL_NAME
    try:
        document = load_json(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise PanelError(f"{path}: not readable as JSON ({exc})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise PanelError(f"{path}: not an {FORMAT} document")
    members = document.get("members")
    if not isinstance(members, list) or not members or not all(isinstance(m, dict) for m in members):
        raise PanelError(f"{path}: 'members' must be a non-empty list of objects")
    return document


def member_spec(entry: dict[str, Any]) -> MemberSpec:
    """The member as recorded, as a panel-file member (its path is relative to the panel)."""
    ref = entry.get("ref") or {}
    return MemberSpec(path=ref.get("path"), store=ref.get("store"), sha256=str(entry.get("sha256")))


def open_recorded_members(
    panel_dir: Path, document: dict[str, Any], progress: Progress
) -> tuple[list[Member], list[Check]]:
    """Every member as ``panel.json`` locates it, pinned by its recorded seal digest."""
    members: list[Member] = []
    checks: list[Check] = []
    for entry in document["members"]:
        label = f"member {entry.get('run_id')}"
        try:
            spec = member_spec(entry)
            url = (entry.get("ref") or {}).get("url")
            member = open_member(spec, panel_dir, url, progress)
        except (OracleprotoError, ValueError) as exc:
            checks.append(failed(label, f"{label}: {exc}"))
            continue
        if member.run_id != entry.get("run_id"):
            checks.append(failed(label, f"{label}: the member found is run {member.run_id}"))
            continue
        checks.append(passed(label, f"{member.seal} sha256 {member.sha256[:16]}… as pinned"))
        members.append(member)
    return members, checks


def _merge_checks(panel_dir: Path, document: dict[str, Any], members: list[Member]) -> list[Check]:
    checks: list[Check] = []
    root = merkle_root(leaf_digest({k: v for k, v in e.items() if k != "ref"}) for e in document["members"])
    if root != document.get("root"):
        checks.append(
            failed("panel root", f"{PANEL_NAME}: its members hash to root {root}, not {document.get('root')}")
        )
    else:
        checks.append(passed("panel root", f"Merkle root over {len(members)} member(s) {root[:16]}…"))
    order = document.get("order")
    run_id = str(document.get("run_id"))
    rebuilt = panel_document(members, panel_dir, run_id, root, document.get("name"), order=order)
    recorded = dict(document)
    if canonical_json(rebuilt) != canonical_json(recorded):
        keys = sorted(k for k in set(rebuilt) | set(recorded) if rebuilt.get(k) != recorded.get(k))
        checks.append(failed(PANEL_NAME, f"{PANEL_NAME}: differs from its members in {', '.join(keys)}"))
    else:
        checks.append(passed(PANEL_NAME, "agrees with every member"))
    manifest_text = merged_manifest(members, run_id, order).to_json()
    if (panel_dir / MANIFEST_NAME).read_bytes() != manifest_text.encode("utf-8"):
        checks.append(
            failed(MANIFEST_NAME, f"{MANIFEST_NAME}: differs from the merge of the members' manifests")
        )
    else:
        checks.append(passed(MANIFEST_NAME, "the merge of the members' manifests"))
    for member in members:
        for slug, (file, digest) in member.databases.items():
            label = f"{DB_DIR}/{file}"
            copy = panel_dir / DB_DIR / file
            if not copy.is_file():
                checks.append(
                    failed(label, f"{label}: missing from the panel (model {slug} of {member.label})")
                )
            elif file_sha256(copy) != digest:
                checks.append(
                    failed(
                        label, f"{label}: not byte-identical to {member.run.db_dir / file} ({member.label})"
                    )
                )
            else:
                checks.append(passed(label, f"byte-identical to {member.label}'s"))
    return checks


#: How one member is verified as a run: ``verify.run.verify_run`` (passed in, so that this module
#: does not import the run verifier that dispatches panels to it).
MemberVerifier = Callable[[Path, Path | None], VerifyReport]


def verify_panel(
    panel_dir: Path,
    *,
    verify_member: MemberVerifier,
    dataset: Path | None = None,
    progress: Progress = _quiet,
) -> VerifyReport:
    """Every check on a panel; never raises for a damaged panel (the report says what)."""
    from oracleproto.panel.build import analysis_settings
    from oracleproto.verify.regen import check_analysis

    report = VerifyReport(panel_dir)
    progress("panel files against the attestation")
    attestation_path = panel_dir / ATTESTATION_NAME
    if attestation_path.is_file():
        attestation, check = load_attestation(attestation_path)
        report.checks.append(check)
        if attestation is not None:
            report.checks.extend(check_files(panel_dir, attestation))
    else:
        report.checks.append(failed(ATTESTATION_NAME, "missing: a panel is sealed when it is built"))
    try:
        document = load_panel(panel_dir)
    except PanelError as exc:
        report.checks.append(failed(PANEL_NAME, str(exc)))
        return report
    members, checks = open_recorded_members(panel_dir, document, progress)
    report.checks.extend(checks)
    if len(members) != len(document["members"]):
        report.checks.append(skipped("merge", "not checked: a member could not be opened"))
        return report
    for member in members:
        progress(f"member {member.run_id}")
        sub = verify_member(member.run.root, dataset)
        bad = sub.failures
        label = f"member {member.run_id} verify"
        if bad:
            shown = "; ".join(c.detail or c.what for c in bad[:5])
            report.checks.append(failed(label, f"{member.label}: {len(bad)} check(s) failed: {shown}"))
        else:
            report.checks.append(passed(label, f"{len(sub.checks)} checks of {member.label} pass"))
    progress("merge")
    report.checks.extend(_merge_checks(panel_dir, document, members))
    progress("analysis regeneration")
    try:
        settings = analysis_settings(members)
    except OracleprotoError as exc:
        report.checks.append(failed("analysis settings", str(exc)))
        return report
    report.checks.extend(check_analysis(panel_dir, panel_dir / "analysis", settings))
    return report
