"""The refresh audit: one JSON document (entries → markers → answers → metrics → cost) and its renderings."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from oracleproto.analysis.conventions import Convention, parse_convention
from oracleproto.analysis.reader import read_run
from oracleproto.analysis.writer import normalise, swap_directory
from oracleproto.refresh.classify import CLASSES, classify
from oracleproto.refresh.outcomes import answer_flips, metric_deltas
from oracleproto.refresh.rollups import cost, detector_flips, marker_drift, search_drift
from oracleproto.refresh.views import CassetteView
from oracleproto.store.rundir import AUDIT_SUBDIR

AUDIT_SCHEMA = "oracleproto-refresh-audit/1"
JSON_NAME = "refresh_audit.json"
MD_NAME = "refresh_audit.md"
DRIFTS = ("provider", "harness", "follow-on")


def build_audit(
    old: CassetteView,
    new: CassetteView,
    *,
    convention: Convention | str = Convention.PAPER,
    bootstrap_samples: int = 1000,
    seed: int = 20260430,
    selection: list[str] | None = None,
) -> dict[str, Any]:
    """Compare two cassette generations (and, when both belong to runs, the runs' outcomes)."""
    changes = classify(old.entries, new.entries)
    counts = {ch: dict.fromkeys(CLASSES, 0) for ch in sorted({c.channel for c in changes})}
    drift: Counter[str] = Counter()
    masked: Counter[str] = Counter()
    for c in changes:
        counts[c.channel][c.cls] += 1
        if c.drift != "none":
            drift[c.drift] += 1
        masked.update(c.masked)
    audit: dict[str, Any] = {
        "schema": AUDIT_SCHEMA,
        "old": old.label,
        "new": new.label,
        "selection": selection if selection is not None else [],
        "entries": {
            "total": len(changes),
            "by_channel": counts,
            "drift": {name: drift.get(name, 0) for name in DRIFTS},
            "marker_only": sum(1 for c in changes if c.marker_only),
            "masked_fields": dict(sorted(masked.items())),
            "changed": [c.to_json() for c in changes if c.cls != "unchanged"],
        },
        "provider_markers": marker_drift(old.entries, new.entries),
        "search_drift": search_drift(changes),
        "detector_flips": detector_flips(changes),
        "cost": cost(old.entries, new.entries),
        "answers": None,
    }
    # Two generations of one run share its databases: answers can only be compared across runs.
    if old.run_dir is not None and new.run_dir is not None and old.run_dir.resolve() != new.run_dir.resolve():
        conv = parse_convention(convention)
        before, after = read_run(old.run_dir), read_run(new.run_dir)
        audit["answers"] = {
            "convention": conv.value,
            "bootstrap": {"samples": bootstrap_samples, "seed": seed, "level": 0.95},
            "flips": answer_flips(before, after),
            "metric_deltas": metric_deltas(before, after, conv, samples=bootstrap_samples, seed=seed),
        }
    return audit


def zero_drift(audit: dict[str, Any]) -> bool:
    """True when every entry is unchanged (masked fields may differ) and no answer flipped."""
    entries = audit["entries"]
    answers = audit.get("answers")
    return not entries["changed"] and not (answers and answers["flips"])


def audit_json(audit: dict[str, Any]) -> str:
    """Deterministic JSON text (sorted keys, fixed float rounding)."""
    return json.dumps(normalise(audit), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def _num(value: Any) -> str:
    return "—" if value is None else f"{value:+.4f}" if isinstance(value, float) else str(value)


def _plain(value: Any) -> str:
    return "—" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)


def _answer(outcome: dict[str, Any]) -> str:
    if outcome["letters"] is not None:
        mark = "✓" if outcome["correct"] else "✗"
        return f"{','.join(outcome['letters'])} {mark}"
    return str(outcome["state"])


def summary_lines(audit: dict[str, Any]) -> list[str]:
    """The terminal summary (also the head of the Markdown report)."""
    e = audit["entries"]
    lines = [f"refresh audit: {audit['old']} → {audit['new']}"]
    if audit["selection"]:
        lines.append("selection: " + " OR ".join(audit["selection"]))
    for ch, counts in e["by_channel"].items():
        # Fixed orders throughout, so the rendering is a function of the JSON's content.
        lines.append(f"  {ch:<9}" + "  ".join(f"{k} {counts[k]}" for k in CLASSES))
    d = e["drift"]
    verdict = "zero drift" if zero_drift(audit) else "DRIFT"
    lines.append(
        f"{verdict}: provider {d['provider']} (marker-only {e['marker_only']}), harness {d['harness']}, "
        f"follow-on {d['follow-on']} entries"
    )
    if e["masked_fields"]:
        lines.append("masked (not drift): " + _tally(e["masked_fields"]))
    answers = audit.get("answers")
    if answers is not None:
        lines.append(f"answer flips: {len(answers['flips'])}")
        for row in answers["metric_deltas"]:
            if row["delta"]:
                ci = row["ci"]
                shown = f" [{ci[0]:+.4f}, {ci[1]:+.4f}]" if ci else ""
                lines.append(f"  {row['model']} {row['metric']}: {_num(row['delta'])}{shown}")
    lines.append(
        f"provider markers changed: {len(audit['provider_markers'])}; search answers changed: "
        f"{len(audit['search_drift'])}; detector verdict flips: {len(audit['detector_flips'])}"
    )
    c = audit["cost"]
    for side, label in (("original", "original recording: {} calls"), ("refresh", "refresh: {} live calls")):
        tot = c[side]
        calls = sum(v["calls"] for v in tot.values())
        toks = sum(v["prompt_tokens"] + v["completion_tokens"] for v in tot.values())
        costs = [v["cost"] for v in tot.values() if v["cost"] is not None]
        money = f", cost {sum(costs):.6f}" if costs else ""
        lines.append(f"{label.format(calls)}, {toks} tokens{money}")
    lines.append(f"carried over from the old recording: {c['carried_over']} entries")
    return lines


def _tally(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} ×{v}" for k, v in sorted(counts.items())) or "none"


def _none_if_empty(rows: list[Any]) -> list[str]:
    return ["", ""] if rows else ["none", ""]


def _slot(slot: list[Any]) -> str:
    if slot[0] == "llm" and len(slot) == 6:
        occurrence = f" #{slot[5]}" if slot[5] else ""
        return f"{slot[1]} {slot[2]} s{slot[3]} t{slot[4]}{occurrence}"
    return " ".join(str(s) for s in slot[1:])


def render_markdown(audit: dict[str, Any]) -> str:
    """The Markdown report."""
    out = ["# Refresh audit", "", "```", *summary_lines(audit), "```", ""]
    answers = audit.get("answers")
    if answers is not None:
        out += ["## Metric deltas (after − before, paired bootstrap 95% CI)", ""]
        out += ["| Model | Metric | Before | After | Δ | CI |", "|---|---|---:|---:|---:|---|"]
        for r in answers["metric_deltas"]:
            ci = f"[{r['ci'][0]:+.4f}, {r['ci'][1]:+.4f}]" if r["ci"] else "—"
            out.append(
                f"| {r['model']} | {r['metric']} | {_plain(r['before'])} | {_plain(r['after'])} "
                f"| {_num(r['delta'])} | {ci} |"
            )
        out += ["", f"## Answer flips ({len(answers['flips'])})", ""]
        if answers["flips"]:
            out += ["| Model | Question | Sample | Before | After |", "|---|---|---:|---|---|"]
            for f in answers["flips"]:
                out.append(
                    f"| {f['model']} | {f['question']} | {f['sample']} | {_answer(f['before'])} "
                    f"| {_answer(f['after'])} |"
                )
        out.append("")
    out += [f"## Provider markers ({len(audit['provider_markers'])})", ""]
    for m in audit["provider_markers"]:
        out.append(f"- {m['model']} `{m['field']}`: {_tally(m['before'])} → {_tally(m['after'])}")
    out += _none_if_empty(audit["provider_markers"])
    out += [f"## Search drift ({len(audit['search_drift'])})", ""]
    for s in audit["search_drift"]:
        out.append(
            f"- `{s['query']}`: +{len(s['urls_added'])} / −{len(s['urls_removed'])} URLs, "
            f"{len(s['published_date_changes'])} published_date changes"
        )
    out += _none_if_empty(audit["search_drift"])
    out += [f"## Detector verdict flips ({len(audit['detector_flips'])})", ""]
    for d in audit["detector_flips"]:
        out.append(f"- {d['item']}: {d['before']} → {d['after']}")
    out += _none_if_empty(audit["detector_flips"])
    changed = audit["entries"]["changed"]
    out += [f"## Changed entries ({len(changed)})", ""]
    if changed:
        out += ["| Channel | Class | Drift | Slot | Old key | New key |", "|---|---|---|---|---|---|"]
        for c in changed:
            slot = _slot(c["slot"])
            out.append(
                f"| {c['channel']} | {c['class']} | {c['drift']} | {slot} | {c['old_key'] or '—'} "
                f"| {c['new_key'] or '—'} |"
            )
    return "\n".join(out).rstrip() + "\n"


def write_audit(audit: dict[str, Any], analysis_dir: Path) -> list[Path]:
    """Write ``audit/refresh_audit.json`` and ``.md`` under ``analysis_dir``, replacing both at once."""
    analysis_dir.mkdir(parents=True, exist_ok=True)
    out = analysis_dir / AUDIT_SUBDIR
    tmp = Path(tempfile.mkdtemp(prefix=f".{AUDIT_SUBDIR}.tmp-", dir=analysis_dir))
    try:
        (tmp / JSON_NAME).write_text(audit_json(audit), encoding="utf-8")
        (tmp / MD_NAME).write_text(render_markdown(normalise(audit)), encoding="utf-8")
        swap_directory(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [out / JSON_NAME, out / MD_NAME]
