"""Fixtures of the cassette-store tests: a real S3 server (moto, IAM enforced) and sealed runs.

The server is started once per session on 127.0.0.1 (``moto_s3.py``); each test gets its own key
prefix in the bucket, its own local cache and the writer's credentials in its environment.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result

from oracleproto.cli.main import cli
from oracleproto.context import CallContext, call_context
from oracleproto.primitives.clock import FakeClock
from oracleproto.providers import OpenAIChatClient
from oracleproto.settings.model import LLMSettings
from oracleproto.sim import Simulator
from oracleproto.sim.harness import SIM_LLM_KEY
from oracleproto.store import RunDir
from oracleproto.transport import CassetteStore, RecordReplay
from oracleproto.verify.attest import write_attestation
from oracleproto.verify.demo import find_demo_run
from tests.runner.conftest import SimRecorder

HERE = Path(__file__).parent
#: The console script of this environment (subprocess tests run the command a user runs).
ORACLEPROTO = str(Path(sys.executable).parent / "oracleproto")


@dataclass(frozen=True)
class S3Server:
    """The moto server: where it listens and the two users' keys."""

    port: int
    bucket: str
    writer: dict[str, str]
    reviewer: dict[str, str]

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self, *, who: str = "writer", endpoint: str | None = None) -> dict[str, str]:
        key = self.writer if who == "writer" else self.reviewer
        return {
            "AWS_ACCESS_KEY_ID": key["id"],
            "AWS_SECRET_ACCESS_KEY": key["secret"],
            "AWS_ENDPOINT_URL_S3": endpoint or self.endpoint,
            "AWS_REGION": "us-east-1",
        }

    def client(self, who: str = "writer") -> object:
        import boto3

        key = self.writer if who == "writer" else self.reviewer
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=key["id"],
            aws_secret_access_key=key["secret"],
            region_name="us-east-1",
        )


@pytest.fixture(scope="session")
def s3() -> Iterator[S3Server]:
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "moto_s3.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        pytest.fail("the moto S3 server did not start (is moto[server] installed? `make install`)")
    info = json.loads(line)
    try:
        yield S3Server(info["port"], info["bucket"], info["writer"], info["reviewer"])
    finally:
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


@dataclass
class StoreEnv:
    """One test's store: URL (a fresh prefix), cache folder and environment."""

    url: str
    cache: Path
    env: dict[str, str]

    def with_(self, **changes: str) -> dict[str, str]:
        return {**self.env, **changes}


@pytest.fixture
def store(s3: S3Server, tmp_path: Path) -> StoreEnv:
    url = f"s3://{s3.bucket}/t-{secrets.token_hex(4)}"
    cache = tmp_path / "cache"
    env = {
        **s3.env(),
        "CASSETTE_STORE": url,
        "CASSETTE_STORE_CACHE": str(cache),
        "CASSETTE_STORE_BACKOFF_MS": "5",
    }
    return StoreEnv(url, cache, env)


def invoke(args: list[str], env: dict[str, str]) -> Result:
    """The CLI in-process with exactly the store variables of ``env`` (no AWS_* from outside)."""
    clean = {k: None for k in os.environ if k.startswith(("AWS_", "CASSETTE_STORE"))}
    return CliRunner().invoke(cli, args, env={**clean, **env})


def subprocess_env(env: dict[str, str]) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "CASSETTE_STORE"))}
    return {**base, **env}


@pytest.fixture(scope="session")
def demo_run() -> Path:
    return find_demo_run()


async def _stray_call(cassettes: Path, base_url: str) -> None:
    """One recorded entry no sample uses: `cassettes gc --apply` will remove it."""
    clock = FakeClock()
    llm = LLMSettings.from_values({"base_url": base_url + "/v1", "send_seed": True})
    cache = RecordReplay(cassettes, clock=clock, mode="record")
    async with cache, httpx.AsyncClient(transport=cache.transport("llm")) as http:
        chat = OpenAIChatClient(http, llm, clock, api_key=SIM_LLM_KEY)
        with call_context(CallContext("sim/careful::r5::c4", "demo-01", 7)):
            await chat.complete("sim/careful", [{"role": "user", "content": "a prompt nobody kept"}], [])


@dataclass(frozen=True)
class SimRuns:
    """A small sealed simulator run, and the same run re-sealed after `cassettes gc --apply`: two
    indexes of one run id that share most objects (DBs, logs, dataset), differ in a few."""

    sealed: Path
    collected: Path


@pytest.fixture(scope="session")
def sim_runs(tmp_path_factory: pytest.TempPathFactory) -> SimRuns:
    base = tmp_path_factory.mktemp("store-sim")
    run = SimRecorder()(base / "runs", models=1, samples=1, detector=False).run
    with Simulator() as sim:
        asyncio.run(_stray_call(run.cassettes_dir, sim.base_url))
    manifest = run.load_manifest()
    assert manifest.cassettes is not None
    root = CassetteStore(run.cassettes_dir, writable=False).root_digest()
    run.write_manifest(
        manifest.model_copy(update={"cassettes": manifest.cassettes.model_copy(update={"root_digest": root})})
    )
    write_attestation(run.root)
    collected = base / "collected" / run.run_id
    shutil.copytree(run.root, collected)
    done = CliRunner().invoke(cli, ["cassettes", "gc", str(collected), "--apply"])
    assert done.exit_code == 0, done.output
    return SimRuns(run.root, collected)


def copy_run(run: Path, where: Path) -> Path:
    """A private copy of a run directory (tests that change or push it)."""
    target = where / run.name
    shutil.copytree(run, target)
    return target


def run_id_of(run: Path) -> str:
    return RunDir.open(run).run_id


def secret_fragments(*secrets_: str) -> list[str]:
    """Every 12-character window of each secret (what must never be printed or written)."""
    return [s[i : i + 12] for s in secrets_ for i in range(len(s) - 11)]


def s3_index_bytes(store: StoreEnv, run_id: str, digest: str) -> bytes:
    """A run index's bytes as stored, read with the library directly."""
    from oracleproto.objectstore import Backend, parse_store_url
    from oracleproto.objectstore.naming import index_key

    data = Backend(parse_store_url(store.url), store.env).get_small(index_key(run_id, digest), 1 << 20)
    assert data is not None
    return data
