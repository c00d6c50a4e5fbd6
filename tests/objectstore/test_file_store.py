"""The same store on a shared folder (``file://``): round trip, a damaged object, a second push."""

from __future__ import annotations

from pathlib import Path

from oracleproto.primitives.hashing import sha256_hex
from oracleproto.verify import verify_run
from tests.objectstore.conftest import SimRuns, invoke, run_id_of


def test_file_store_round_trip_and_a_damaged_object(sim_runs: SimRuns, tmp_path: Path) -> None:
    url = f"file://{tmp_path / 'shared' / 'store'}"
    env = {"CASSETTE_STORE": url, "CASSETTE_STORE_CACHE": str(tmp_path / "cache")}
    run = sim_runs.sealed
    pushed = invoke(["store", "push", str(run), "--quiet"], env)
    assert pushed.exit_code == 0, pushed.output
    again = invoke(["store", "push", str(run), "--quiet"], env)
    assert " 0 of " in again.output and "its index was already there" in again.output
    pulled = invoke(["store", "pull", run_id_of(run), str(tmp_path / "a"), "--quiet"], env)
    assert pulled.exit_code == 0, pulled.output
    assert verify_run(tmp_path / "a" / "run" / run_id_of(run)).ok

    manifest = run / "manifest.json"
    sha = sha256_hex(manifest.read_bytes())
    stored = tmp_path / "shared" / "store" / "objects" / "sha256" / sha[:2] / sha
    stored.write_bytes(stored.read_bytes().replace(b"{", b"[", 1))
    fresh = {**env, "CASSETTE_STORE_CACHE": str(tmp_path / "cache2")}
    refused = invoke(["store", "pull", run_id_of(run), str(tmp_path / "b")], fresh)
    assert refused.exit_code == 1, refused.output
    assert f"objects/sha256/{sha[:2]}/{sha} (run/{run_id_of(run)}/manifest.json) is damaged" in refused.output
    assert not (tmp_path / "b").exists()
