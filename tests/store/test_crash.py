"""kill -9 while samples are being written: no corruption, nothing acknowledged is lost, resume completes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from oracleproto.store import ModelStore, logical_dump

# The writer a runner would be: open (or resume), write every pending slot, acknowledging each commit.
WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from datetime import UTC, date, datetime, timedelta
    from oracleproto.agent.result import SampleResult
    from oracleproto.dataset.models import TEMPLATE_KEYS, PromptTemplates, Question
    from oracleproto.store import ModelStore, RunMeta

    START = datetime(2026, 3, 1, 12, tzinfo=UTC)
    questions = [Question(f"q{i:03d}", "single", "yes_no", f"Fictional event {i}?", ("Yes", "No"),
                          frozenset({"A"}), date(2026, 4, 1)) for i in range(40)]
    meta = RunMeta(run_id="20260301-120000-0a1f", model="sim/m::r5::c4", sampling_n=3, config_snapshot={},
                   filters_snapshot={}, source_db_hash="a", metadata_hash="b", prompt_templates_hash="c",
                   training_cutoff=None, started_at=START)
    store = ModelStore.open(Path(sys.argv[1]), meta=meta, questions=questions,
                            templates=PromptTemplates.from_mapping({k: k for k in TEMPLATE_KEYS}),
                            imported_at=START)
    for qid, j in store.pending_slots([q.id for q in questions], 3):
        k = int(qid[1:])
        result = SampleResult(
            final_answer_letters=("A",) if k % 3 else ("B",), final_answer_raw="\\\\boxed{A}" * 200,
            correct=bool(k % 3), parse_ok=True, tool_calls_count=j, react_steps=2, prompt_tokens=10 * k,
            completion_tokens=5, reasoning_tokens=0, latency_ms=k + j,
            messages_trace=[{"role": "user", "content": "x" * 2000}], search_calls=[], error=None,
            created_at=START + timedelta(seconds=k * 3 + j), finish_reason="stop", nudges_used=0,
            step_metrics=[], response_id=f"r{k}-{j}", system_fingerprint=None, service_tier=None,
            belief_final=None, belief_trace=None, belief_parse_ok=None, final_answer_retry_used=False)
        store.write_sample(qid, j, f"prompt {qid}", result)
        print(f"ack {qid} {j}", flush=True)
        sys.stdin.readline()  # wait for the parent's go, so the kill point is chosen by the test
    store.finish(START + timedelta(hours=1))
    store.close()
    print("done", flush=True)
    """
)


def run_writer(db: Path, kill_after: int | None) -> set[tuple[str, int]]:
    """Run the writer; SIGKILL it after ``kill_after`` acknowledgements. Returns acknowledged slots.

    The kill is sent right after letting the writer start its next sample, so it lands while that
    write is in flight (encoding, inside the transaction or committing).
    """
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdin is not None
    acked: set[tuple[str, int]] = set()
    for line in proc.stdout:
        if line.startswith("ack "):
            _, qid, j = line.split()
            acked.add((qid, int(j)))
            proc.stdin.write("go\n")
            proc.stdin.flush()
            if kill_after is not None and len(acked) >= kill_after:
                os.kill(proc.pid, signal.SIGKILL)
                break
    proc.stdout.close()
    proc.stdin.close()
    code = proc.wait()
    if kill_after is None:
        assert code == 0
    else:
        assert code == -signal.SIGKILL
    return acked


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Logical dump of an uninterrupted run."""
    db = tmp_path_factory.mktemp("ref") / "m.db"
    assert len(run_writer(db, None)) == 120
    return logical_dump(db)


@pytest.mark.parametrize("kill_after", [1, 17, 64, 119])
def test_kill_minus_nine_then_resume(tmp_path: Path, reference: str, kill_after: int) -> None:
    db = tmp_path / "m.db"
    acked = run_writer(db, kill_after)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    with ModelStore.open_existing(db) as store:
        done = store.done_slots()
        # Acknowledged means committed: every one survived; the kill lost at most in-flight writes.
        assert acked <= done
        for qid, j in done:
            sample = store.read_sample(qid, j)
            assert sample is not None and sample.response_id == f"r{int(qid[1:])}-{j}"
    resumed = run_writer(db, None)
    assert not resumed & done, "nothing done is redone"
    assert len(resumed | done) == 120, "every slot present exactly once"
    assert logical_dump(db) == reference
