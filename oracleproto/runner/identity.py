"""What a run is made of and fingerprinted by: dataset, filters, hash chain, config snapshot.

Computed once, before any network call, so the manifest and every ``run_meta`` row carry the
same identity and a resume can check it has not changed underneath.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from oracleproto.dataset.admission import parse_training_cutoff
from oracleproto.dataset.hashes import metadata_hash, source_db_hash
from oracleproto.dataset.loader import load_questions, read_features_json, template_forms
from oracleproto.dataset.models import PromptTemplates, Question
from oracleproto.errors import ConfigError
from oracleproto.profile import HarnessProfile
from oracleproto.prompts import RuntimeProtocols, prompt_templates_hash
from oracleproto.prompts.render import templates_as_recorded
from oracleproto.providers.detector_template import DetectorTemplate
from oracleproto.runner.run_texts import RunTexts, load_run_texts, recorded_run_texts
from oracleproto.runner.selection import limit_questions
from oracleproto.settings.model import Settings

#: Settings that locate files or select the mode; they do not change what is asked of a model,
#: so they stay out of the config snapshot (a replay elsewhere must produce the same snapshot).
_LOCATION_FIELDS = {
    "run": ("mode", "source_db", "runs_root", "cassette_dir", "cache_dir", "harness_profile"),
    "analysis": (),
    # Their content enters through RunTexts.snapshot_entries (fingerprints, non-built-in texts; the
    # harness profile's fingerprint and data).
    "react": ("protocols_file",),
    "detector": ("prompt_file",),
}
#: Session policies: how long a call may wait and when a session gives up. They never change what
#: is asked, stored or scored (a run stopped by them is resumed, possibly with other values).
_SESSION_POLICY_FIELDS = {"run": ("retry_after_max_s", "circuit_breaker_calls")}


@dataclass(frozen=True)
class RunIdentity:
    """Questions, templates and every fingerprint of one run."""

    source_db: Path
    questions: tuple[Question, ...]
    #: The templates prompts are rendered from (a legacy dataset's one multiple-choice key as its
    #: two stand-ins, ``dataset/loader.py``).
    templates: PromptTemplates
    #: The templates each DB's ``prompt_templates`` table holds and ``prompt_templates_hash`` hashes:
    #: the keys as the dataset writes them (run-layout.md), or the stand-ins for a run that recorded those.
    stored_templates: PromptTemplates
    source_db_hash: str
    metadata_hash: str
    prompt_templates_hash: str
    protocols: RuntimeProtocols
    training_cutoffs: dict[str, Any]
    filters: dict[str, Any]
    config_snapshot: dict[str, Any]
    #: The detector template the run's requests are built from (recorded one on replay).
    detector_template: DetectorTemplate
    #: The run's harness: effective profile, protocol layout and detector template.
    texts: RunTexts

    def keeping_templates_of(self, recorded_hash: str | None) -> RunIdentity:
        """This identity with the templates stored as the run being replayed or resumed stored them.

        Before oracleproto stored a legacy dataset's templates as written, it stored the two
        stand-ins and hashed those: such a run keeps doing so, so that its replay reproduces its
        DBs and its resume is not refused as if the dataset had changed.
        """
        stored = templates_as_recorded(self.templates, self.stored_templates, recorded_hash)
        if stored is self.stored_templates:
            return self
        return replace(self, stored_templates=stored, prompt_templates_hash=prompt_templates_hash(stored))

    @property
    def profile(self) -> HarnessProfile:
        """The effective harness profile every request is built from."""
        return self.texts.profile

    @property
    def profile_record(self) -> dict[str, str] | None:
        """``{"name", "fingerprint"}`` of the profile, or None for a run recorded before profiles."""
        if not self.texts.records_profile:
            return None
        return {"name": self.texts.profile.name, "fingerprint": self.texts.fingerprint}

    @property
    def reflection_protocol_hash(self) -> str | None:
        """sha256-16 of the reflection scaffold, None when off."""
        return self.protocols.fingerprints()["reflection_protocol_hash"]

    @property
    def belief_protocol_hash(self) -> str | None:
        """sha256-16 of the belief block, None when off."""
        return self.protocols.fingerprints()["belief_protocol_hash"]


def config_snapshot(settings: Settings, texts: RunTexts | None = None) -> dict[str, Any]:
    """The redacted settings plus the detector fingerprint (paper Table 7), locations removed.

    ``texts`` are the run's protocol layout and detector template (default: the settings' files).
    """
    texts = texts if texts is not None else load_run_texts(settings)
    snapshot = settings.snapshot()
    for section, names in _LOCATION_FIELDS.items():
        for name in names:
            snapshot[section].pop(name, None)
    for section, names in _SESSION_POLICY_FIELDS.items():
        for name in names:
            snapshot[section].pop(name, None)
    snapshot["leak_detector_enabled"] = settings.detector.enabled
    snapshot["leak_detector_model"] = settings.detector.model if settings.detector.enabled else None
    snapshot.update(texts.snapshot_entries(detector_enabled=settings.detector.enabled))
    return snapshot


def resolve_identity(
    settings: Settings,
    source_db: Path,
    *,
    snapshot_override: dict[str, Any] | None = None,
    texts: RunTexts | None = None,
) -> RunIdentity:
    """Load and filter the questions, compute the hash chain; no network.

    ``texts`` default to the recorded ones with ``snapshot_override`` (replay), else the files'.
    """
    if texts is None:
        override = snapshot_override
        texts = load_run_texts(settings) if override is None else recorded_run_texts(override)
    questions = load_questions(source_db, settings.run.source_table)
    templates, stored_templates = template_forms(source_db)
    wanted_types = settings.run.question_types
    wanted_choices = settings.run.choice_types
    selected = tuple(
        q
        for q in questions
        if (not wanted_types or q.question_type in wanted_types)
        and (not wanted_choices or q.choice_type in wanted_choices)
    )
    if not selected:
        types = ", ".join(sorted({q.question_type for q in questions}))
        choices = ", ".join(sorted({q.choice_type for q in questions}))
        raise ConfigError(
            f"no question of {source_db} matches QUESTION_TYPES={wanted_types} CHOICE_TYPES={wanted_choices} "
            f"(its {len(questions)} questions have question types {types} and choice types {choices}); "
            "change or unset those filters"
        )
    cutoffs: dict[str, Any] = {}
    for model in settings.llm.models:
        raw = settings.llm.training_cutoffs.get(model)
        if raw is None:
            raise ConfigError(
                f"MODEL_TRAINING_CUTOFFS has no cutoff for {model!r}; add '{model}=YYYY-MM' "
                "(month granularity means the last day of that month)"
            )
        cutoffs[model] = parse_training_cutoff(raw)
    selected = limit_questions(
        selected,
        limit=settings.run.question_limit,
        training_cutoffs=cutoffs,
        delta_days=settings.run.delta_days,
    )
    if not selected:
        raise ConfigError(
            f"QUESTION_LIMIT={settings.run.question_limit}: none of the selected questions of {source_db} is "
            "admitted for any model (training cutoffs in MODEL_TRAINING_CUTOFFS); check the models' cutoffs"
        )
    filters = {
        "question_types": sorted(wanted_types) if wanted_types else None,
        "choice_types": sorted(wanted_choices) if wanted_choices else None,
        "question_count": len(selected),
        "question_ids": [q.id for q in selected],
    }
    return RunIdentity(
        source_db=source_db,
        questions=selected,
        templates=templates,
        stored_templates=stored_templates,
        source_db_hash=source_db_hash(source_db),
        metadata_hash=metadata_hash(read_features_json(source_db)),
        prompt_templates_hash=prompt_templates_hash(stored_templates),
        protocols=texts.protocols(settings.react),
        training_cutoffs=cutoffs,
        filters=filters,
        config_snapshot=config_snapshot(settings, texts) if snapshot_override is None else snapshot_override,
        detector_template=texts.detector,
        texts=texts,
    )
