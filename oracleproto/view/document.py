"""Collect everything the viewer shows of one run into one JSON-ready document.

Reads only: the manifest, the per-model DBs (read-only), the cassettes (when the run has them),
the published plots; the analysis is recomputed in memory. Nothing is executed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracleproto._version import __version__
from oracleproto.analysis.reader import ModelRun, RunData, read_run
from oracleproto.analysis.report import AnalysisResult
from oracleproto.errors import OracleprotoError
from oracleproto.store import RunDir
from oracleproto.store.label import read_label
from oracleproto.transport.store import CassetteStore
from oracleproto.verify.findings import VerifyReport
from oracleproto.view.overview import facts, plots_doc, run_analysis_settings, safe_result, tables_doc
from oracleproto.view.recording import Recording
from oracleproto.view.rows import ModelRows, cell_text, json_or_none, read_model_rows
from oracleproto.view.samples import detail, question_doc, summary

SCHEMA = "oracleproto-view/1"
Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


def _recording(run: RunDir, manifest: dict[str, Any]) -> Recording | None:
    """The run's effective cassette entries, or None for a run without a recording."""
    if not isinstance(manifest.get("cassettes"), dict):
        return None
    folder = run.cassette_path(run.load_manifest())
    if not folder.is_dir() or not any(folder.rglob("*.yaml")):
        return None
    store = CassetteStore(folder, writable=False)
    return Recording({e.key: e for e in store.effective_entries()})


def verify_doc(report: VerifyReport | None) -> dict[str, Any]:
    """The verdict shown in the overview: verified, not verified (with failures), or not checked."""
    if report is None:
        return {"status": "not checked", "checks": []}
    return {
        "status": "verified" if report.ok else "NOT VERIFIED",
        "checks": [{"what": c.what, "status": c.status, "detail": c.detail} for c in report.checks],
    }


@dataclass
class _Samples:
    """What the viewer shows per model and question, in the order the models were read."""

    models: list[dict[str, Any]] = field(default_factory=list)
    questions: dict[str, dict[str, Any]] = field(default_factory=dict)
    prompts: dict[str, dict[str, str | None]] = field(default_factory=dict)
    summaries: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    details: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)


def _safe_recording(run: RunDir, manifest: dict[str, Any]) -> tuple[Recording | None, str | None]:
    """The run's recording, or None and why it could not be read (None, None: there is none)."""
    try:
        return _recording(run, manifest), None
    except OracleprotoError as exc:  # a damaged recording: show the DBs, say why the rest is missing
        return None, str(exc)


def _model_doc(model: ModelRun, rows: ModelRows, result: AnalysisResult | None) -> dict[str, Any]:
    """One model as the viewer lists it: slug, shown name, DB file, cutoff, stored entry keys."""
    return {
        "slug": model.slug,
        "name": result.shown(model.slug) if result is not None else model.slug,
        "file": model.file,
        "training_cutoff": model.run_meta.get("training_cutoff"),
        "has_entry_keys": rows.entry_keys is not None,
    }


def _add_model_samples(out: _Samples, model: ModelRun, rows: ModelRows, recording: Recording | None) -> None:
    """Add one model's questions, prompts, sample summaries and sample details to ``out``."""
    per_model: dict[str, list[dict[str, Any]]] = {}
    out.prompts[model.slug] = {}
    for qi, qid in enumerate(model.table.question_ids):
        out.questions.setdefault(qid, question_doc(model, rows, qi, qid))
        out.prompts[model.slug][qid] = rows.prompts.get(qid)
        cells_of = rows.samples.get(qid, {})
        per_model[qid] = [summary(model, qi, j, cells_of.get(j, {})) for j in range(model.table.n)]
        out.details.setdefault(model.slug, {})[qid] = [
            detail(rows, qid, j, cells_of.get(j, {}), recording) for j in range(model.table.n)
        ]
    out.summaries[model.slug] = per_model


def _samples(
    run: RunDir, data: RunData, result: AnalysisResult | None, recording: Recording | None
) -> _Samples:
    """Every model's entry and samples, each model's DB read in turn."""
    out = _Samples()
    for model in data.models:
        rows = read_model_rows(run.root / "db" / model.file, model.table.n)
        out.models.append(_model_doc(model, rows, result))
        _add_model_samples(out, model, rows, recording)
    return out


def _question_order(manifest: dict[str, Any], questions: dict[str, dict[str, Any]]) -> list[str]:
    """The questions' ids in the run's filter order, then any others sorted."""
    order = (
        manifest.get("filters", {}).get("question_ids") if isinstance(manifest.get("filters"), dict) else None
    )
    qids = [q for q in order if q in questions] if isinstance(order, list) else sorted(questions)
    qids += [q for q in sorted(questions) if q not in qids]
    return qids


def build_document(
    run_root: Path,
    *,
    report: VerifyReport | None = None,
    source: str | None = None,
    run_path: str | None = None,
    progress: Progress = _quiet,
) -> dict[str, Any]:
    """The viewer's document for the run directory ``run_root``.

    ``report`` is a verify result (if one was run); ``source`` names what was opened; ``run_path``
    is the run directory as the reader can pass it to ``cassettes show`` (None for a bundle).
    """
    run = RunDir.open(run_root)
    progress("reading the databases")
    data: RunData = read_run(run.root, decode_text=cell_text)
    manifest = data.manifest
    snapshot = json_or_none(data.models[0].run_meta.get("config_snapshot"))
    snapshot = snapshot if isinstance(snapshot, dict) else {}
    earlier = run.load_manifest().earlier_implementation
    progress("analysis")
    settings = run_analysis_settings(snapshot, run.root, earlier=earlier)
    result, analysis_error = safe_result(run.root, settings)
    progress("cassettes")
    recording, recording_error = _safe_recording(run, manifest)
    progress("samples")
    samples = _samples(run, data, result, recording)
    qids = _question_order(manifest, samples.questions)
    return {
        "schema": SCHEMA,
        "generator": f"oracleproto {__version__}",
        "source": source or str(run.root.name),
        "run_path": run_path,
        "layout": "earlier implementation" if earlier else "oracleproto",
        "facts": {**facts(manifest, snapshot, result), "label": read_label(run.root).text() or None},
        "verify": verify_doc(report),
        "analysis_error": analysis_error,
        "recording": {
            "present": recording is not None,
            "error": recording_error,
        },
        "tables": tables_doc(result) if result is not None else [],
        "plots": plots_doc(run.analysis_dir, result),
        "models": samples.models,
        "questions": [samples.questions[q] for q in qids],
        "prompts": samples.prompts,
        "summaries": samples.summaries,
        "details": samples.details,
        "searches": recording.searches if recording is not None else {},
        "verdicts": recording.verdicts if recording is not None else {},
    }


#: Characters a JSON text written for a page must not carry raw: lone surrogates (UTF-8 cannot
#: encode them; they come from JSON ``\\ud800`` escapes and from bytes that were not UTF-8, which
#: ``rows`` decodes with surrogateescape) and U+2028/2029, line ends to older JavaScript parsers.
_RAW_UNSAFE = re.compile("[\u2028\u2029\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_text(value: Any) -> str:
    """Compact, key-sorted JSON of ``value`` that always encodes as UTF-8.

    JSON's own syntax is ASCII, so such a character can only sit inside a string, where its
    ``\\uXXXX`` escape denotes the same character: the page's script gets it back unchanged and
    shows it marked.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False)
    except ValueError:  # NaN or ±Infinity (a provider's or a page's number): not JSON, so shown as text
        text = json.dumps(_finite(value), ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return _RAW_UNSAFE.sub(_escaped, text)


def _finite(value: Any) -> Any:
    """``value`` with each non-finite float replaced by its name (``"NaN"``, ``"Infinity"``)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def document_json(document: dict[str, Any]) -> str:
    """The document as compact JSON, safe to embed in a ``<script>`` block (no ``<``, ``>``, ``&``)."""
    text = json_text(document)
    # In a script element only "</script" (and "<!--") matter, but escaping every <, > and & keeps
    # any HTML parser state out of reach.
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
