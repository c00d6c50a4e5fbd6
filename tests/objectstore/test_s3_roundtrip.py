"""Push, list, pull and verify against a real S3 server (moto on 127.0.0.1, IAM enforced)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oracleproto.objectstore.index import parse_index
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.verify import verify_run
from oracleproto.verify.attest import published_files
from tests.objectstore.conftest import S3Server, SimRuns, StoreEnv, invoke, run_id_of


def _digest(output: str) -> str:
    return next(line.split()[1] for line in output.splitlines() if line.startswith("index: "))


@pytest.mark.slow  # the demo's 7 MB: a secret scan, then a full verify
def test_demo_round_trip_push_ls_pull_verify(store: StoreEnv, demo_run: Path, tmp_path: Path) -> None:
    pushed = invoke(["store", "push", str(demo_run), "--quiet"], store.env)
    assert pushed.exit_code == 0, pushed.output
    files = len(published_files(demo_run)) + 2  # + attestation.json + the dataset
    assert f"{files} of {files} object(s) uploaded" in pushed.output
    digest = _digest(pushed.output)

    again = invoke(["store", "push", str(demo_run), "--quiet"], store.env)
    assert f"0 of {files} object(s) uploaded" in again.output and f"{files} already there" in again.output
    assert _digest(again.output) == digest  # the same run is the same index

    listed = invoke(["store", "ls", "--json"], store.env)
    assert listed.exit_code == 0, listed.output
    (row,) = json.loads(listed.output)["runs"]
    assert row["run_id"] == demo_run.name and row["index"] == digest and row["dataset"] == "demo.db"

    dest = tmp_path / "pulled"
    pulled = invoke(["store", "pull", demo_run.name, str(dest), "--quiet"], store.env)
    assert pulled.exit_code == 0, pulled.output
    assert f"{files} object(s) fetched" in pulled.output
    run_dir = dest / "run" / demo_run.name
    for rel in published_files(demo_run):
        assert (run_dir / rel).read_bytes() == (demo_run / rel).read_bytes(), rel
    assert (dest / "dataset" / "demo.db").is_file()
    assert verify_run(run_dir, dataset=dest / "dataset" / "demo.db").ok

    # A second pull (by digest prefix) finds every object in the local cache: nothing is fetched.
    second = invoke(["store", "pull", digest[:12], str(tmp_path / "second"), "--quiet"], store.env)
    assert second.exit_code == 0, second.output
    assert f"0 object(s) fetched (0.0 MB), {files} from the local cache" in second.output


def test_reviewer_with_read_only_keys_pulls_and_verifies(
    s3: S3Server, store: StoreEnv, sim_runs: SimRuns, tmp_path: Path
) -> None:
    assert invoke(["store", "push", str(sim_runs.sealed), "--quiet"], store.env).exit_code == 0
    reviewer = store.with_(**s3.env(who="reviewer"), CASSETTE_STORE_CACHE=str(tmp_path / "rcache"))
    listed = invoke(["store", "ls"], reviewer)
    assert listed.exit_code == 0 and run_id_of(sim_runs.sealed) in listed.output
    verified = invoke(["verify", run_id_of(sim_runs.sealed), "--from-store", store.url, "--quiet"], reviewer)
    assert verified.exit_code == 0, verified.output
    assert "VERIFIED" in verified.output
    pulled = invoke(["store", "pull", run_id_of(sim_runs.sealed), str(tmp_path / "r"), "--quiet"], reviewer)
    assert pulled.exit_code == 0, pulled.output
    assert "0 object(s) fetched" in pulled.output  # --from-store filled the same cache


def test_replay_from_store_reproduces_and_reuses_the_cache(
    store: StoreEnv, sim_runs: SimRuns, tmp_path: Path
) -> None:
    assert invoke(["store", "push", str(sim_runs.sealed), "--quiet"], store.env).exit_code == 0
    run_id = run_id_of(sim_runs.sealed)
    replayed = invoke(["replay", run_id, "--from-store", store.url, "--no-progress"], store.env)
    assert replayed.exit_code == 0, replayed.output
    assert "reproduced byte for byte" in replayed.output
    # The laid-out copy is re-checked on each use; an edited file is rebuilt from verified objects.
    (cached,) = (store.cache / "runs").iterdir()
    manifest = cached / "run" / run_id / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"', "'", 1))
    verified = invoke(["verify", run_id, "--from-store", store.url, "--quiet"], store.env)
    assert verified.exit_code == 0, verified.output
    assert sha256_hex(manifest.read_bytes()) == sha256_hex((sim_runs.sealed / "manifest.json").read_bytes())


def test_two_indexes_of_one_run_id_are_kept_and_named(
    store: StoreEnv, sim_runs: SimRuns, tmp_path: Path
) -> None:
    first = invoke(["store", "push", str(sim_runs.sealed), "--quiet"], store.env)
    second = invoke(["store", "push", str(sim_runs.collected), "--quiet"], store.env)
    assert first.exit_code == 0 and second.exit_code == 0, second.output
    a, b = _digest(first.output), _digest(second.output)
    assert a != b
    # The collected run shares its DB, logs and dataset with the sealed one: only changed files go up.
    uploaded = int(second.output.split(" of ")[0].rsplit(" ", 1)[1])
    assert 0 < uploaded < len(published_files(sim_runs.collected)) + 2
    run_id = run_id_of(sim_runs.sealed)
    ambiguous = invoke(["store", "pull", run_id, str(tmp_path / "x")], store.env)
    assert ambiguous.exit_code == 2
    assert "matches 2 run indexes" in ambiguous.output and a in ambiguous.output and b in ambiguous.output
    assert not (tmp_path / "x").exists()
    pulled = invoke(["store", "pull", b[:12], str(tmp_path / "y"), "--quiet"], store.env)
    assert pulled.exit_code == 0, pulled.output
    assert verify_run(tmp_path / "y" / "run" / run_id).ok


def test_pull_from_an_index_file_and_bundle_import_from_store(
    store: StoreEnv, sim_runs: SimRuns, tmp_path: Path
) -> None:
    pushed = invoke(["store", "push", str(sim_runs.sealed), "--quiet"], store.env)
    digest = _digest(pushed.output)
    run_id = run_id_of(sim_runs.sealed)
    imported = invoke(["bundle", "import", digest, str(tmp_path / "b"), "--from-store", store.url], store.env)
    assert imported.exit_code == 0, imported.output
    index_file = tmp_path / "b" / "run" / run_id / "manifest.json"
    assert index_file.is_file()
    # An index published beside a paper: the store needs no listing, every object is named by digest.
    from tests.objectstore.conftest import s3_index_bytes

    saved = tmp_path / "run-index.json"
    saved.write_bytes(s3_index_bytes(store, run_id, digest))
    assert parse_index(saved.read_bytes(), "x", digest=digest).run_id == run_id
    pulled = invoke(["store", "pull", str(saved), str(tmp_path / "f"), "--quiet"], store.env)
    assert pulled.exit_code == 0, pulled.output
    assert (tmp_path / "f" / "run" / run_id / "attestation.json").is_file()
