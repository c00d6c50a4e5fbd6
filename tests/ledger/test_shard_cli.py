"""``run --shard I/N``, ``--shard-models``, ``--experiment`` and ``--print-experiment-id`` end to end
(in-process command line, a simulator on 127.0.0.1, no ledger): one experiment id for every shard
whatever its keys and folders, a refusal that names the differing part, disjoint shards that cover
the experiment, an empty shard that says so, a shard recorded, replayed and resumed as a run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from oracleproto.runner.experiment_id import ExperimentId
from oracleproto.sim.server import SimConfig, Simulator
from tests.ledger.support import MODELS, env_file, invoke, manifest, record_args, run_dir_of

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    with Simulator(SimConfig(seed=3)) as server:
        yield server


def experiment_of(env: Path, *extra: str, environ: dict[str, str] | None = None) -> tuple[str, str]:
    result = invoke(["run", "--env-file", env, "--print-experiment-id", *extra], environ)
    assert result.exit_code == 0, result.output
    return result.stdout.strip(), result.stderr


def test_every_shard_prints_one_id_whatever_its_keys_folders_and_limits(tmp_path: Path) -> None:
    base = "http://127.0.0.1:9"
    first, err = experiment_of(env_file(tmp_path, base), "--shard", "1/3")
    other = env_file(
        tmp_path,
        base,
        name="other.env",
        LLM_API_KEY="another-shards-own-key-0002",
        TAVILY_API_KEY="another-tavily-key-0002",
        LLM_MAX_CONCURRENCY="2",
        LLM_TIMEOUT_S="99",
        RUNS_ROOT=str(tmp_path / "elsewhere"),
        # Listed in another order: the experiment's models are a set.
        MODELS=",".join(reversed(MODELS)),
    )
    second, _ = experiment_of(other, "--shard", "2/3")
    assert first == second
    ExperimentId.parse(first)  # the printed id is one --experiment accepts
    assert "  models    4: sim/careful, sim/greedy, sim/hasty, sim/random" in err
    assert "  shard 1/3: sim/greedy" in err  # sorted positions 1 and 4: only sim/greedy
    for part in ("dataset", "settings", "protocols", "profile"):
        assert f"  {part:<9} " in err
    auto, auto_err = experiment_of(
        env_file(tmp_path, base), "--shard", "auto/3", environ={"JOB_COMPLETION_INDEX": "2"}
    )
    assert auto == first and "  shard 2/3: sim/hasty" in auto_err
    # ORACLEPROTO_SHARD_INDEX wins over a scheduler's index.
    both = {"JOB_COMPLETION_INDEX": "2", "ORACLEPROTO_SHARD_INDEX": "0"}
    _, err0 = experiment_of(env_file(tmp_path, base), "--shard", "auto/3", environ=both)
    assert "  shard 0/3: sim/careful, sim/random" in err0


@pytest.mark.parametrize(
    ("overrides", "extra", "parts"),
    [
        ({"LLM_TEMPERATURE": "0.2"}, [], ["settings"]),
        ({"QUESTION_TYPES": "yes_no"}, [], ["dataset"]),
        # Its blocks switch the ENABLE_* protocol settings too.
        ({"PROTOCOLS_FILE": str(EXAMPLES / "protocols-minimal.toml")}, [], ["settings", "protocols"]),
        ({}, ["--models", "sim/careful,sim/greedy"], ["settings"]),
    ],
)
def test_a_shard_of_another_experiment_is_refused_naming_the_part(
    tmp_path: Path, overrides: dict[str, str], extra: list[str], parts: list[str]
) -> None:
    base = "http://127.0.0.1:9"
    expected, _ = experiment_of(env_file(tmp_path, base))
    env = env_file(tmp_path, base, name="shard.env", **overrides)
    result = invoke([*record_args(tmp_path, env, "--shard", "0/2", "--experiment", expected, *extra)])
    assert result.exit_code == 2, result.output
    err = result.stderr
    assert f"not to --experiment {expected}; it differs in:" in err
    differing = [line.split(":")[0].strip() for line in err.splitlines() if ": expected " in line]
    assert differing == parts, err
    assert "Nothing was written" in err and "--print-experiment-id" in err
    assert not (tmp_path / "runs").exists()


def test_bad_shard_options_are_refused(tmp_path: Path) -> None:
    env = env_file(tmp_path, "http://127.0.0.1:9")
    cases = [
        (["--shard", "4/4"], "I counts from 0 and must be below N (0…3)"),
        (["--shard", "two/4"], "is not I/N or auto/N"),
        (["--shard", "0/0"], "N must be from 1 to 10000"),
        (["--shard", "auto/4"], "neither ORACLEPROTO_SHARD_INDEX nor JOB_COMPLETION_INDEX is set"),
        (["--shard", "0/2", "--shard-models", "sim/careful"], "name a shard two ways"),
        (["--shard-models", "sim/nobody"], "sim/nobody not among the experiment's models"),
        (["--experiment", "exp1-nothex"], "is not an experiment id"),
    ]
    for extra, said in cases:
        result = invoke(record_args(tmp_path, env, *extra))
        assert result.exit_code == 2, (extra, result.output)
        assert said in result.output, (extra, result.output)
        assert "Traceback" not in result.output
    replay = invoke(["run", "--env-file", env, "--shard", "0/2", "--run-id", "20260301-120000-0a1f"])
    assert replay.exit_code == 2 and "use them with --record or --dry-run" in replay.output
    # A shard's ORACLEPROTO_EXPERIMENT left in a shell that replays is not a shard option given by mistake.
    expected = "exp1-" + "-".join(["0" * 12] * 4)
    replay_env = invoke(
        ["run", "--env-file", env, "--run-id", "20260301-120000-0a1f"], {"ORACLEPROTO_EXPERIMENT": expected}
    )
    assert replay_env.exit_code == 2 and "no run 20260301-120000-0a1f under" in replay_env.output
    bad_env = invoke(record_args(tmp_path, env, "--shard", "auto/4"), {"JOB_COMPLETION_INDEX": "7"})
    assert (
        bad_env.exit_code == 2 and "JOB_COMPLETION_INDEX='7' is not a shard index (0 to 3)" in bad_env.output
    )
    assert not (tmp_path / "runs").exists()


def test_an_empty_shard_says_so_and_writes_nothing(tmp_path: Path) -> None:
    env = env_file(tmp_path, "http://127.0.0.1:9")
    result = invoke(record_args(tmp_path, env, "--shard", "5/6"))
    assert result.exit_code == 0, result.output
    assert "shard 5/6 of experiment exp1-" in result.stderr
    assert (
        "has no model configuration: the experiment has 4 (sim/careful, sim/greedy, sim/hasty, sim/random)"
        in (result.stderr)
    )
    assert not (tmp_path / "runs").exists()


def test_a_limit_that_would_ask_a_shard_other_questions_is_refused(tmp_path: Path) -> None:
    # sim/hasty's cutoff admits questions the others do not: --limit 2 picks others without it.
    cutoffs = "sim/careful=2026-03-12,sim/greedy=2026-03-12,sim/hasty=2025-12,sim/random=2025-12"
    env = env_file(tmp_path, "http://127.0.0.1:9", MODEL_TRAINING_CUTOFFS=cutoffs)
    result = invoke(record_args(tmp_path, env, "--limit", "2", "--shard-models", "sim/careful,sim/greedy"))
    assert result.exit_code == 2, result.output
    assert "this shard's models would be asked 2 question(s) other than the experiment's 2" in result.stderr
    assert not (tmp_path / "runs").exists()


def test_shards_record_disjoint_parts_of_one_experiment(tmp_path: Path, sim: Simulator) -> None:
    env = env_file(tmp_path, sim.base_url)
    expected, _ = experiment_of(env, "--limit", "1")
    recorded: dict[int, Path] = {}
    for index in (0, 1):
        args = record_args(tmp_path / f"shard{index}", env, "--limit", "1", "--shard", f"{index}/2")
        result = invoke([*args, "--experiment", expected])
        assert result.exit_code == 0, result.output
        recorded[index] = run_dir_of(result.stdout)
    models = {}
    for index, run in recorded.items():
        data = manifest(run)
        assert data["experiment"] == {
            "id": expected,
            "shard_index": index,
            "shard_count": 2,
            "models": sorted(MODELS),
        }
        grid = data["grid"]
        assert isinstance(grid, dict)
        models[index] = set(grid["real_models"])
    assert models[0] | models[1] == set(MODELS) and not models[0] & models[1]
    assert models[0] == {"sim/careful", "sim/hasty"}

    # Resumed as another shard: refused, naming the experiment entry and the models.
    run = recorded[0]
    again = invoke(
        [*record_args(tmp_path / "shard0", env, "--limit", "1", "--shard", "1/2"), "--run-id", run.name]
    )
    assert again.exit_code == 2, again.output
    assert "experiment (run --shard / --shard-models / --experiment): shard 0/2 of experiment" in again.stderr
    assert "→ shard 1/2 of experiment" in again.stderr
    # A shard replays like any run: its manifest (experiment entry included) byte for byte.
    replayed = invoke(["replay", run, "--no-progress"])
    assert replayed.exit_code == 0, replayed.output
    assert "reproduced byte for byte" in replayed.stdout


def test_a_dry_run_plans_the_shard_only(tmp_path: Path) -> None:
    env = env_file(tmp_path, "http://127.0.0.1:9")
    result = invoke(["run", "--env-file", env, "--dry-run", "--shard", "1/2"])
    assert result.exit_code == 0, result.output
    planned = [line.split()[0] for line in result.stdout.splitlines() if line.startswith("sim/")]
    assert planned == ["sim/greedy::r5::c4", "sim/random::r5::c4"]
    assert not (tmp_path / "runs").exists()
