"""Refuse to resume a run with settings that differ from the ones it was started with.

Two sources are compared with what this session would write: the manifest (dataset hashes,
models, training cutoffs, n, filters, grid, protocol hashes, refresh) and the ``config_snapshot``
of every per-model DB's ``run_meta`` (every setting ``setting_roles`` marks as identity). The
check only reads: it runs before the run directory is created or locked, so a refused resume
leaves no byte behind. A setting absent from the stored snapshot (runs written by the earlier
implementation, or by an oracleproto that did not have it yet) is not a difference, unless its
absence says which value produced the run (``IMPLIED_WHEN_ABSENT``: ``ANSWER_PARSER``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oracleproto._version import HARNESS_REVISION, __version__
from oracleproto.errors import StoreError
from oracleproto.prompts.layout import layout_data_fingerprint
from oracleproto.runner.run_texts import PROFILE_KEY, PROTOCOLS_KEY
from oracleproto.runner.setting_roles import (
    DETECTOR_ONLY,
    IMPLIED_WHEN_ABSENT,
    SECTIONS,
    TOP_LEVEL_ALIASES,
    Setting,
    compared_settings,
    env_name,
)
from oracleproto.store import Manifest, RunDir
from oracleproto.store.peek import peek_config_snapshot
from oracleproto.transport.keys import normalise_host, normalise_path

_MISSING: Any = object()
_MAX_SHOWN = 100
_COMPARED = {(s.section, s.field): s for s in compared_settings()}


@dataclass(frozen=True)
class SettingChange:
    """One setting that differs between the stored run and this session."""

    name: str
    old: str
    new: str

    def __str__(self) -> str:
        return f"{self.name}: {self.old} → {self.new}"


def show(value: Any) -> str:
    """A value as a user would write it in the environment (lists comma-separated), shortened."""
    if value is None or value == "":
        text = "(unset)"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, list):
        text = ",".join(show(v) for v in value) or "(empty)"
    elif isinstance(value, dict):
        text = ",".join(f"{k}={show(v)}" for k, v in sorted(value.items())) or "(empty)"
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"


def _plain(value: Any) -> Any:
    """JSON round trip, so a stored (decoded) and a fresh (Python) snapshot compare alike."""
    return json.loads(json.dumps(value, default=str))


def _flat_value(snapshot: dict[str, Any], setting: Setting) -> Any:
    """A setting from the earlier implementation's flat snapshot (``LLM_TEMPERATURE``: …), validated."""
    wanted = setting.env_name.lower()
    raw = next((v for k, v in snapshot.items() if isinstance(k, str) and k.lower() == wanted), _MISSING)
    if raw is _MISSING:
        return _MISSING
    try:
        parsed = SECTIONS[setting.section].from_values({setting.field: raw})  # type: ignore[attr-defined]
    except ValueError:
        return _MISSING  # a value we cannot read is not compared
    return parsed.model_dump(mode="json")[setting.field]


def stored_value(snapshot: dict[str, Any], setting: Setting) -> Any:
    """The value ``snapshot`` holds for ``setting`` (ours, or the earlier flat layout), else missing."""
    section = snapshot.get(setting.section)
    if isinstance(section, dict) and setting.field in section:
        return _plain(section[setting.field])
    alias = TOP_LEVEL_ALIASES.get((setting.section, setting.field))
    if alias is not None and alias in snapshot:
        return _plain(snapshot[alias])
    value = _flat_value(snapshot, setting)
    implied = IMPLIED_WHEN_ABSENT.get((setting.section, setting.field))
    if value is _MISSING and implied is not None:
        try:
            return implied(snapshot)
        except ValueError:
            return _MISSING  # a value we cannot read is not compared
    return value


def _endpoint(url: Any) -> Any:
    """What the cassette keys see of a base URL: host (loopback ports dropped) and path."""
    if not isinstance(url, str) or not url:
        return url or None
    # A snapshot stores userinfo as ``[REDACTED]@``, which urlsplit takes for a bracketed IPv6 host
    # and refuses (a resume crashed); userinfo never changes the host or path, so it goes first.
    url = _USERINFO.sub(r"\1", url)
    return normalise_host(url) + normalise_path(url)


_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")


def _compared(snapshot: dict[str, Any], setting: Setting) -> Any:
    value = stored_value(snapshot, setting)
    if setting.role != "endpoint" or value is _MISSING:
        return value
    if setting.section == "detector" and not value:
        # An empty detector URL means the LLM's.
        value = stored_value(snapshot, _COMPARED["llm", "base_url"])
        if value is _MISSING:
            return _MISSING
    return _endpoint(value)


def compared_value(snapshot: dict[str, Any], setting: Setting) -> Any:
    """``setting`` as a resume compares it (endpoints normalised); None when the snapshot lacks it."""
    value = _compared(snapshot, setting)
    return None if value is _MISSING else value


def settings_changes(stored: dict[str, Any], fresh: dict[str, Any]) -> list[SettingChange]:
    """Identity settings whose stored value differs from this session's (absent = unknown = same)."""
    detector = _COMPARED["detector", "enabled"]
    detector_on = stored_value(stored, detector) is not False and stored_value(fresh, detector) is not False
    changes: list[SettingChange] = []
    for setting in _COMPARED.values():
        if setting.section == "detector" and setting.field in DETECTOR_ONLY and not detector_on:
            continue
        old, new = _compared(stored, setting), _compared(fresh, setting)
        if old is not _MISSING and new is not _MISSING and old != new:
            changes.append(SettingChange(setting.env_name, show(old), show(new)))
    prompt = "leak_detector_prompt_hash"
    old_prompt, new_prompt = stored.get(prompt), fresh.get(prompt)
    if detector_on and old_prompt is not None and new_prompt is not None and old_prompt != new_prompt:
        changes.append(SettingChange(_DETECTOR_PROMPT, show(old_prompt), show(new_prompt)))
    old_profile, new_profile = stored.get(PROFILE_KEY), fresh.get(PROFILE_KEY)
    # The profile file itself; what the shorthand files change is named by their own lines. A run
    # from before profiles names none (runner/execute.py lets only the built-in one resume it).
    if (
        isinstance(old_profile, dict)
        and isinstance(new_profile, dict)
        and old_profile.get("base_fingerprint") != new_profile.get("base_fingerprint")
    ):
        changes.append(SettingChange(_PROFILE, _profile_of(old_profile), _profile_of(new_profile)))
    old_layout, new_layout = _layout_fingerprint(stored), _layout_fingerprint(fresh)
    if old_layout is not _MISSING and new_layout is not _MISSING and old_layout != new_layout:
        changes.append(SettingChange(_PROTOCOLS_FILE, _layout(old_layout), _layout(new_layout)))
    return changes


_PROFILE = f"{env_name('run', 'harness_profile')} (name and fingerprint of the harness profile)"
_DETECTOR_PROMPT = f"{env_name('detector', 'prompt_file')} (sha256-16 of the detector prompt template)"
_PROTOCOLS_FILE = (
    f"{env_name('react', 'protocols_file')} (sha256-16 of the protocol texts, order, separator and suffix)"
)


def _layout_fingerprint(snapshot: dict[str, Any]) -> Any:
    """The protocol layout's fingerprint; None = built-in texts; missing for a foreign snapshot."""
    if not isinstance(snapshot.get("react"), dict):
        return _MISSING  # the earlier implementation's flat snapshot: its texts are unknown here
    value = snapshot.get(PROTOCOLS_KEY)
    if value is None:
        return None  # ours, without a protocols file (or from before the setting): built-in texts
    return layout_data_fingerprint(value) if isinstance(value, dict) else show(value)


def _layout(value: Any) -> str:
    return "built-in texts" if value is None else _short_hash(value)


def _short_hash(value: Any) -> str:
    return f"{value[:12]}…" if isinstance(value, str) and len(value) > 12 else show(value)


def _protocol(value: Any) -> str:
    return "off" if value is None else _short_hash(value)


def manifest_changes(existing: Manifest, fresh: Manifest) -> list[SettingChange]:
    """The manifest's identity keys that differ, named as the user sets them."""
    old, new = existing.model_dump(mode="json"), fresh.model_dump(mode="json")
    changes: list[SettingChange] = []

    def compare(name: str, a: Any, b: Any, render: Any = show) -> None:
        if a != b:
            changes.append(SettingChange(name, render(a), render(b)))

    hashes_old, hashes_new = old["hashes"], new["hashes"]
    compare(
        "SOURCE_DB (sha256 of the dataset file)",
        hashes_old["source_db"],
        hashes_new["source_db"],
        _short_hash,
    )
    compare(
        "dataset metadata (sha256 of features_json)",
        hashes_old["metadata"],
        hashes_new["metadata"],
        _short_hash,
    )
    compare(
        "dataset prompt templates (sha256)",
        hashes_old["prompt_templates"],
        hashes_new["prompt_templates"],
        _short_hash,
    )
    compare(env_name("llm", "models"), old["grid"]["real_models"], new["grid"]["real_models"])
    compare(env_name("llm", "training_cutoffs"), old["model_training_cutoffs"], new["model_training_cutoffs"])
    compare(env_name("run", "sampling_n"), old["sampling_n"], new["sampling_n"])
    compare(env_name("run", "grid_r_list"), old["grid"]["r_list"], new["grid"]["r_list"])
    compare(env_name("run", "grid_c_list"), old["grid"]["c_list"], new["grid"]["c_list"])
    filters_old, filters_new = old["filters"], new["filters"]
    compare(env_name("run", "question_types"), filters_old["question_types"], filters_new["question_types"])
    compare(env_name("run", "choice_types"), filters_old["choice_types"], filters_new["choice_types"])
    if not changes and filters_old["question_ids"] != filters_new["question_ids"]:
        compare(
            "questions selected (SOURCE_DB / SOURCE_TABLE / QUESTION_LIMIT, run --limit)",
            f"{filters_old['question_count']} questions",
            f"{filters_new['question_count']} questions"
            + (" (other ids)" if filters_old["question_count"] == filters_new["question_count"] else ""),
        )
    compare(_REFLECTION, old["reflection_protocol_hash"], new["reflection_protocol_hash"], _protocol)
    compare(_BELIEF, old["belief_protocol_hash"], new["belief_protocol_hash"], _protocol)
    compare("refresh (--refresh / --select)", old.get("refresh"), new.get("refresh"), _refresh)
    compare(_EXPERIMENT, old.get("experiment"), new.get("experiment"), _shard)
    if not changes and old["model_files"] != new["model_files"]:
        compare("model_files", old["model_files"], new["model_files"])
    return changes


_EXPERIMENT = "experiment (run --shard / --shard-models / --experiment)"
_REFLECTION = "reflection protocol (sha256-16; ENABLE_REFLECTION_PROTOCOL)"
_BELIEF = "belief protocol (sha256-16; ENABLE_BELIEF_PROTOCOL)"
#: A line left out when a setting that caused it is listed (one change, one line).
_IMPLIED_BY = {
    _REFLECTION: (env_name("react", "reflection_protocol"), _PROTOCOLS_FILE, _PROFILE),
    _BELIEF: (env_name("react", "belief_protocol"), _PROTOCOLS_FILE, _PROFILE),
    # A changed profile changes these too: one change, one line.
    _PROTOCOLS_FILE: (_PROFILE,),
    _DETECTOR_PROMPT: (_PROFILE,),
}


def _profile_of(record: dict[str, Any]) -> str:
    """How a snapshot's harness profile is shown: its name and the profile file's fingerprint."""
    return f"{record.get('name')} ({record.get('base_fingerprint')})"


def _refresh(value: Any) -> str:
    if not isinstance(value, dict):
        return "(not a refresh)"
    selection = " ".join(f"--select {c}" for c in value.get("selection") or []) or "no --select"
    return f"refresh of {value.get('of')} ({selection}, generation {value.get('generation')})"


def _shard(value: Any) -> str:
    if not isinstance(value, dict):
        return "(not a shard)"
    index, count = value.get("shard_index"), value.get("shard_count")
    part = f"shard {index}/{count}" if count is not None else "a --shard-models part"
    return f"{part} of experiment {value.get('id')}"


def stored_snapshots(run: RunDir, manifest: Manifest) -> list[dict[str, Any]]:
    """The config snapshot of every per-model DB the run has written so far (read only)."""
    snapshots: list[dict[str, Any]] = []
    for slug in manifest.models:
        name = manifest.model_files.get(slug)
        if name is None or Path(name).name != name:
            continue  # the manifest comparison (or the run itself) reports a broken model_files
        snapshot = peek_config_snapshot(run.db_dir / name)
        if snapshot is not None:
            snapshots.append(snapshot)
    return snapshots


def resume_changes(
    run: RunDir, existing: Manifest, fresh: Manifest, snapshot: dict[str, Any]
) -> list[SettingChange]:
    """Every identity difference between the run on disk and this session, each named once."""
    changes = manifest_changes(existing, fresh)
    for stored in stored_snapshots(run, existing):
        changes.extend(settings_changes(stored, snapshot))
    named = {change.name for change in changes}
    unique: dict[str, SettingChange] = {}
    for change in changes:
        if not any(cause in named for cause in _IMPLIED_BY.get(change.name, ())):
            unique.setdefault(change.name, change)
    return list(unique.values())


def refuse_earlier_implementation(existing: Manifest) -> None:
    """A run the earlier implementation wrote is read, verified and re-scored, never continued.

    Its samples have no recording: a resume would add recorded samples to unrecorded ones, and
    the result could be neither replayed nor verified as one run (nor analysed by that code's
    tools, which would meet our cassettes and tables in its layout).
    """
    if not existing.earlier_implementation:
        return
    raise StoreError(
        f"run {existing.run_id} was written by the earlier implementation of the paper (its manifest.json "
        "has no 'cassettes' nor 'oracleproto_version'), so oracleproto does not resume it: its samples "
        "have no recording, and a run part recorded, part not could not be replayed or verified. "
        f"Nothing was written. Check it with `oracleproto verify {existing.run_id}`, re-score it with "
        f"`oracleproto report RUN_DIR --convention reference-v4 --out DIR`, or start a new run "
        "(leave out --run-id, or give a new run id)."
    )


def check_harness_revision(existing: Manifest, action: str) -> None:
    """Refuse to ``action`` (resume, replay, refresh) a run another harness revision recorded.

    Settings cannot describe such a difference: the code itself sends other requests and stores
    other values, so a resumed run would mix two harnesses and a replay would miss its cassettes.
    """
    if existing.earlier_implementation:
        return
    recorded = existing.harness_revision or 1
    if recorded == HARNESS_REVISION:
        return
    newer = "an older" if recorded < HARNESS_REVISION else "a newer"
    raise StoreError(
        f"run {existing.run_id} was recorded by harness revision {recorded}, and this oracleproto "
        f"({__version__}) is revision {HARNESS_REVISION}: {newer} harness sent other requests and stored "
        f"other values, so this one cannot {action} it byte for byte. Nothing was written. "
        f"`oracleproto verify {existing.run_id}` still checks it without re-executing and "
        f"`oracleproto report` re-scores it; to {action} it, use the oracleproto release that "
        f"recorded it (revision {recorded}), or record a new run."
    )


def check_resume(run: RunDir, existing: Manifest, fresh: Manifest, snapshot: dict[str, Any]) -> None:
    """Raise :class:`StoreError` listing each changed identity setting (``NAME: old → new``)."""
    refuse_earlier_implementation(existing)
    check_harness_revision(existing, "resume")
    changes = resume_changes(run, existing, fresh, snapshot)
    if not changes:
        return
    listed = "\n".join(f"  {change}" for change in changes)
    raise StoreError(
        f"run {existing.run_id} cannot be resumed: it was started with different settings, and "
        f"resuming would mix two configurations in one run:\n{listed}\n"
        "Nothing was written. To resume it, rerun with the settings it was started with; to use the "
        "new settings, start a new run (leave out --run-id, or give a new run id)."
    )
