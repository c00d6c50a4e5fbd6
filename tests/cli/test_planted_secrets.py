"""Planted secrets: a real recording through the CLI leaks no key, password or key fragment.

Keys are planted in the environment, in a ``.env`` file (a Tavily key pool among them), in base
URLs (``user:password@`` and credential query parameters) and echoed back by the simulator in
response headers and bodies, whole and in parts. After ``run --record``, ``report``, ``verify
--write-attestation``, ``bundle export`` and ``replay``, every byte written under the test's folder
(run dirs, cassettes, cache, DBs, logs, the bundle decompressed) and everything printed is scanned
for every planted secret and every 12-character fragment of one.
"""

from __future__ import annotations

import base64
import gzip
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from oracleproto.cli.main import main
from oracleproto.sim.faults import FaultConfig
from oracleproto.sim.personas import DETECTOR_SLUG
from oracleproto.sim.server import SimConfig, Simulator

RUN_ID = "20260103-040506-5ec7"
FRAGMENT = 12

LLM_KEY = "sk-or-v1-" + "planted-fake-llm-key-0a1b2c-3d4e5f-6a7b8c"
TAVILY_KEYS = ("tvly-planted-fake-pool-one-0a1b2c-3d4e5f", "tvly-planted-fake-pool-two-9z8y7x-6w5v4u")
DETECTOR_KEY = "sk-planted-fake-detector-key-7d6c5b-4a3f2e"
LLM_QUERY_KEY = "PLANTEDllmQUERYkey4f3e2d1c0b9a"
DETECTOR_PASSWORD = "PLANTEDdetPASSWORD8e7d6c5b4a3f"
DETECTOR_QUERY_TOKEN = "PLANTEDdetQUERYtoken1a2b3c4d5e"
LLM_URL_PASSWORD = "PLANTEDllmURLpassword5e6f7a8b9c"
REVOKED_KEY = "sk-or-v1-" + "planted-fake-revoked-key-9f8e7d-6c5b4a"


@dataclass
class Leaks:
    """Every planted secret (and derived forms) and every place that was scanned."""

    secrets: set[str]
    places: dict[str, bytes] = field(default_factory=dict)
    last_out: str = ""
    last_err: str = ""

    def add(self, name: str, data: bytes | str) -> None:
        """Remember ``data`` (a file's bytes or a command's output) as one scanned place."""
        self.places[name] = data.encode("utf-8") if isinstance(data, str) else data

    def add_tree(self, root: Path, skip: set[Path]) -> None:
        """Every file under ``root`` (and a decompressed copy of every .gz)."""
        for path in sorted(p for p in root.rglob("*") if p.is_file() and p not in skip):
            data = path.read_bytes()
            self.add(str(path.relative_to(root)), data)
            if path.suffix == ".gz":
                self.add(f"{path.relative_to(root)} (decompressed)", gzip.decompress(data))

    def hits(self) -> list[str]:
        """``place: secret #i, fragment at j`` for each fragment found (values never shown)."""
        found = []
        for i, secret in enumerate(sorted(self.secrets)):
            needles = {secret[j : j + FRAGMENT].encode() for j in range(len(secret) - FRAGMENT + 1)}
            for place, data in self.places.items():
                if any(n in data for n in needles):
                    found.append(f"{place}: planted secret #{i}")
        return found


def _cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, leaks: Leaks, *args: str
) -> int:
    """Run the console script in-process; its stdout/stderr become scanned places."""
    monkeypatch.setattr(sys, "argv", ["oracleproto", *args])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    # Every invocation is its own place (three `run --record` calls must not overwrite each other);
    # ``last_out``/``last_err`` are the latest, for the assertions on messages.
    n = sum(1 for name in leaks.places if name.startswith("stdout")) + 1
    leaks.add(f"stdout #{n} of {args[0]} {args[1]}", out)
    leaks.add(f"stderr #{n} of {args[0]} {args[1]}", err)
    leaks.last_out, leaks.last_err = out, err
    return code


def _environment(monkeypatch: pytest.MonkeyPatch, tmp: Path, sim: Simulator, *, llm_base_url: str) -> Path:
    """Planted environment variables plus a planted ``.env``; returns the ``.env`` path."""
    host = sim.base_url.removeprefix("http://")
    for name, value in {
        "LLM_BASE_URL": llm_base_url,
        "LLM_API_KEY": LLM_KEY,
        "MODELS": "sim/careful",
        "MODEL_TRAINING_CUTOFFS": "sim/careful=2026-01",
        "LLM_SEND_SEED": "true",
        "SAMPLING_N": "1",
        "REACT_MAX_SEARCH_CALLS": "1",
        "TAVILY_MAX_RESULTS": "2",
        "ANALYSIS_BOOTSTRAP_N": "20",
        "ORACLEPROTO_CACHE_DIR": str(tmp / "cache"),
        "LLM_BACKOFF_NETWORK_S": "0.001",
        "LLM_BACKOFF_RATE_LIMIT_S": "0.001",
        "LLM_BACKOFF_SERVER_5XX_S": "0.001",
        "SEARCH_BACKOFF_S": "0.001",
        "LEAK_DETECTOR_BACKOFF_S": "0.001",
    }.items():
        monkeypatch.setenv(name, value)
    env_file = tmp / "planted.env"
    env_file.write_text(
        f"TAVILY_API_KEY={','.join(TAVILY_KEYS)}\n"
        f"TAVILY_BASE_URL={sim.search_base_url}\n"
        f"LEAK_DETECTOR_MODEL={DETECTOR_SLUG}\n"
        f"LEAK_DETECTOR_API_KEY={DETECTOR_KEY}\n"
        f"LEAK_DETECTOR_BASE_URL=http://detector-user:{DETECTOR_PASSWORD}@{host}/v1?token={DETECTOR_QUERY_TOKEN}\n",
        encoding="utf-8",
    )
    return env_file


def _planted() -> set[str]:
    userinfo = f"detector-user:{DETECTOR_PASSWORD}"
    llm_userinfo = f"llm-user:{LLM_URL_PASSWORD}"
    return {
        LLM_KEY,
        *TAVILY_KEYS,
        DETECTOR_KEY,
        LLM_QUERY_KEY,
        DETECTOR_PASSWORD,
        DETECTOR_QUERY_TOKEN,
        LLM_URL_PASSWORD,
        REVOKED_KEY,
        # httpx sends a URL's userinfo as Basic auth; the simulator echoes that credential too.
        base64.b64encode(userinfo.encode()).decode(),
        base64.b64encode(llm_userinfo.encode()).decode(),
    }


def test_no_planted_secret_reaches_disk_or_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    leaks = Leaks(_planted())
    echo = FaultConfig(echo_key=True)
    runs = tmp_path / "runs"
    with Simulator(SimConfig(seed=0, chat=echo, search=echo)) as sim:
        env_file = _environment(
            monkeypatch, tmp_path, sim, llm_base_url=f"{sim.llm_base_url}?api_key={LLM_QUERY_KEY}"
        )
        common = ("--runs-root", str(runs), "--env-file", str(env_file), "--no-progress")
        code = _cli(capsys, monkeypatch, leaks, "run", "--record", "--run-id", RUN_ID, *common)
        # The detector's URL carries userinfo, which httpx sends as Basic auth instead of the
        # detector key: the simulator answers 401, which stops the run (exit 3, issue 28 §5; it
        # used to fail every verdict closed). Its message shows the URL with both parts redacted.
        assert code == 3, leaks.last_err
        assert "leak detector sim/detector at http://[REDACTED]@" in leaks.last_err
        assert "token=[REDACTED]" in leaks.last_err
        served = sim.handler.served()
        assert served.get("chat", 0) > 0 and served.get("search", 0) > 0
        # Resumed with the userinfo gone (the query token stays planted): the run finishes.
        monkeypatch.setenv("LEAK_DETECTOR_BASE_URL", f"{sim.llm_base_url}?token={DETECTOR_QUERY_TOKEN}")
        code = _cli(capsys, monkeypatch, leaks, "run", "--record", "--run-id", RUN_ID, *common)
        assert code == 0, leaks.last_err

        # A URL with userinfo for the main LLM: httpx turns it into Basic auth, the simulator
        # answers 401 (echoing that credential) and the run aborts with exit 3.
        monkeypatch.setenv("LLM_BASE_URL", f"http://llm-user:{LLM_URL_PASSWORD}@{sim.base_url[7:]}/v1")
        code = _cli(
            capsys, monkeypatch, leaks, "run", "--record", "--run-id", "20260103-040506-5ec8", *common
        )
        assert code == 3
    # A revoked key whose provider echoes its first 24 characters in the 401 message.
    revoked = FaultConfig(echo_key=True, revoked_keys=frozenset({REVOKED_KEY}))
    with Simulator(SimConfig(seed=0, chat=revoked, search=echo)) as sim:
        _environment(monkeypatch, tmp_path, sim, llm_base_url=sim.llm_base_url)
        monkeypatch.setenv("LLM_API_KEY", REVOKED_KEY)
        code = _cli(
            capsys, monkeypatch, leaks, "run", "--record", "--run-id", "20260103-040506-5ec9", *common
        )
        assert code == 3
        assert "Incorrect API key provided" in leaks.last_err

    run_dir = runs / RUN_ID
    assert _cli(capsys, monkeypatch, leaks, "report", str(run_dir), "--out", str(tmp_path / "report")) == 0
    assert _cli(capsys, monkeypatch, leaks, "verify", str(run_dir), "--write-attestation") == 0
    bundle = tmp_path / "bundle.tar.gz"
    code = _cli(capsys, monkeypatch, leaks, "bundle", "export", str(run_dir), str(bundle))
    assert code == 0, leaks.last_err
    # Redacted URLs in the config snapshot still replay: the key projection never held them.
    code = _cli(capsys, monkeypatch, leaks, "replay", str(run_dir), "--out", str(tmp_path / "replayed"))
    assert code == 0, leaks.last_out
    assert "reproduced byte for byte" in leaks.last_out

    leaks.add_tree(tmp_path, skip={env_file})
    cassette = (run_dir / "cassettes" / "detector.yaml").read_text(encoding="utf-8")
    assert "token=[REDACTED]" in cassette
    # The userinfo of a base URL is redacted in the cassettes: the main LLM's 401 of run 5ec8.
    llm_entries = "".join(
        p.read_text(encoding="utf-8") for p in (runs / "20260103-040506-5ec8" / "cassettes").rglob("*.yaml")
    )
    assert "uri: http://[REDACTED]@" in llm_entries
    assert "[REDACTED]" in (run_dir / "cassettes" / "search.yaml").read_text(encoding="utf-8")
    n_files = sum(1 for name in leaks.places if not name.startswith(("stdout", "stderr")))
    print(f"planted secrets: {len(leaks.secrets)}; places scanned: {len(leaks.places)} ({n_files} files)")
    assert leaks.hits() == []


def test_the_leak_scan_finds_a_twelve_character_fragment() -> None:
    """The scan above can fail: one 12-character piece of a planted key is a hit."""
    leaks = Leaks({LLM_KEY})
    leaks.add("clean", f"{LLM_KEY[:11]}… [REDACTED]")
    assert leaks.hits() == []
    leaks.add("echoed", f"Incorrect API key provided: x{LLM_KEY[7:19]}y")
    assert leaks.hits() == ["echoed: planted secret #0"]


@pytest.mark.parametrize("source", ["env", ".env"])
def test_a_settings_error_exits_2_without_echoing_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], source: str
) -> None:
    monkeypatch.chdir(tmp_path)
    value = f"[{TAVILY_KEYS[0]}"
    env_file = tmp_path / "planted.env"
    env_file.write_text(f"TAVILY_API_KEY='{value}'\n" if source == ".env" else "", encoding="utf-8")
    if source == "env":
        monkeypatch.setenv("TAVILY_API_KEY", value)
    leaks = Leaks({TAVILY_KEYS[0]})
    args = ("run", "--record", "--runs-root", str(tmp_path / "runs"), "--env-file", str(env_file))
    assert _cli(capsys, monkeypatch, leaks, *args) == 2
    err = leaks.last_err
    assert "TAVILY_API_KEY: Value error, starts with '[' but is not a valid JSON list" in err
    assert "(value not shown: it is a secret)" in err and "Traceback" not in err
    assert leaks.hits() == []
    assert not (tmp_path / "runs").exists()
