"""``oracleproto cassettes`` and ``oracleproto cache rebuild`` through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.context import CallContext, call_context
from oracleproto.sim.loopback import LoopbackResponse, LoopbackServer
from tests.transport.helpers import CHAT_PATH, chat_body, make_rr


async def _record_run(run: Path, samples: int) -> None:
    def handler(request: object) -> LoopbackResponse:
        if request.path == "/search":  # type: ignore[attr-defined]
            return LoopbackResponse(body=b'{"results": []}')
        return LoopbackResponse(body=chat_body("a", prompt_tokens=100, cost=0.25))

    with LoopbackServer(handler) as server:  # type: ignore[arg-type]
        rr = make_rr(run / "cassettes", "record")
        llm = httpx.AsyncClient(transport=rr.transport("llm"), base_url=server.base_url)
        search = httpx.AsyncClient(transport=rr.transport("search"), base_url=server.base_url)
        for q in ("q1", "q2"):
            for s in range(samples):
                with call_context(CallContext("m", q, s)):
                    await llm.post(
                        CHAT_PATH, json={"model": "m", "messages": [{"role": "user", "content": q}]}
                    )
                    await search.post("/search", json={"query": q})
        await llm.aclose()
        await search.aclose()
        await rr.aclose()
    (run / "manifest.json").write_text(json.dumps({"sampling_n": 3}))


async def test_stats_reports_channels_dedup_cost_and_collapse(tmp_path: Path) -> None:
    await _record_run(tmp_path, 3)
    result = CliRunner().invoke(cli, ["cassettes", "stats", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (
        "llm: 6 entries (distinct keys), 6 requests, tokens 600+30, cost 1.500000 USD (6 of 6 report it)"
        in (result.output)
    )
    assert (
        "a replay makes none of its 8 recorded provider calls (630 tokens); recorded cost 1.500000 USD"
        in (result.output)
    )
    assert "search: 2 entries (distinct keys), 6 requests, dedup ratio 3.00" in result.output
    assert "sample-collapse check: ok (3 distinct keys per model × question)" in result.output

    violated = CliRunner().invoke(cli, ["cassettes", "stats", str(tmp_path), "--samples", "4"])
    assert violated.exit_code == 1
    assert "m × q1: 3 distinct main-LLM key(s) for 4 samples" in violated.output


async def test_ls_show_and_cache_rebuild(tmp_path: Path) -> None:
    await _record_run(tmp_path, 1)
    listing = CliRunner().invoke(cli, ["cassettes", "ls", str(tmp_path)])
    assert listing.exit_code == 0
    lines = listing.output.splitlines()
    assert len(lines) == 4
    llm_line = next(line for line in lines if " llm " in line)
    assert llm_line.endswith("m q1 s0 t0") or llm_line.endswith("m q2 s0 t0")
    shown = CliRunner().invoke(cli, ["cassettes", "show", str(tmp_path), llm_line.split()[0]])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["channel"] == "llm"
    ambiguous = CliRunner().invoke(cli, ["cassettes", "show", str(tmp_path), ""])
    assert (ambiguous.exit_code, ambiguous.stdout) == (2, "")
    assert "error: 4 entries match key prefix ''" in ambiguous.stderr
    rebuilt = CliRunner().invoke(cli, ["cache", "rebuild", str(tmp_path)])
    assert rebuilt.exit_code == 0
    assert "indexed 4 entries" in rebuilt.output
    assert (tmp_path / "cache").is_dir()


async def test_stats_with_broken_manifest_names_the_file(tmp_path: Path) -> None:
    await _record_run(tmp_path, 1)
    (tmp_path / "manifest.json").write_text("{not json")
    result = CliRunner().invoke(cli, ["cassettes", "stats", str(tmp_path)])
    assert result.exit_code == 2
    assert "manifest.json: not a JSON object" in result.stderr
