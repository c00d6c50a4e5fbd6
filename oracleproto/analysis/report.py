"""Analysis orchestration: a run directory in, every metric per virtual model slug out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracleproto.analysis import family_a as fa
from oracleproto.analysis.answer_parser import answer_parsers, run_answer_parser
from oracleproto.analysis.averages import trial_averages
from oracleproto.analysis.call_failures import call_failures, failure_notes
from oracleproto.analysis.conventions import Convention, parse_convention
from oracleproto.analysis.cost import (
    NO_COST_NOTE,
    PriceTable,
    cost_entry,
    cost_notes,
    cost_points,
    eval_questions,
)
from oracleproto.analysis.exact import reductions_of
from oracleproto.analysis.family_b import beliefs, family_b, question_mean_beliefs, trial_scores
from oracleproto.analysis.family_c import family_c, tool_use_dependence
from oracleproto.analysis.harness_name import run_harness_profile
from oracleproto.analysis.names import recorded_display_names, shown_names
from oracleproto.analysis.reader import ModelRun, RunData, read_run
from oracleproto.analysis.revisions import earlier_consistency_rules, summary_revision
from oracleproto.analysis.run_bootstrap import bootstrap_run
from oracleproto.analysis.setup import models_under_test, question_distribution
from oracleproto.analysis.trials import BUCKETS, FloatArray

SUMMARY_SCHEMA = "oracleproto-analysis/1"
HASH_KEYS = (
    "source_db_hash",
    "metadata_hash",
    "prompt_templates_hash",
    "reflection_protocol_hash",
    "belief_protocol_hash",
)


@dataclass(frozen=True)
class AnalysisResult:
    """Every metric of a run under one convention; ``models`` maps virtual slug → summary entry."""

    run_id: str
    convention: Convention
    models: dict[str, dict[str, Any]]
    model_order: tuple[str, ...]
    paired_differences: list[dict[str, Any]]
    hash_chain: dict[str, Any]
    bootstrap: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    #: ``ANSWER_PARSER`` the run's letters were parsed with (``mixed`` when its models differ).
    answer_parser: str = "algorithm2"
    #: ``{"name", "fingerprint"}`` of the run's harness profile; None for a run from before profiles.
    harness_profile: dict[str, str] | None = None
    #: Virtual slug → how the tables name it (its slug unless it has a display name).
    display_names: dict[str, str] = field(default_factory=dict)
    #: Table 1: question_type (and ``total``) → ``single`` / ``multi`` / ``total`` counts.
    question_distribution: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Table 2: one row per real model (name, training cutoff, excluded question counts).
    models_under_test: list[dict[str, Any]] = field(default_factory=list)
    #: Virtual slug → retries, waits, failed verdicts, removed results (``call_failures.py``).
    call_failures: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: One line per model whose calls were retried or failed, printed under the main table.
    failure_notes: list[str] = field(default_factory=list)
    #: The analysis revision whose definitions computed this result (``summary.json`` records it);
    #: None: this code's revision for the convention.
    revision: int | None = None
    #: Pairwise p-values (raw, Holm, Benjamini–Hochberg) and rank stability of composite accuracy
    #: (``comparisons.headline_comparisons``); None for an analysis revision before they existed.
    comparisons: dict[str, Any] | None = None

    def shown(self, slug: str) -> str:
        """How the tables name the model ``slug`` (a virtual slug of ``model_order``)."""
        return self.display_names.get(slug, slug)

    def summary(self) -> dict[str, Any]:
        """The ``summary.json`` document (schema in docs/design/metrics.md)."""
        return {
            "schema": SUMMARY_SCHEMA,
            "run_id": self.run_id,
            "convention": self.convention.value,
            "answer_parser": self.answer_parser,
            "display_names": self.display_names,
            "question_distribution": self.question_distribution,
            "models_under_test": self.models_under_test,
            "hash_chain": self.hash_chain,
            "bootstrap": self.bootstrap,
            "model_order": list(self.model_order),
            "models": self.models,
            "paired_differences": self.paired_differences,
            "notes": self.notes,
            "call_failures": self.call_failures,
            # Written only when the run names a profile: an older run's summary keeps its bytes.
            **({"harness_profile": self.harness_profile} if self.harness_profile is not None else {}),
            # Written from analysis revision 5 on: a re-scored older run keeps its summary's keys.
            **({"comparisons": self.comparisons} if self.comparisons is not None else {}),
        }


def analyze_run(
    run_dir: Path | str,
    convention: Convention | str = Convention.PAPER,
    *,
    prices: PriceTable | None = None,
    bootstrap_samples: int = 1000,
    seed: int = 20260430,
    display_names: Mapping[str, str] | None = None,
    revision: int | None = None,
) -> AnalysisResult:
    """Read ``run_dir`` and compute every metric under ``convention`` (pure: writes nothing).

    ``display_names`` (real slug → name) replaces the names recorded with the run; ``revision``
    (default: this code's revision for the convention) selects an older analysis revision's
    definitions, so ``verify`` can re-score a run published by it.
    """
    conv = parse_convention(convention)
    run = read_run(Path(run_dir))
    return analyze(
        run,
        conv,
        prices=prices,
        bootstrap_samples=bootstrap_samples,
        seed=seed,
        display_names=display_names,
        revision=revision,
    )


def analyze(
    run: RunData,
    convention: Convention,
    *,
    prices: PriceTable | None = None,
    bootstrap_samples: int = 1000,
    seed: int = 20260430,
    display_names: Mapping[str, str] | None = None,
    revision: int | None = None,
) -> AnalysisResult:
    """Every metric of an already-read run (``display_names`` and ``revision`` as in ``analyze_run``)."""
    revision = summary_revision(convention) if revision is None else revision
    with reductions_of(revision):
        return _analyze(
            run,
            convention,
            prices=prices,
            bootstrap_samples=bootstrap_samples,
            seed=seed,
            display_names=display_names,
            revision=revision,
        )


def _analyze(
    run: RunData,
    convention: Convention,
    *,
    prices: PriceTable | None,
    bootstrap_samples: int,
    seed: int,
    display_names: Mapping[str, str] | None,
    revision: int,
) -> AnalysisResult:
    earlier_rules = earlier_consistency_rules(convention, revision)
    notes: list[str] = []
    names = recorded_display_names(run) if display_names is None else dict(display_names)
    setup_models = models_under_test(run, names)
    notes.extend(
        f"{row['model']}: {row['excluded_after_resolution']} question(s) excluded after resolution "
        "(χ ≥ τ, δ = 0), not by the training cutoff"
        for row in setup_models
        if row["excluded_after_resolution"]
    )
    protocol = {m.slug: bool(m.run_meta.get("belief_protocol_hash")) for m in run.models}
    belief_sets = {m.slug: beliefs(m.table, convention, protocol[m.slug]) for m in run.models}
    crowd_inputs = {m.slug: question_mean_beliefs(m.table, belief_sets[m.slug]) for m in run.models}
    parsers = answer_parsers(run)
    if len(set(parsers.values())) > 1:
        shown = ", ".join(f"{slug}: {mode}" for slug, mode in parsers.items())
        notes.append(f"models were parsed with different ANSWER_PARSER modes ({shown})")
    entries: dict[str, dict[str, Any]] = {}
    for m in run.models:
        others = [crowd_inputs[s] for s in crowd_inputs if s != m.slug]
        entries[m.slug] = _model_entry(
            m, convention, prices, belief_sets[m.slug], others, earlier_rules=earlier_rules
        )
        entries[m.slug]["answer_parser"] = parsers[m.slug]
        notes.extend(cost_notes(m.slug, m.real_slug, entries[m.slug], prices))
    paired, comparisons = bootstrap_run(
        run, convention, entries, samples=bootstrap_samples, seed=seed, revision=revision
    )
    failures = call_failures(run)
    model_names = shown_names(run.models, names)
    if not cost_points(entries, tuple(entries)):
        notes.append(NO_COST_NOTE)  # plots.py then draws no (empty) cost plot
    return AnalysisResult(
        run_id=run.run_id,
        convention=convention,
        models=entries,
        model_order=tuple(m.slug for m in run.models),
        paired_differences=paired,
        hash_chain=_hash_chain(run),
        bootstrap={"samples": bootstrap_samples, "seed": seed, "level": 0.95, "strata": list(BUCKETS)},
        notes=sorted(set(notes)),
        answer_parser=run_answer_parser(parsers),
        harness_profile=run_harness_profile(run),
        display_names=model_names,
        call_failures=failures,
        failure_notes=failure_notes(failures, model_names),
        question_distribution=question_distribution(run),
        models_under_test=setup_models,
        revision=revision,
        comparisons=comparisons,
    )


def _model_entry(
    m: ModelRun,
    conv: Convention,
    prices: PriceTable | None,
    b: Any,
    others: list[dict[str, FloatArray]],
    *,
    earlier_rules: bool,
) -> dict[str, Any]:
    t = m.table
    buckets = fa.bucket_exam(t)
    composite = fa.composite_accuracy(buckets, conv)
    p1 = fa.pass_at_1(t, conv)
    mv = fa.majority_vote_accuracy(t)
    n_eval = eval_questions(t)
    entry: dict[str, Any] = {
        "real_slug": m.real_slug,
        "sampling_n": t.n,
        "questions": t.n_questions,
        "eval_questions": n_eval,
        "composite_accuracy": composite,
        "exam_avg": {name: buckets[name] for name in BUCKETS},
        "exam_avg_mc_pooled": buckets["mc"],
        "pass_at_1_avg": p1,
        "pass_any_at_n": fa.pass_any(t, conv),
        "pass_all_at_n": fa.pass_all(t, conv),
        "cohen_kappa": fa.cohen_kappa(t, conv),
        "fleiss_kappa": fa.fleiss_kappa(t, conv),
        "fss": fa.fss(t),
        "hamming_score": fa.hamming_score(t),
        "majority_vote_accuracy": mv,
        "majority_vote_gain": _majority_vote_gain(mv, p1, t.n, earlier_rules),
        "mean_entropy": fa.mean_entropy(t, conv),
        "vci": fa.vci(t, conv),
        "entropy_accuracy_buckets": fa.entropy_accuracy_buckets(t, conv, equal_count=earlier_rules),
        "prompt_tokens": int(t.prompt_tokens.sum()),
        "completion_tokens": int(t.completion_tokens.sum()),
        "reasoning_tokens": int(t.reasoning_tokens.sum()),
        "search_calls": int(t.search_calls.sum()),
        "detector_calls": int(t.detector_calls.sum()),
        **cost_entry(m.billing, m.real_slug, prices, n_eval=n_eval, n=t.n, composite=composite),
    }
    if conv is Convention.REFERENCE_V4:
        entry["pass_at_least_majority"] = fa.pass_at_least_majority(t)
    entry.update(fa.validity(t, conv))
    entry.update(trial_averages(t))
    entry["family_b"] = family_b(t, b, others, conv) if b.has.any() else None
    fam_c = family_c(t)
    entry["family_c"] = fam_c if fam_c.get("defined") else None
    nll = trial_scores(t, b)["nll"] if b.has.any() else None
    entry["tool_use_dependence"] = tool_use_dependence(t, nll, b.has if nll is not None else None)
    return entry


def _majority_vote_gain(mv: float | None, p1: float | None, n: int, earlier_rules: bool) -> float | None:
    """MV accuracy − pass@1; under the earlier rules undefined at n = 1 (a vote needs two samples)."""
    if mv is None or p1 is None or (earlier_rules and n < 2):
        return None
    return mv - p1


def _hash_chain(run: RunData) -> dict[str, Any]:
    manifest = run.manifest
    chain: dict[str, Any] = {
        "manifest": {
            "hashes": manifest.get("hashes"),
            "reflection_protocol_hash": manifest.get("reflection_protocol_hash"),
            "belief_protocol_hash": manifest.get("belief_protocol_hash"),
            "schema_version": manifest.get("schema_version"),
            "analysis_schema": manifest.get("analysis_schema"),
        },
        "models": {m.slug: {key: m.run_meta.get(key) for key in HASH_KEYS} for m in run.models},
    }
    return chain
