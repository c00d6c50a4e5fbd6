"""``oracleproto render``: text and JSON output, filters, budget options, and every input error."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.dataset.demo import demo_db_path
from oracleproto.dataset.loader import load_questions, load_templates
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.prompts import RuntimeProtocols, load_protocol_file, prompt_templates_hash, render_prompt

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


@pytest.fixture(autouse=True)
def _no_react_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The default budget comes from the environment and ./.env; isolate both.
    monkeypatch.delenv("REACT_MAX_STEPS", raising=False)
    monkeypatch.delenv("REACT_MAX_SEARCH_CALLS", raising=False)
    monkeypatch.chdir(tmp_path)


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["render", *args])
    return result.exit_code, result.stdout, result.stderr


def test_shared_db_prints_all_80_prompts(shared_db: Path) -> None:
    code, out, err = _run(str(shared_db))
    assert code == 0, err
    questions = load_questions(shared_db)
    templates = load_templates(shared_db)
    assert out.count("\n=== ") + out.startswith("=== ") == 80
    for question in questions:
        assert f"=== {question.id} · " in out
        assert render_prompt(question, templates) in out
    assert err.startswith("80 prompt(s); prompt_templates_hash=" + prompt_templates_hash(templates))


def test_shared_db_json_matches_render_prompt(shared_db: Path) -> None:
    code, out, _ = _run(
        str(shared_db), "--json", "--protocols", "default", "--max-steps", "12", "--max-searches", "8"
    )
    assert code == 0
    document = json.loads(out)
    assert document["count"] == 80
    templates = load_templates(shared_db)
    protocols = RuntimeProtocols.default(12, 8)
    by_id = {q.id: q for q in load_questions(shared_db)}
    assert [p["id"] for p in document["prompts"]] == list(by_id)
    for entry in document["prompts"]:
        expected = render_prompt(by_id[entry["id"]], templates, protocols=protocols)
        assert entry["user_prompt"] == expected
        assert entry["user_prompt_sha256"] == sha256_hex(expected)
    assert document["protocols"] == {
        "reflection": True,
        "belief": False,
        "budget_footer": True,
        "max_steps": 12,
        "max_search_calls": 8,
        **protocols.fingerprints(),
        "order": ["reflection", "budget"],
        "separator": "\n\n",
        "suffix": "",
        "protocols_file_hash": None,
    }


def test_demo_keyword_renders_the_bundled_dataset() -> None:
    code, out, _ = _run("demo", "--json")
    assert code == 0
    document = json.loads(out)
    assert document["db"] == "demo"
    assert document["count"] == len(load_questions(demo_db_path())) >= 12
    assert document["protocols"]["reflection_protocol_hash"] is None


def test_id_filter_keeps_dataset_order() -> None:
    ids = [q.id for q in load_questions(demo_db_path())]
    code, out, _ = _run("demo", "--json", "--id", ids[3], "--id", ids[1], "--id", ids[3])
    assert code == 0
    assert [p["id"] for p in json.loads(out)["prompts"]] == [ids[1], ids[3]]


def test_unknown_ids_are_all_reported_and_nothing_is_printed() -> None:
    code, out, err = _run("demo", "--id", "nope-1", "--id", "nope-2")
    assert code == 2
    assert out == ""
    assert "unknown question id(s): 'nope-1', 'nope-2'" in err


def test_default_budget_comes_from_react_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = _run("demo", "--protocols", "all")
    assert code == 0
    assert "at most 6 message rounds in total and at most 4 web_search calls" in out
    assert "<belief>" in out
    monkeypatch.setenv("REACT_MAX_STEPS", "12")
    code, out, _ = _run("demo", "--protocols", "default", "--max-searches", "8")
    assert code == 0
    assert "at most 12 message rounds in total and at most 8 web_search calls" in out
    assert "<belief>" not in out


@pytest.mark.parametrize("name", ["protocols-budget-first.json", "protocols-minimal.toml"])
def test_a_protocols_file_renders_its_blocks_in_its_order(name: str) -> None:
    example = EXAMPLES / name
    code, out, err = _run("demo", "--json", "--protocols", f"file:{example}", "--max-steps", "9")
    assert code == 0, err
    document = json.loads(out)
    layout = load_protocol_file(example)
    protocols = RuntimeProtocols.from_layout(layout, 9, 4)
    by_id = {q.id: q for q in load_questions(demo_db_path())}
    templates = load_templates(demo_db_path())
    for entry in document["prompts"]:
        assert entry["user_prompt"] == render_prompt(by_id[entry["id"]], templates, protocols=protocols)
        assert entry["user_prompt"].endswith(layout.suffix)
    shown = document["protocols"]
    assert shown["order"] == list(layout.names)
    assert (shown["separator"], shown["suffix"]) == (layout.separator, layout.suffix)
    assert shown["protocols_file_hash"] == layout.fingerprint()
    assert (shown["max_steps"], shown["max_search_calls"]) == (9, 4)
    code, out, err = _run("demo", "--protocols", f"file:{example}")
    assert code == 0
    assert f"protocols=file:{example} (" in err
    # T defaults to REACT_MAX_STEPS (6) in the text output.
    assert (RuntimeProtocols.from_layout(layout, 6, 4).budget_footer_text or "-") in out


def test_no_protocols_prints_bare_templates() -> None:
    code, out, _ = _run("demo")
    assert code == 0
    assert "Budget:" not in out
    assert "six stages" not in out


def test_missing_db_is_a_clear_error(tmp_path: Path) -> None:
    code, out, err = _run(str(tmp_path / "absent.db"))
    assert code == 2
    assert out == ""
    assert "absent.db" in err
    assert "no such file" in err


def test_db_without_templates_renders_with_the_default_templates(tmp_path: Path) -> None:
    # Other OracleProto versions' DBs load as they are (issue 15): no dataset_metadata → defaults.
    db = tmp_path / "bare.db"
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TABLE questions (id, choice_type, question_type, event, options, answer, end_time)"
        )
        conn.execute(
            "INSERT INTO questions VALUES (?, ?, ?, ?, ?, ?, ?)",
            ("q1", "single", "yes_no", "e", '["Yes", "No"]', "A", "2030-01-01"),
        )
    conn.close()
    code, out, err = _run(str(db))
    assert code == 0, err
    assert 'Forecast the outcome of this event: "e"' in out


def test_unknown_table_is_a_clear_error(shared_db: Path) -> None:
    code, out, err = _run(str(shared_db), "--table", "no_such_table")
    assert code == 2
    assert out == ""
    assert "no_such_table" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--protocols", "some"], "'some' is not one of 'none', 'default', 'all'"),
        (["--max-steps", "0"], "0 is not in the range x>=1"),
        (["--max-searches", "-1"], "-1 is not in the range x>=0"),
    ],
)
def test_bad_options_exit_2(args: list[str], message: str) -> None:
    code, out, err = _run("demo", *args)
    assert code == 2
    assert out == ""
    assert message in err


def test_invalid_react_env_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REACT_MAX_STEPS", "zero")
    code, out, err = _run("demo", "--protocols", "default")
    assert code == 2
    assert out == ""
    assert "invalid ReAct settings" in err


@pytest.mark.parametrize("as_json", [False, True])
def test_an_option_label_with_a_lone_surrogate_renders(tmp_path: Path, as_json: bool) -> None:
    """A JSON escape in the source DB can carry a lone surrogate, which no terminal can write."""
    db = tmp_path / "hostile.db"
    db.write_bytes(demo_db_path().read_bytes())
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE questions SET options = ? WHERE id = 'demo-09'", ('["A\\ud800", "B", "C", "D"]',)
        )
    code, out, err = _run(str(db), "--id", "demo-09", *(["--json"] if as_json else []))
    assert code == 0, err
    if as_json:
        prompt = json.loads(out)["prompts"][0]["user_prompt"]
        assert "\nA. A\ud800\n" in prompt
    else:
        assert "\nA. A\ufffd\n" in out
