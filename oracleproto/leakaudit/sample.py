"""``audit sample``: draw the audit set of a run, uniformly and reproducibly (paper §4.3, eq. audit-N).

A test item is one stored sample (model, question, sample index); its candidates are every raw
Tavily result of its searches, before the detector (``candidates``). From each item ``per_item``
candidates are drawn without replacement by a partial Fisher–Yates shuffle whose randomness is
sha256 of (seed, model, question, sample, draw) — not Python's ``random``, whose algorithms may
change between versions — so the same run and seed give the same items on any machine.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, NamedTuple

from oracleproto.errors import StoreError
from oracleproto.leakaudit.candidates import Candidate, RunCandidates
from oracleproto.leakaudit.items import AuditError, AuditItem
from oracleproto.store import RunDir
from oracleproto.store.model_store import ModelStore

#: Bumped when the draw or the item layout changes (recorded in ``audit.json``).
SAMPLER_VERSION = 1
_UNSAFE = re.compile(r"[^A-Za-z0-9._]")


@dataclass(frozen=True)
class SampleOptions:
    """What ``audit sample`` was asked for."""

    #: Model slugs (virtual, or real when it names one cell); None: every model of the run.
    models: tuple[str, ...] | None = None
    #: The first N questions in the run's order; None: all.
    questions: int | None = None
    per_item: int = 1
    seed: int = 0


def draw(seed: int, key: tuple[str, str, int], n: int, k: int) -> list[int]:
    """``min(k, n)`` distinct indices of ``range(n)``, uniformly, from ``seed`` and the item ``key``."""
    pool = list(range(n))
    picked: list[int] = []
    for j in range(min(k, n)):
        digest = hashlib.sha256(f"{seed}\x1f{key[0]}\x1f{key[1]}\x1f{key[2]}\x1f{j}".encode()).digest()
        # 256 random bits modulo at most a few hundred: the bias is far below 2**-240.
        swap = j + int.from_bytes(digest, "big") % (n - j)
        pool[j], pool[swap] = pool[swap], pool[j]
        picked.append(pool[j])
    return picked


def item_id(model_file: str, question_id: str, sample: int, call: int, rank: int) -> str:
    """The stable id of one audit item (``m<model file>-q<question>-s<sample>-c<call>-r<rank>``)."""
    stem = model_file.removesuffix(".db")
    return f"m{_UNSAFE.sub('_', stem)}-q{_UNSAFE.sub('_', question_id)}-s{sample}-c{call:02d}-r{rank:02d}"


def select_models(run: RunCandidates, wanted: tuple[str, ...] | None) -> list[str]:
    """The run's virtual slugs ``wanted`` names (each a virtual slug or a real slug of one cell)."""
    slugs = list(run.manifest.models)
    if wanted is None:
        return slugs
    chosen: list[str] = []
    for name in wanted:
        matching = [s for s in slugs if name in (s, s.split("::", 1)[0])]
        if len(matching) != 1:
            raise AuditError(
                f"--models: {name!r} names {len(matching)} of this run's models ({', '.join(slugs)}); "
                "give one of them (a grid cell by its full slug)"
            )
        if matching[0] not in chosen:
            chosen.append(matching[0])
    return [s for s in slugs if s in chosen]


def _item(model: str, model_file: str, slot: tuple[str, str, int], found: Candidate) -> AuditItem:
    _, question_id, sample = slot
    r = found.result
    return AuditItem(
        item_id=item_id(model_file, question_id, sample, found.call, found.rank),
        model=model,
        question_id=question_id,
        sample=sample,
        cutoff_date=found.cutoff_date,
        query=found.query,
        title=r.title,
        url=r.url,
        published_date=r.published_date,
        content=r.content,
        raw_content=r.raw_content,
        detector_verdict=found.verdict,
    )


class SampledAudit(NamedTuple):
    """What :func:`sample_audit` drew."""

    items: list[AuditItem]
    #: The ``audit.json`` record of how they were drawn.
    meta: dict[str, Any]
    #: One message per test item left out because its stored sample cannot be read (a damaged DB).
    problems: tuple[str, ...] = ()


def sample_audit(run_dir: RunDir, options: SampleOptions) -> SampledAudit:
    """The audit items of ``run_dir``, the ``audit.json`` record of how they were drawn, and what was
    left out: a test item whose stored sample cannot be read is skipped and named, not fatal."""
    if options.per_item < 1:
        raise AuditError(f"--per-item must be at least 1, got {options.per_item}")
    if options.questions is not None and options.questions < 1:
        raise AuditError(f"--questions must be at least 1, got {options.questions}")
    run = RunCandidates.open(run_dir)
    models = select_models(run, options.models)
    order = run.question_order()
    questions = order if options.questions is None else order[: options.questions]
    items: list[AuditItem] = []
    unreadable: list[dict[str, Any]] = []
    problems: list[str] = []
    counts: Counter[str] = Counter()
    per_model: dict[str, dict[str, int]] = {}
    for model in models:
        max_chars = run.max_chars(model)
        model_file = run.manifest.model_files[model]
        mine: Counter[str] = Counter()
        with ModelStore.open_existing(run.db_paths[model]) as db:
            for question_id in questions:
                for sample in run.samples(model, question_id):
                    slot = (model, question_id, sample)
                    mine["test_items"] += 1
                    try:
                        found = run.candidates(db, slot, max_chars)
                    except StoreError as exc:
                        # One damaged cell (not UTF-8, not JSON) costs its test item, not the audit.
                        mine["test_items_unreadable"] += 1
                        unreadable.append({"model": model, "question_id": question_id, "sample": sample})
                        problems.append(str(exc))
                        continue
                    mine["candidates"] += len(found)
                    if not found:
                        mine["test_items_without_candidates"] += 1
                        continue
                    for index in draw(options.seed, slot, len(found), options.per_item):
                        items.append(_item(model, model_file, slot, found[index]))
                        mine["audit_items"] += 1
        per_model[model] = {k: mine[k] for k in _COUNT_KEYS}
        counts.update(mine)
    verdicts = Counter(i.detector_verdict for i in items)
    schemes = [run.scheme(m) for m in models]
    if any(s != schemes[0] for s in schemes[1:]):
        raise AuditError(
            f"{run_dir.root}: the chosen models ran under different leakage schemes ({schemes}); "
            "sample them separately with --models"
        )
    meta: dict[str, Any] = {
        "sampler_version": SAMPLER_VERSION,
        "run_id": run.manifest.run_id,
        "cassette_root_digest": run.manifest.cassettes.root_digest if run.manifest.cassettes else None,
        "sample_entries_root": run.manifest.sample_entries_root,
        "seed": options.seed,
        "scheme": schemes[0] if schemes else None,
        "parameters": {
            "models": models,
            "questions": options.questions,
            "question_ids": questions,
            "per_item": options.per_item,
        },
        "counts": {
            **{k: counts[k] for k in _COUNT_KEYS},
            "by_model": per_model,
            "by_detector_verdict": dict(sorted(verdicts.items())),
        },
        "unreadable_test_items": unreadable,
    }
    return SampledAudit(items, meta, tuple(problems))


_COUNT_KEYS = (
    "test_items",
    "test_items_without_candidates",
    "test_items_unreadable",
    "candidates",
    "audit_items",
)
