"""Analysis speed: 6 × 80 × 3 (target < 2 s) and 30 × 300 × 3 (target < 30 s) incl. the bootstrap.

The baseline, measured in the same run, is a pure-Python per-replicate bootstrap of composite
accuracy and pass@1 (the earlier implementation's approach), timed on a slice of replicates and
scaled to the full count.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "analysis"))

from builder import ERR, FAIL, Q, RunSpec, T, ok, write_run  # noqa: E402

from oracleproto.analysis.conventions import Convention  # noqa: E402
from oracleproto.analysis.reader import read_run  # noqa: E402
from oracleproto.analysis.report import analyze  # noqa: E402

SAMPLES = 1000
LETTERS = "ABCDEFGH"


def make_questions(count: int, rng: random.Random) -> tuple[Q, ...]:
    """Fictional questions with the paper's bucket mix."""
    out = []
    for i in range(count):
        kind = rng.random()
        if kind < 0.3:
            out.append(Q(f"q{i:04d}", "yes_no", "single", ("Yes", "No"), rng.choice("AB")))
        elif kind < 0.4:
            out.append(Q(f"q{i:04d}", "binary_named", "single", ("P", "Q"), rng.choice("AB")))
        else:
            k = rng.randint(3, 8)
            multi = rng.random() < 0.5
            gold = sorted(rng.sample(LETTERS[:k], rng.randint(2, k - 1) if multi else 1))
            out.append(
                Q(
                    f"q{i:04d}",
                    "multiple_choice",
                    "multi" if multi else "single",
                    tuple(LETTERS[:k]),
                    ", ".join(gold),
                )
            )
    return tuple(out)


def make_trial(q: Q, rng: random.Random) -> T:
    """A random trial: mostly parsed, some parse failures and call errors."""
    roll = rng.random()
    if roll < 0.05:
        return FAIL
    if roll < 0.08:
        return ERR
    k = len(q.options)
    if roll < 0.6:
        return ok(",".join(x.strip() for x in q.answer.split(",")))
    size = rng.randint(1, max(1, k - 1)) if q.choice_type == "multi" else 1
    return ok(",".join(sorted(rng.sample(LETTERS[:k], size))))


def make_run(root: Path, models: int, questions: int, n: int, seed: int) -> Path:
    """Write a synthetic run directory."""
    rng = random.Random(seed)
    qs = make_questions(questions, rng)
    spec = RunSpec(
        n=n,
        questions=qs,
        models={
            f"bench/m{m:02d}::r5::c4": {q.id: [make_trial(q, rng) for _ in range(n)] for q in qs}
            for m in range(models)
        },
    )
    return write_run(root, spec)


def python_bootstrap(run_dir: Path, replicates: int, seed: int) -> float:
    """Pure-Python per-replicate bootstrap (baseline); returns seconds for ``replicates``."""
    run = read_run(run_dir)
    rng = random.Random(seed)
    start = time.perf_counter()
    for m in run.models:
        t = m.table
        rows = []
        for q in range(t.n_questions):
            cnt = [j for j in range(t.n) if t.counted[q, j]]
            exam = sum(float(t.exam[q, j]) for j in cnt) / len(cnt) if cnt else None
            c = sum(bool(t.correct[q, j]) for j in cnt) / len(cnt) if cnt else None
            rows.append((int(t.bucket[q]), exam, c))
        for _ in range(replicates):
            draw = [rows[rng.randrange(len(rows))] for _ in rows]
            sums: dict[int, list[float]] = {}
            for b, exam, _c in draw:
                if exam is not None:
                    sums.setdefault(b, []).append(exam)
            weights = {0: 0.15, 1: 0.15, 2: 0.28, 3: 0.42}
            total = sum(weights[b] for b in sums)
            _ = sum(weights[b] * sum(v) / len(v) for b, v in sums.items()) / total if total else None
            vals = [c for _, _, c in draw if c is not None]
            _ = sum(vals) / len(vals) if vals else None
    return time.perf_counter() - start


def bench(models: int, questions: int, target: float) -> None:
    """Time one size and print the ratio against the pure-Python baseline."""
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = make_run(Path(tmp), models, questions, 3, seed=models * 1000 + questions)
        start = time.perf_counter()
        run = read_run(run_dir)
        read_s = time.perf_counter() - start
        for conv in Convention:
            start = time.perf_counter()
            analyze(run, conv, bootstrap_samples=SAMPLES, seed=1)
            metrics_s = time.perf_counter() - start
            total = read_s + metrics_s
            verdict = "ok" if total < target else "MISSED"
            print(
                f"{models} x {questions} x 3 [{conv.value}]: read {read_s:.2f} s + metrics/bootstrap "
                f"{metrics_s:.2f} s = {total:.2f} s (target < {target:.0f} s: {verdict})"
            )
        slice_n = 20
        base = python_bootstrap(run_dir, slice_n, seed=1) * SAMPLES / slice_n
        print(
            f"  pure-Python bootstrap baseline (scaled from {slice_n} replicates): {base:.2f} s "
            f"for the bootstrap alone; ours is {base / total:.1f}x faster end to end"
        )


def main() -> None:
    """Run both sizes."""
    bench(6, 80, 2.0)
    bench(30, 300, 30.0)
