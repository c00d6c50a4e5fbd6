"""What a run sends besides the dataset: its harness profile, protocol layout and detector template.

Loaded from ``HARNESS_PROFILE`` (default: the built-in profile) with the shorthands
``PROTOCOLS_FILE`` / ``LEAK_DETECTOR_PROMPT_FILE`` overriding their parts when recording or
resuming, and from the recorded ``config_snapshot`` when replaying (the paths are locations, not
kept: the snapshot keeps a non-built-in profile and text itself, so a reviewer replays without
the files). The *effective* profile (overrides applied) is the run's harness identity.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from oracleproto.errors import ConfigError, StoreError
from oracleproto.profile import (
    HarnessProfile,
    builtin_profile,
    load_profile,
    parse_profile_text,
    profile_fingerprint,
    profile_to_data,
)
from oracleproto.profile.canonical import canonical_text
from oracleproto.profile.overrides import with_detector_template, with_protocols
from oracleproto.prompts import (
    ProtocolBlock,
    ProtocolLayout,
    RuntimeProtocols,
    layout_from_data,
    load_protocol_file,
)
from oracleproto.prompts.render import OutcomeLines
from oracleproto.providers.detector_template import DetectorTemplate
from oracleproto.runner.setting_roles import env_name
from oracleproto.settings.model import ReactSettings, Settings

#: config_snapshot key of a ``PROTOCOLS_FILE`` layout (blocks, separator, suffix, hash).
PROTOCOLS_KEY = "runtime_protocols"
#: config_snapshot key of a ``LEAK_DETECTOR_PROMPT_FILE`` template's text.
DETECTOR_TEMPLATE_KEY = "leak_detector_prompt_template"
DETECTOR_HASH_KEY = "leak_detector_prompt_hash"
#: config_snapshot key of the run's harness profile: ``{"name", "fingerprint", "base_fingerprint"}``:
#: the effective profile's fingerprint, and that of the profile before the shorthand files.
PROFILE_KEY = "harness_profile"
#: config_snapshot key of the profile file's canonical JSON text (absent for the built-in profile).
#: Text, not an object: snapshots are stored with sorted keys, and the order of some of a profile's
#: objects (the tool schema) is part of its bytes.
PROFILE_DATA_KEY = "harness_profile_data"
_RECORDED = "the recorded run_meta.config_snapshot"
#: Protocol block → the ReactSettings switch it stands for.
SWITCHES = {"reflection": "reflection_protocol", "belief": "belief_protocol", "budget": "budget_footer"}


def profile_layout(profile: HarnessProfile) -> ProtocolLayout:
    """A profile's protocols as a layout (the run settings switch its blocks on and off)."""
    blocks = tuple(
        ProtocolBlock(b.name, b.text, b.separator, b.terminator, b.text_search_disabled)  # type: ignore[arg-type]
        for b in profile.protocols.blocks
    )
    return ProtocolLayout(blocks, profile.protocols.separator, profile.protocols.suffix)


def outcome_lines(profile: HarnessProfile) -> OutcomeLines:
    """A profile's multiple-choice outcome lines, for the renderer."""
    return OutcomeLines(profile.prompt.outcome_line, profile.prompt.outcome_line_other)


@dataclass(frozen=True)
class RunTexts:
    """A run's effective harness profile, ``PROTOCOLS_FILE`` layout (None: the profile's protocols,
    switched by ``ENABLE_*``) and detector template."""

    layout: ProtocolLayout | None
    detector: DetectorTemplate
    #: The effective profile: the run's profile with the shorthand files' parts in place.
    profile: HarnessProfile
    #: The profile ``HARNESS_PROFILE`` named (None: the built-in one); the snapshot keeps its data.
    base: HarnessProfile | None = None
    #: The detector template came from ``LEAK_DETECTOR_PROMPT_FILE`` (the snapshot keeps its text).
    detector_from_file: bool = False
    #: False for a run recorded before harness profiles: its snapshot, manifest and tables name none.
    records_profile: bool = True

    def protocols(self, react: ReactSettings) -> RuntimeProtocols:
        """The runtime protocols of a run with these texts and ``react``'s budget."""
        if self.layout is None:
            protocols = RuntimeProtocols.from_settings(react, profile_layout(self.profile))
        else:
            protocols = RuntimeProtocols.from_layout(self.layout, react.max_steps, react.max_search_calls)
        rules = self.profile.fingerprints
        return replace(protocols, block_hash=rules.protocol_blocks, budget_hash=rules.budget_block)

    @property
    def fingerprint(self) -> str:
        """The effective profile's fingerprint."""
        return profile_fingerprint(self.profile)

    def snapshot_entries(self, *, detector_enabled: bool) -> dict[str, Any]:
        """What the config snapshot keeps: fingerprints, the profile, and any file's text."""
        entries: dict[str, Any] = {DETECTOR_HASH_KEY: self.detector.fingerprint if detector_enabled else None}
        if detector_enabled and self.detector_from_file and not self.detector.is_builtin:
            entries[DETECTOR_TEMPLATE_KEY] = self.detector.text
        if self.layout is not None and not self.layout.is_builtin:
            entries[PROTOCOLS_KEY] = {**self.layout.to_data(), "hash": self.layout.fingerprint()}
        if self.records_profile:
            entries[PROFILE_KEY] = {
                "name": self.profile.name,
                "fingerprint": self.fingerprint,
                "base_fingerprint": profile_fingerprint(self.base or builtin_profile()),
            }
            if self.base is not None:
                entries[PROFILE_DATA_KEY] = canonical_text(profile_to_data(self.base))
        return entries

    def without_profile_record(self) -> RunTexts:
        """The same texts for a run recorded before harness profiles (nothing names a profile)."""
        return replace(self, records_profile=False)


def _same_texts(profile: HarnessProfile, layout: ProtocolLayout) -> bool:
    """True when ``layout`` is ``profile``'s own protocols, some blocks left out (it then changes
    no byte: the blocks it lists are switched on, which the profile's switches could do too)."""
    own = profile_layout(profile)
    kept = tuple(block for block in own.blocks if block.name in layout.names)
    return layout.blocks == kept and layout.separator == own.separator and layout.suffix == own.suffix


def _effective(base: HarnessProfile, layout: ProtocolLayout | None, template: str | None) -> HarnessProfile:
    profile = base
    if layout is not None and not _same_texts(base, layout):
        blocks = [(block.name, block.text) for block in layout.blocks]
        profile = with_protocols(profile, separator=layout.separator, suffix=layout.suffix, blocks=blocks)
    if template is not None:
        profile = with_detector_template(profile, template)
    return profile


def load_run_texts(settings: Settings) -> RunTexts:
    """The texts the settings' files hold (the built-in profile where ``HARNESS_PROFILE`` is not set)."""
    path = settings.run.harness_profile
    base = None if path is None else load_profile(path)
    profile = base if base is not None else builtin_profile()
    protocols_path = settings.react.protocols_file
    layout = None if protocols_path is None else load_protocol_file(protocols_path)
    prompt_file = settings.detector.prompt_file
    detector = DetectorTemplate.from_settings(settings.detector, profile)
    effective = _effective(profile, layout, detector.text if prompt_file is not None else None)
    if (
        base is not None
        and profile_fingerprint(base) == profile_fingerprint(builtin_profile())
        and (base.name == builtin_profile().name)
    ):
        base = None  # `--profile builtin`, or an export of it: the built-in profile itself
    return RunTexts(layout, detector, effective, base, detector_from_file=prompt_file is not None)


def recorded_profile(snapshot: dict[str, Any]) -> HarnessProfile:
    """The profile file a recorded run named (its data in the snapshot), else the built-in one."""
    text = snapshot.get(PROFILE_DATA_KEY)
    if text is None:
        return builtin_profile()
    if not isinstance(text, str):
        raise StoreError(
            f"{_RECORDED}: {PROFILE_DATA_KEY} is not the profile's JSON text; the snapshot was altered"
        )
    try:
        return parse_profile_text(text, source=f"{_RECORDED}: {PROFILE_DATA_KEY}")
    except ConfigError as exc:
        raise StoreError(str(exc)) from None


def _recorded_layout(snapshot: dict[str, Any]) -> ProtocolLayout | None:
    raw = snapshot.get(PROTOCOLS_KEY)
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise StoreError(f"{_RECORDED}: {PROTOCOLS_KEY} is not an object; the run cannot be replayed")
    data = {k: v for k, v in raw.items() if k != "hash"}
    try:
        layout = layout_from_data(data, source=f"{_RECORDED}: {PROTOCOLS_KEY}")
    except ConfigError as exc:
        raise StoreError(str(exc)) from None
    if raw.get("hash") != layout.fingerprint():
        raise StoreError(
            f"{_RECORDED}: {PROTOCOLS_KEY} does not match its recorded hash; the snapshot was altered"
        )
    return layout


def _recorded_detector(snapshot: dict[str, Any], profile: HarnessProfile) -> tuple[DetectorTemplate, bool]:
    text = snapshot.get(DETECTOR_TEMPLATE_KEY)
    if text is None:
        return DetectorTemplate.from_profile(profile), False
    if not isinstance(text, str):
        raise StoreError(f"{_RECORDED}: {DETECTOR_TEMPLATE_KEY} is not text; the run cannot be replayed")
    try:
        source = f"{_RECORDED}: {DETECTOR_TEMPLATE_KEY}"
        return DetectorTemplate.from_text(text, source=source, profile=profile), True
    except ConfigError as exc:
        raise StoreError(str(exc)) from None


def recorded_run_texts(snapshot: dict[str, Any]) -> RunTexts:
    """The texts a recorded run used, from its config snapshot (absent keys: the built-in ones)."""
    base = recorded_profile(snapshot)
    layout = _recorded_layout(snapshot)
    detector, from_file = _recorded_detector(snapshot, base)
    recorded_hash = snapshot.get(DETECTOR_HASH_KEY)
    if recorded_hash is not None and recorded_hash != detector.fingerprint:
        raise StoreError(
            f"{_RECORDED}: {DETECTOR_HASH_KEY} {recorded_hash} is not the fingerprint of the detector "
            f"template it describes ({detector.fingerprint}); the snapshot was altered or written by "
            "another tool, so its detector requests cannot be rebuilt"
        )
    effective = _effective(base, layout, detector.text if from_file else None)
    recorded = snapshot.get(PROFILE_KEY)
    if recorded is not None:
        found = recorded.get("fingerprint") if isinstance(recorded, dict) else None
        base_found = recorded.get("base_fingerprint") if isinstance(recorded, dict) else None
        if base_found != profile_fingerprint(base):
            found = None  # the profile data and its recorded fingerprint disagree: reported below
        if found != profile_fingerprint(effective):
            raise StoreError(
                f"{_RECORDED}: {PROFILE_KEY} has fingerprint {found!r}, but the profile and texts it records "
                f"make {profile_fingerprint(effective)}: the snapshot was altered, or the run was recorded "
                "by an oracleproto whose built-in harness profile differs (replay it with that release)"
            )
    return RunTexts(
        layout,
        detector,
        effective,
        base if PROFILE_DATA_KEY in snapshot else None,
        detector_from_file=from_file,
        records_profile=recorded is not None,
    )


def with_protocol_switches(settings: Settings, texts: RunTexts, *, recorded: bool = False) -> Settings:
    """``settings`` whose ``ENABLE_*`` protocol switches follow the layout's blocks (listed = on).

    Only a ``PROTOCOLS_FILE`` layout decides the switches; a profile's blocks are switched by them.
    A switch left at its default takes the file's value; one set explicitly to the opposite value
    contradicts the file and is refused (a recorded snapshot whose switches disagree with its
    layout is refused too).
    """
    if texts.layout is None:
        return settings
    react = settings.react
    listed = set(texts.layout.names)
    updates: dict[str, bool] = {}
    conflicts: list[str] = []
    for block, field in SWITCHES.items():
        wanted = block in listed
        current = bool(getattr(react, field))
        if current == wanted:
            continue
        if recorded or field in react.model_fields_set:
            name = env_name("react", field)
            state = "lists a" if wanted else "has no"
            conflicts.append(f"{name}={'true' if current else 'false'}, but the file {state} {block} block")
        else:
            updates[field] = wanted
    if conflicts:
        listed_conflicts = "; ".join(conflicts)
        if recorded:
            raise StoreError(f"{_RECORDED}: {listed_conflicts}; the snapshot was altered")
        raise ConfigError(
            f"{env_name('react', 'protocols_file')} {react.protocols_file}: {listed_conflicts}. With a "
            "protocols file the blocks it lists are on and the others off; unset the switch (the file "
            "decides) or edit the file's blocks"
        )
    if not updates:
        return settings
    return settings.model_copy(update={"react": react.model_copy(update=updates)})
