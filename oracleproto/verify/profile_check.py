"""``verify`` names the harness profile a run was recorded with, and checks its record is coherent.

The snapshot keeps the profile's fingerprint (and, for a profile file, its data); the manifest
repeats name and fingerprint. The profile is rebuilt from the snapshot alone, so a reader learns
which bytes the run sent without the file (``oracleproto profile export RUN`` writes it out).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from oracleproto.errors import OracleprotoError
from oracleproto.profile import profile_fingerprint
from oracleproto.runner.reconstruct import settings_from_snapshot
from oracleproto.runner.run_texts import PROFILE_KEY, recorded_run_texts
from oracleproto.store import Manifest, RunMeta
from oracleproto.verify.findings import Check, failed, passed

WHAT = "harness profile"


def check_harness_profile(manifest: Manifest, metas: Mapping[str, RunMeta]) -> Check:
    """Which profile the run used; FAIL when the snapshot's profile and the manifest disagree."""
    label, meta = next(iter(metas.items()))
    snapshot = meta.config_snapshot
    try:
        texts = recorded_run_texts(snapshot)
    except OracleprotoError as exc:
        return failed(WHAT, f"{label}: {exc}")
    fingerprint = profile_fingerprint(texts.profile)
    recorded = manifest.harness_profile
    if PROFILE_KEY not in snapshot:
        if recorded is not None:
            return failed(
                WHAT, f"manifest.json names profile {recorded.name} but {label}'s snapshot names none"
            )
        return passed(f"{WHAT}: built-in, recorded before harness profiles")
    if recorded is None:
        return failed(
            WHAT, f"{label}'s snapshot names profile {texts.profile.name} but manifest.json names none"
        )
    if (recorded.name, recorded.fingerprint) != (texts.profile.name, fingerprint):
        return failed(
            WHAT,
            f"manifest.json says {recorded.name} ({recorded.fingerprint}), {label}'s snapshot makes "
            f"{texts.profile.name} ({fingerprint})",
        )
    # The name is in the line itself: verify prints no detail for a passing check.
    return passed(
        f"{WHAT}: {texts.profile.name} ({fingerprint})", "`oracleproto profile export RUN` writes it out"
    )


PROTOCOLS = "run_meta protocol texts ↔ hashes"


def check_protocol_texts(metas: Mapping[str, RunMeta]) -> Check:
    """Each DB's reflection and belief texts are those its snapshot's profile and settings give, and
    their hashes are what the profile's ``fingerprints.protocol_blocks`` rule makes of them.

    The manifest and the DBs are compared elsewhere; this ties the hashes to the texts, so a text
    edited in ``run_meta`` (a prompt that was not sent) fails even with its hash left alone.
    """
    problems: list[str] = []
    for label, meta in metas.items():
        try:
            texts = recorded_run_texts(meta.config_snapshot)
            react = settings_from_snapshot(meta.config_snapshot, where=Path(label)).react
        except OracleprotoError as exc:
            problems.append(f"{label}: {exc}")
            continue
        protocols = texts.protocols(react)
        stored = {
            "reflection": (meta.reflection_protocol_text, meta.reflection_protocol_hash),
            "belief": (meta.belief_protocol_text, meta.belief_protocol_hash),
        }
        expected = {"reflection": protocols.reflection_text, "belief": protocols.belief_text}
        rule = texts.profile.fingerprints.protocol_blocks
        for name, (text, digest) in stored.items():
            recomputed = protocols.block_fingerprint(name, text)
            if text != expected[name]:
                problems.append(f"{label}: {name}_protocol_text is not the text its snapshot's profile gives")
            elif digest != recomputed:
                problems.append(
                    f"{label}: {name}_protocol_hash {digest} is not its text's hash under the "
                    f"profile's {rule!r} rule ({recomputed})"
                )
    if problems:
        return failed(PROTOCOLS, "; ".join(problems[:5]))
    return passed(PROTOCOLS, f"{len(metas)} databases")
