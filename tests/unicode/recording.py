"""One recorded run carrying every hostile input in every untrusted field (issue 28 §1).

The dataset is four demo questions whose text and option labels carry the inputs; the simulator
(``sim/hostile.py``) writes them into every page, model reply and detector verdict, and one page
body of 5 MB. The run is recorded through ``oracleproto run --record`` like any live run.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from oracleproto.dataset.demo import demo_db_path
from oracleproto.sim.harness import SIM_LLM_KEY, SIM_TAVILY_KEY
from oracleproto.sim.hostile import HostileText
from oracleproto.sim.personas import DETECTOR_SLUG
from oracleproto.sim.server import SimConfig, Simulator
from tests.unicode.cli import Outcome, oracleproto
from tests.unicode.inputs import BIG_CHARS, INPUTS, OPTION_LABELS, QUESTION_TEXT

RUN_ID = "20260101-000000-0bad"
MODEL = "sim/careful"
#: Every retry and cooldown of the run, scaled down: a refused page is retried at once.
_FAST = ("LLM_BACKOFF_NETWORK_S", "LLM_BACKOFF_RATE_LIMIT_S", "LLM_BACKOFF_SERVER_5XX_S",
         "SEARCH_BACKOFF_S", "LEAK_DETECTOR_BACKOFF_S")  # fmt: skip


@dataclass(frozen=True)
class HostileRun:
    """The recorded run and what made it."""

    run_dir: Path
    dataset: Path
    record: Outcome


def hostile_dataset(path: Path) -> Path:
    """Four demo questions whose text and option labels carry the text inputs (``inputs.py``)."""
    shutil.copyfile(demo_db_path(), path)
    con = sqlite3.connect(path)
    try:
        keep = sorted({*QUESTION_TEXT, *OPTION_LABELS})
        con.execute(f"DELETE FROM questions WHERE id NOT IN ({', '.join('?' * len(keep))})", keep)
        for qid, column in QUESTION_TEXT.items():
            con.execute("UPDATE questions SET event = event || ' ' || ? WHERE id = ?", (INPUTS[column], qid))
        for qid, columns in OPTION_LABELS.items():
            (text,) = con.execute("SELECT options FROM questions WHERE id = ?", (qid,)).fetchone()
            options = json.loads(text)
            for index, column in enumerate(columns):
                options[index] = f"{options[index]} {INPUTS[column]}"
            # ASCII JSON: a lone surrogate travels as its \ud800 escape, as a dataset file holds it.
            con.execute("UPDATE questions SET options = ? WHERE id = ?", (json.dumps(options), qid))
        con.execute("UPDATE dataset_metadata SET row_count = ?", (len(keep),))
        con.commit()
    finally:
        con.close()
    return path


def env_file(path: Path, sim: Simulator, dataset: Path) -> Path:
    """Settings pointing ``run --record`` at the simulator (one model, two samples)."""
    lines = [
        f"LLM_BASE_URL={sim.llm_base_url}",
        f"LLM_API_KEY={SIM_LLM_KEY}",
        f"MODELS={MODEL}",
        f"MODEL_TRAINING_CUTOFFS={MODEL}=2026-01",
        f"TAVILY_BASE_URL={sim.search_base_url}",
        f"TAVILY_API_KEY={SIM_TAVILY_KEY}",
        f"LEAK_DETECTOR_MODEL={DETECTOR_SLUG}",
        "LLM_SEND_SEED=true",
        "SAMPLING_N=2",
        "TAVILY_KEY_COOLDOWN_S=0",
        f"SOURCE_DB={dataset}",
        *(f"{name}=0.001" for name in _FAST),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def record_hostile_run(root: Path) -> HostileRun:
    """Record the run under ``root/runs`` (about 10 s)."""
    dataset = hostile_dataset(root / "hostile.db")
    hostile = HostileText(tuple(INPUTS.values()), big_chars=BIG_CHARS)
    with Simulator(SimConfig(seed=0, hostile=hostile)) as sim:
        env = env_file(root / "run.env", sim, dataset)
        outcome = oracleproto(
            "run", "--record", "--env-file", env, "--runs-root", root / "runs", "--run-id", RUN_ID,
            "--no-progress",
        )  # fmt: skip
    return HostileRun(root / "runs" / RUN_ID, dataset, outcome)
