"""A recording that failed says so (issue 28 §2, §5): ``run --record`` end to end, exit codes and messages.

Each case drives the real command line in-process (``CliRunner``, through the top-level handler)
against a simulator on 127.0.0.1 started by the test, with the user's settings in an env file:
no network (exit 6, the samples to retry and the resume command), a wrong model slug (exit 2,
before anything is written, or at the first reply when the endpoint has no model list), a revoked
detector key (exit 3, resumable), a rate limit beyond ``RETRY_AFTER_MAX_S`` (exit 4, naming the
429), and the odd replies: 10^30 and NaN usage, a gzip bomb, a reply dripped byte by byte.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from oracleproto.cli.main import cli
from oracleproto.sim.faults import FaultConfig
from oracleproto.sim.server import SimConfig, Simulator
from oracleproto.transport.live_body import MAX_RESPONSE_BODY_BYTES

DETECTOR_KEY = "sim-detector-key-0001"


def env_file(where: Path, base: str, **overrides: str) -> Path:
    """A user's ``.env`` for a live run against ``base`` (a simulator), small and fast."""
    values = {
        "LLM_BASE_URL": f"{base}/v1",
        "LLM_API_KEY": "sim-llm-key-0001",
        "MODELS": "sim/careful",
        "MODEL_TRAINING_CUTOFFS": "sim/careful=2026-01",
        "TAVILY_API_KEY": "sim-tavily-key-0001",
        "TAVILY_BASE_URL": base,
        "LEAK_DETECTOR_MODEL": "sim/detector",
        "LLM_SEND_SEED": "true",
        "SAMPLING_N": "1",
        # Backoffs scaled down (as `sim run` does): the retries are counted, never waited out.
        "LLM_BACKOFF_NETWORK_S": "0.001",
        "LLM_BACKOFF_RATE_LIMIT_S": "0.001",
        "LLM_BACKOFF_SERVER_5XX_S": "0.001",
        "SEARCH_BACKOFF_S": "0.001",
        "LEAK_DETECTOR_BACKOFF_S": "0.001",
        **overrides,
    }
    path = where / "run.env"
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()), encoding="utf-8")
    return path


def oracleproto(*args: str | Path) -> Result:
    """The real command line in-process, through the top-level handler (exit codes as a shell sees)."""
    return CliRunner().invoke(cli, [str(a) for a in args])


def record(tmp_path: Path, env: Path, *extra: str) -> Result:
    runs = tmp_path / "runs"
    return oracleproto(
        "run", "--record", "--env-file", env, "--runs-root", runs, "--no-progress", "--no-report", *extra
    )  # fmt: skip


def run_id_of(result: Result) -> str:
    return Path(result.stdout.strip().splitlines()[-1]).name


def clean(result: Result) -> str:
    assert "Traceback" not in result.output and "internal error" not in result.output
    return result.stderr


@pytest.fixture
def sim() -> Iterator[Simulator]:
    with Simulator(SimConfig(seed=0)) as server:
        yield server


# --- no network ---------------------------------------------------------------------------------


def test_no_network_exits_6_naming_the_samples_and_the_resume_command(
    tmp_path: Path, sim: Simulator, closed_port: int
) -> None:
    dead = f"http://127.0.0.1:{closed_port}"
    # The case: --limit 2 with n = 3, six samples, far below the circuit breaker's 8 calls.
    env = env_file(tmp_path, dead, SAMPLING_N="3")
    failed = record(tmp_path, env, "--limit", "2")
    err = clean(failed)
    assert failed.exit_code == 6, err
    run_id = run_id_of(failed)
    assert f"model slugs not checked at {dead}/v1/models (ConnectError" in err
    assert "samples that ended in a call error (6, by model and error):" in err
    assert "  sim/careful::r5::c4: network (6): " in err
    assert "    last: sim/careful: retries exhausted after" in err and "ConnectError" in err
    assert f"to retry them: `oracleproto run --record --run-id {run_id}`" in err
    assert f"error: run {run_id}: 6 of 6 admitted samples ended in a call error, more than " in err
    assert "more than --allow-errors 0 allows (at most 0)" in err
    finished = json.loads((tmp_path / "runs" / run_id / "manifest.json").read_text(encoding="utf-8"))
    assert finished["finished_at"] is not None  # complete on disk: the exit code says it is unusable

    # The resume the summary names, once the network is back: exactly those samples, exit 0.
    healthy = env_file(tmp_path, sim.base_url, SAMPLING_N="3")
    resumed = record(tmp_path, healthy, "--limit", "2", "--run-id", run_id)
    err = clean(resumed)
    assert resumed.exit_code == 0, err
    assert f"run {run_id}: 6 slots, 6 run now" in err and "samples with call errors: none" in err
    assert "samples that ended in a call error" not in err


@pytest.mark.parametrize(
    ("allowed", "code", "said"),
    [
        ("2", 0, "2 errored sample(s) of 2 admitted are within --allow-errors 2 (at most 2)"),
        ("100%", 0, "within --allow-errors 100% (at most 2)"),
        ("0.5", 6, "more than --allow-errors 0.5 allows (at most 1)"),
        ("1", 6, "more than --allow-errors 1 allows (at most 1)"),
    ],
)
def test_allow_errors_accepts_a_partial_run(
    tmp_path: Path, allowed: str, code: int, said: str, closed_port: int
) -> None:
    env = env_file(tmp_path, f"http://127.0.0.1:{closed_port}", LLM_RETRY_MAX="0")
    result = record(tmp_path, env, "--limit", "2", "--allow-errors", allowed)
    err = clean(result)
    assert result.exit_code == code, err
    assert said in err and "network (2)" in err


@pytest.mark.parametrize("allowed", ["abc", "-1", "1.5", "150%", "nan"])
def test_a_bad_allow_errors_is_refused_before_anything_runs(
    tmp_path: Path, allowed: str, closed_port: int
) -> None:
    env = env_file(tmp_path, f"http://127.0.0.1:{closed_port}")
    result = record(tmp_path, env, "--allow-errors", allowed)
    assert result.exit_code == 2
    assert f"--allow-errors {allowed!r}: expected a number of samples (e.g. 3) or a fraction" in result.output
    assert not (tmp_path / "runs").exists()


# --- a wrong model slug -------------------------------------------------------------------------


def test_a_wrong_slug_is_refused_before_the_first_call(tmp_path: Path, sim: Simulator) -> None:
    wrong = {"MODELS": "sim/carefull", "MODEL_TRAINING_CUTOFFS": "sim/carefull=2026-01"}
    env = env_file(tmp_path, sim.base_url, **wrong)
    served_before = sim.handler.served()
    result = record(tmp_path, env, "--limit", "2")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert f"MODELS: 'sim/carefull' is not among the 7 models {sim.base_url}/v1/models lists" in result.output
    assert "(did you mean 'sim/careful'" in result.output and "nothing was called or written" in result.output
    assert not (tmp_path / "runs").exists()
    assert sim.handler.served() == served_before  # no chat, search or detector request

    checked = oracleproto("plan", "--env-file", env, "--limit", "2", "--check-models")
    assert checked.exit_code == 2
    assert "MODELS sim/carefull: NOT LISTED (did you mean 'sim/careful'" in checked.output
    assert f"LEAK_DETECTOR_MODEL sim/detector: listed at {sim.base_url}/v1/models" in checked.output


def test_plan_checks_models_only_when_asked(tmp_path: Path, sim: Simulator) -> None:
    env = env_file(tmp_path, sim.base_url)
    offline = oracleproto("plan", "--env-file", env, "--limit", "2")
    assert offline.exit_code == 0 and "model check" not in offline.output
    checked = oracleproto("plan", "--env-file", env, "--limit", "2", "--check-models")
    assert checked.exit_code == 0, checked.output
    assert f"MODELS sim/careful: listed at {sim.base_url}/v1/models" in checked.stderr


def test_a_wrong_slug_without_a_model_list_stops_at_the_first_reply(tmp_path: Path) -> None:
    with Simulator(SimConfig(seed=0, list_models=False)) as sim:
        env = env_file(tmp_path, sim.base_url, MODELS="sim/nope", MODEL_TRAINING_CUTOFFS="sim/nope=2026-01")
        result = record(tmp_path, env, "--limit", "2")
    err = clean(result)
    assert result.exit_code == 2, err
    listing = f"{sim.base_url}/v1/models"
    assert f"model slugs not checked at {listing} (HTTP 404: the endpoint offers no model list)" in err
    host = sim.base_url.removeprefix("http://")
    assert (
        f"error: model not found: the llm provider at {host} has no model 'sim/nope' (HTTP 404: The model "
        "`sim/nope` does not exist or you do not have access to it.)"
    ) in err
    assert "correct MODELS" in err and "stopped and is resumable" in err
    run_id = next(p.name for p in (tmp_path / "runs").iterdir())
    log = (tmp_path / "runs" / run_id / "logs" / f"{run_id}.log").read_text(encoding="utf-8").splitlines()
    aborted = [json.loads(line) for line in log if '"run_aborted"' in line]
    assert [(e["reason"], e["channel"]) for e in aborted] == [("model_not_found", "llm")]
    # Stopped at the first one: no sample was stored as an error.
    assert not any('"sample_done"' in line for line in log)


# --- a revoked detector key, a rate limit beyond the cap ----------------------------------------


def test_a_revoked_detector_key_stops_the_run_resumably_with_exit_3(tmp_path: Path) -> None:
    revoked = SimConfig(seed=0, chat=FaultConfig(revoked_keys=frozenset({DETECTOR_KEY})))
    with Simulator(revoked) as sim:
        env = env_file(tmp_path, sim.base_url, LEAK_DETECTOR_API_KEY=DETECTOR_KEY)
        stopped = record(tmp_path, env, "--limit", "2")
    err = clean(stopped)
    assert stopped.exit_code == 3, err
    assert "error: auth: leak detector sim/detector at" in err and "HTTP 401" in err
    assert DETECTOR_KEY not in stopped.output
    run_id = next(p.name for p in (tmp_path / "runs").iterdir())
    assert "fix LEAK_DETECTOR_API_KEY (or LLM_API_KEY, which the detector uses when LEAK_DETECTOR" in err
    assert f"then rerun with --run-id {run_id}" in err

    with Simulator(SimConfig(seed=0)) as sim:  # the key fixed (here: no longer revoked)
        resumed = record(tmp_path, env_file(tmp_path, sim.base_url, LEAK_DETECTOR_API_KEY=DETECTOR_KEY),
                         "--limit", "2", "--run-id", run_id)  # fmt: skip
    err = clean(resumed)
    assert resumed.exit_code == 0, err
    assert "verdicts failed" not in err  # the 401s were sent again, not served to the resumed samples


def test_a_rate_limit_beyond_the_cap_names_the_status_and_exits_4(tmp_path: Path) -> None:
    limited = SimConfig(seed=0, chat=FaultConfig(fail_429=1.0, retry_after_s=86400))
    with Simulator(limited) as sim:
        result = record(tmp_path, env_file(tmp_path, sim.base_url), "--limit", "2")
    err = clean(result)
    assert result.exit_code == 4, err
    host = sim.base_url.removeprefix("http://")
    assert (
        f"llm (sim/careful) at {host} answered HTTP 429 and asked to wait 86400 s (rate_limit, Retry-After), "
        "more than RETRY_AFTER_MAX_S=300 s"
    ) in err
    assert "stopped and is resumable" in err


# --- odd replies --------------------------------------------------------------------------------


def replay_and_stats(run: Path) -> str:
    replayed = oracleproto("replay", run, "--no-progress")
    assert replayed.exit_code == 0, replayed.output
    assert "reproduced byte for byte" in replayed.stdout
    stats = oracleproto("cassettes", "stats", run)
    assert stats.exit_code == 0, stats.output
    return replayed.stdout


def test_usage_of_10_to_the_30_is_a_classified_defect_and_the_recording_replays(tmp_path: Path) -> None:
    with Simulator(SimConfig(seed=0, chat=FaultConfig(odd_usage="huge"))) as sim:
        result = record(tmp_path, env_file(tmp_path, sim.base_url), "--limit", "2")
    err = clean(result)
    assert result.exit_code == 6, err  # finished, both samples errored: no crash, no endless resume
    assert "sim/careful::r5::c4: unknown (2)" in err
    assert "usage.prompt_tokens is 1000000000000000000000000000000, outside 0…1,000,000,000,000" in err
    run = tmp_path / "runs" / run_id_of(result)
    out = replay_and_stats(run)
    note = "note: 2 sample(s) of this recording ended in a call error (unknown 2), reproduced as recorded"
    assert note in out


@pytest.mark.parametrize("odd", ["nan", "infinity"])
def test_nan_and_infinity_usage_read_as_not_reported_and_replay(tmp_path: Path, odd: str) -> None:
    with Simulator(SimConfig(seed=0, chat=FaultConfig(odd_usage=odd))) as sim:  # type: ignore[arg-type]
        result = record(tmp_path, env_file(tmp_path, sim.base_url), "--limit", "1")
    err = clean(result)
    assert result.exit_code == 0, err
    replay_and_stats(tmp_path / "runs" / run_id_of(result))


def test_a_gzip_bomb_is_refused_while_reading_and_recorded_small(tmp_path: Path) -> None:
    with Simulator(SimConfig(seed=0, chat=FaultConfig(gzip_bomb_mib=64))) as sim:
        result = record(tmp_path, env_file(tmp_path, sim.base_url), "--limit", "1")
    err = clean(result)
    assert result.exit_code == 6, err
    assert "sim/careful::r5::c4: unknown (1)" in err
    assert (
        f"RemoteProtocolError: oracleproto refused the reply: its body is over {MAX_RESPONSE_BODY_BYTES:,} "
        "bytes once decoded (Content-Encoding: gzip)"
    ) in err
    run = tmp_path / "runs" / run_id_of(result)
    cassette_bytes = sum(p.stat().st_size for p in (run / "cassettes").rglob("*") if p.is_file())
    assert cassette_bytes < 1_000_000  # the refusal is recorded, not the 64 MiB
    replay_and_stats(run)
    verified = oracleproto("verify", run)
    assert verified.exit_code == 0, verified.output


def test_a_dripped_reply_times_out_on_the_whole_attempt(tmp_path: Path) -> None:
    # One byte every 50 ms: each read arrives well within the 0.5 s timeout, the whole reply never does.
    with Simulator(SimConfig(seed=0, chat=FaultConfig(drip_s=0.05))) as sim:
        env = env_file(tmp_path, sim.base_url, LLM_TIMEOUT_S="0.5", LLM_RETRY_MAX="1")
        result = record(tmp_path, env, "--limit", "1")
    err = clean(result)
    assert result.exit_code == 6, err
    assert "sim/careful::r5::c4: network (1)" in err
    assert "retries exhausted after 2 attempts; last ReadTimeout: no complete reply within 0.5 s" in err
    replay_and_stats(tmp_path / "runs" / run_id_of(result))


def test_sim_run_can_revoke_the_detectors_own_key(tmp_path: Path) -> None:
    result = oracleproto(
        "sim", "run", "--personas", "1", "--samples", "1", "--revoke-detector-key",
        "--no-report", "--no-progress", "--runs-root", tmp_path,
    )  # fmt: skip
    err = clean(result)
    assert result.exit_code == 3, err
    assert "error: auth: leak detector sim/detector" in err and "fix LEAK_DETECTOR_API_KEY" in err
