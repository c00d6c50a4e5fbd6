"""What the shard and ledger tests share: a user's settings file and price table for a simulated
experiment of four models, and the real command line (in-process, or as separate processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from click.testing import CliRunner, Result

from oracleproto.cli.main import cli

#: The console script of this environment: shards are separate processes, as on separate machines.
ORACLEPROTO = str(Path(sys.executable).parent / "oracleproto")
MODELS = ("sim/careful", "sim/greedy", "sim/hasty", "sim/random")
LLM_KEY = "sim-llm-key-0001"
TAVILY_KEY = "sim-tavily-key-0001"
#: The personas' own prices (sim/personas.py), and Tavily's pay-as-you-go credit.
PRICES = {
    "sim/careful": (0.3, 1.2),
    "sim/greedy": (0.5, 2.0),
    "sim/hasty": (0.2, 0.5),
    "sim/random": (0.05, 0.1),
    "sim/detector": (0.02, 0.1),
}
USD_PER_SEARCH = 0.008
#: The variables of the user's own shell that would change a run (a developer's LEDGER_URL, …).
_OURS = (
    "LEDGER_",
    "ORACLEPROTO_",
    "JOB_COMPLETION_INDEX",
    "MODELS",
    "LLM_",
    "TAVILY_",
    "LEAK_",
    "SAMPLING_N",
)


def env_file(where: Path, base_url: str, name: str = "run.env", **overrides: str) -> Path:
    """A user's ``.env`` for the experiment against a simulator at ``base_url``: four models with one
    training cutoff (so ``--limit`` picks the same questions for every shard), n = 1."""
    values = {
        "LLM_BASE_URL": f"{base_url}/v1",
        "LLM_API_KEY": LLM_KEY,
        "MODELS": ",".join(MODELS),
        "MODEL_TRAINING_CUTOFFS": ",".join(f"{m}=2025-12" for m in MODELS),
        "TAVILY_API_KEY": TAVILY_KEY,
        "TAVILY_BASE_URL": base_url,
        "LEAK_DETECTOR_MODEL": "sim/detector",
        "LLM_SEND_SEED": "true",
        "SAMPLING_N": "1",
        "LLM_MAX_TOKENS": "800",
        "LLM_BACKOFF_NETWORK_S": "0.001",
        "LLM_BACKOFF_RATE_LIMIT_S": "0.001",
        "LLM_BACKOFF_SERVER_5XX_S": "0.001",
        "SEARCH_BACKOFF_S": "0.001",
        "LEAK_DETECTOR_BACKOFF_S": "0.001",
        **overrides,
    }
    path = where / name
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()), encoding="utf-8")
    return path


def price_file(where: Path) -> Path:
    """The price table of the simulated providers."""
    table: dict[str, object] = {
        slug: {"input_usd_per_million": i, "output_usd_per_million": o} for slug, (i, o) in PRICES.items()
    }
    table["search"] = {"usd_per_credit": USD_PER_SEARCH}
    path = where / "prices.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    return path


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without the variables that would change a run, plus ``extra``."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(_OURS)}
    return {**base, **(extra or {})}


def invoke(args: list[str | Path], env: Mapping[str, str] | None = None) -> Result:
    """The real command line in-process, through the top-level handler, with only ``env`` of ours."""
    unset: dict[str, str | None] = {k: None for k in os.environ if k.startswith(_OURS)}
    return CliRunner().invoke(cli, [str(a) for a in args], env={**unset, **(env or {})})


def record_args(tmp_path: Path, env: Path, *extra: str | Path) -> list[str | Path]:
    """``run --record`` of the experiment into ``tmp_path/runs``."""
    runs = tmp_path / "runs"
    return ["run", "--record", "--env-file", env, "--runs-root", runs, "--no-progress", "--no-report", *extra]


def start(args: list[str | Path], env: Mapping[str, str], out: Path) -> subprocess.Popen[bytes]:
    """``oracleproto ARGS`` as a separate process, its output in ``out`` (.stdout, .stderr)."""
    stdout = out.with_suffix(".stdout").open("wb")
    stderr = out.with_suffix(".stderr").open("wb")
    try:
        return subprocess.Popen(
            [ORACLEPROTO, *map(str, args)], env=clean_env(env), stdout=stdout, stderr=stderr, cwd=out.parent
        )
    finally:
        stdout.close()
        stderr.close()


def finish(process: subprocess.Popen[bytes], out: Path, timeout_s: float = 600) -> tuple[int, str, str]:
    """Wait for a process from :func:`start`: its exit status, stdout and stderr."""
    code = process.wait(timeout=timeout_s)
    stdout = out.with_suffix(".stdout").read_text(encoding="utf-8")
    stderr = out.with_suffix(".stderr").read_text(encoding="utf-8")
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    return code, stdout, stderr


def run_dir_of(stdout: str) -> Path:
    """The run directory a ``run`` printed last."""
    return Path(stdout.strip().splitlines()[-1])


def manifest(run: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    return data
