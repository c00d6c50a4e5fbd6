"""``oracleproto profile show|validate|diff|export`` and ``--profile`` on render."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.profile import builtin_profile, builtin_profile_data, profile_fingerprint

BUILTIN_FP = profile_fingerprint(builtin_profile())


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_show_summarises_the_builtin_profile() -> None:
    code, out = _invoke("profile", "show")
    assert code == 0
    assert f"fingerprint: {BUILTIN_FP}" in out
    assert "injection policy: oracleproto" in out
    assert "request sharing: identical_search_and_detector" in out


@pytest.mark.shared
def test_show_and_validate_a_file(earlier_harness: Path) -> None:
    path = earlier_harness / "earlier-harness.profile.json"
    code, out = _invoke("profile", "show", str(path))
    assert code == 0 and "injection policy: earlier" in out and "api key in the body" in out
    code, out = _invoke("profile", "validate", str(path))
    assert code == 0 and out.startswith(f"valid: {path} is harness profile 'earlier-harness', fingerprint ")


def test_validate_lists_every_problem_with_its_path(tmp_path: Path) -> None:
    data = builtin_profile_data()
    data["texts"]["status_header"] = "{{stepp}}"
    data["request_sharing"] = "sometimes"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    code, out = _invoke("profile", "validate", str(bad))
    assert code == 2
    assert "texts.status_header: unknown placeholder {{stepp}}" in out
    assert "request_sharing: must be one of" in out
    assert "Traceback" not in out


@pytest.mark.parametrize("text", ["", "{", "\x00\xff not json", '{"profile_version": 1}'])
def test_validate_refuses_broken_files_with_a_message(tmp_path: Path, text: str) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text(text, encoding="utf-8", errors="surrogateescape")
    code, out = _invoke("profile", "validate", str(bad))
    assert code == 2 and "broken.json" in out and "Traceback" not in out


def test_export_and_diff(tmp_path: Path) -> None:
    out_file = tmp_path / "builtin.json"
    code, _ = _invoke("profile", "export", "builtin", "--out", str(out_file))
    assert code == 0
    code, out = _invoke("profile", "diff", "builtin", str(out_file))
    assert code == 0 and f"same bytes: both profiles have fingerprint {BUILTIN_FP}" in out
    data = json.loads(out_file.read_text(encoding="utf-8"))
    data["name"] = "renamed"
    data["truncation"]["marker"] = "\n[cut]"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(data), encoding="utf-8")
    code, out = _invoke("profile", "diff", str(out_file), str(changed))
    assert code == 1
    assert "name  (descriptive only)" in out
    assert "truncation.marker\n" in out
    assert out.rstrip().endswith(
        f"1 difference(s) in what is sent: {BUILTIN_FP} vs {profile_fingerprint_of(changed)}"
    )


def profile_fingerprint_of(path: Path) -> str:
    code, out = _invoke("profile", "validate", str(path))
    assert code == 0
    return out.rsplit(" ", 1)[1].strip()


def test_export_of_an_unknown_run_says_what_to_pass(tmp_path: Path) -> None:
    code, out = _invoke("profile", "export", str(tmp_path / "nowhere"), "--runs-root", str(tmp_path))
    assert code == 2 and "Traceback" not in out


@pytest.mark.shared
def test_render_with_the_earlier_profile_uses_its_blocks_and_framing(earlier_harness: Path) -> None:
    path = str(earlier_harness / "earlier-harness.profile.json")
    code, out = _invoke("render", "demo", "--protocols", "default", "--profile", path, "--json")
    assert code == 0
    document = json.loads(out)
    assert document["harness_profile"]["name"] == "earlier-harness"
    prompt = document["prompts"][0]["user_prompt"]
    # The earlier harness frames its budget block first, with its own separator, and ends each block
    # with a newline (its texts are read from the fixture, never copied here).
    blocks = {b["name"]: b for b in json.loads(Path(path).read_text(encoding="utf-8"))["protocols"]["blocks"]}
    budget_start = blocks["budget"]["text"].split("\n", 1)[0]
    reflection_start = blocks["reflection"]["text"].split("\n", 1)[0]
    assert blocks["budget"]["separator"] + budget_start in prompt
    assert prompt.index(budget_start) < prompt.index(reflection_start)
    assert prompt.endswith(blocks["reflection"]["text"] + blocks["reflection"]["terminator"])
    code, plain = _invoke("render", "demo", "--protocols", "default", "--json")
    assert json.loads(plain)["prompts"][0]["user_prompt"] != prompt
