"""Every RUN form, for every command that takes a RUN (``cli/runref.py``): one resolver, one table.

The forms: a run directory, a run id under ``--runs-root``, a unique id prefix, a name given with
``run --name`` (``label.json``), ``demo``, and a bundle for the commands that only read. The table
parses each command line exactly as the CLI does (``make_context``: the RUN is converted, the
command not run), so all 6 × 16 cells stay cheap; the commands are then run end to end on the
forms that need it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.cli.runref import RunRef, resolve_run
from oracleproto.errors import StoreError
from oracleproto.verify.bundle import export_bundle
from oracleproto.verify.demo import find_demo_run

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "cassettes" / "demo" / "20260101-000000-de00"
RUN_ID = DEMO.name
FORMS = ("directory", "id", "prefix", "name", "demo", "bundle")
#: Command (path in the click tree) → its arguments around the RUN ("{}"), and whether it reads bundles.
COMMANDS: dict[tuple[str, ...], tuple[tuple[str, ...], bool]] = {
    ("replay",): (("{}",), False),
    ("verify",): (("{}",), True),
    ("report",): (("{}",), False),
    ("export",): (("{}",), True),
    ("view",): (("{}",), True),
    ("audit", "sample"): (("{}", "--out", "a"), False),
    ("cassettes", "ls"): (("{}",), False),
    ("cassettes", "show"): (("{}", "ab"), False),
    ("cassettes", "stats"): (("{}",), False),
    ("cassettes", "gc"): (("{}",), False),
    ("cache", "rebuild"): (("{}",), False),
    ("bundle", "export"): (("{}", "o.tar.gz"), False),
    ("store", "push"): (("{}",), False),
    ("runs", "show"): (("{}",), False),
}


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A runs root holding a copy of the demo run named 'pilot', and a bundle of it."""
    base = tmp_path_factory.mktemp("runref")
    run = base / "runs" / RUN_ID
    shutil.copytree(DEMO, run)
    (run / "label.json").write_text('{"name": "pilot", "tags": ["demo-copy"]}\n', encoding="utf-8")
    export_bundle(run, base / "run.tar.gz")
    return base


def _form(place: Path, form: str) -> str:
    return {
        "directory": str(place / "runs" / RUN_ID),
        "id": RUN_ID,
        "prefix": "20260101",
        "name": "pilot",
        "demo": "demo",
        "bundle": str(place / "run.tar.gz"),
    }[form]


def _expected(place: Path, form: str) -> Path:
    if form == "demo":
        return find_demo_run()
    if form == "bundle":
        return place / "run.tar.gz"
    return place / "runs" / RUN_ID


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None, path
        command = found
    return command


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("path", list(COMMANDS), ids=[" ".join(p) for p in COMMANDS])
def test_every_command_resolves_every_form(path: tuple[str, ...], form: str, place: Path) -> None:
    args, bundles = COMMANDS[path]
    line = [_form(place, form) if a == "{}" else a for a in args] + ["--runs-root", str(place / "runs")]
    command = _command(path)
    if form == "bundle" and not bundles:
        with pytest.raises(
            StoreError, match=r"run\.tar\.gz: is a file, not a run directory; import a bundle"
        ):
            command.make_context(path[-1], line)
        return
    ctx = command.make_context(path[-1], line)
    (ref,) = [value for value in ctx.params.values() if isinstance(value, RunRef)]
    assert ref.path == _expected(place, form)
    assert ref.kind == {"demo": "demo", "bundle": "bundle"}.get(form, "directory")


def test_the_table_names_every_command_with_a_run_argument() -> None:
    """A new command with a RUN argument must join the table (and so every form is tested on it)."""
    found: set[tuple[str, ...]] = set()

    def walk(command: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(command, click.Group):
            for name in command.list_commands(click.Context(command)):
                sub = command.get_command(click.Context(command), name)
                assert sub is not None
                walk(sub, (*path, name))
        elif any(p.metavar == "RUN" and isinstance(p, click.Argument) for p in command.params):
            found.add(path)

    walk(cli, ())
    assert found == set(COMMANDS)


def test_the_argument_may_come_before_runs_root(place: Path) -> None:
    """--runs-root is eager: a run id before it on the command line is looked up under it."""
    ctx = _command(("export",)).make_context("export", [RUN_ID, "--runs-root", str(place / "runs")])
    assert ctx.params["run"].path == place / "runs" / RUN_ID


def test_runs_root_defaults_to_the_environment(place: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNS_ROOT", str(place / "runs"))
    assert resolve_run("pilot").path == place / "runs" / RUN_ID


def test_a_name_must_match_exactly(place: Path) -> None:
    with pytest.raises(StoreError, match="pilo: run directory not found"):
        resolve_run("pilo", place / "runs")


#: A model the plan can price, for `plan --calibrate` (the plan needs one).
PLAN_ENV = {"MODELS": "sim/careful", "MODEL_TRAINING_CUTOFFS": "sim/careful=2026-01-31"}


def _invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("form", FORMS)
def test_runs_show_end_to_end(form: str, place: Path) -> None:
    code, out, err = _invoke("runs", "show", _form(place, form), "--runs-root", str(place / "runs"), "--json")
    if form == "bundle":
        assert code == 2 and "is a file, not a run directory" in err
        return
    assert code == 0, err
    document = json.loads(out)
    assert document["run_id"] == RUN_ID and document["state"] == "finished"
    assert document["name"] == (None if form == "demo" else "pilot")


@pytest.mark.parametrize("form", FORMS)
def test_export_end_to_end(form: str, place: Path) -> None:
    code, out, err = _invoke(
        "export", _form(place, form), "--runs-root", str(place / "runs"), "--format", "csv"
    )
    assert code == 0, err
    assert len(out.splitlines()) == 1 + 3 * 16 * 3  # a header, then 3 models × 16 questions × 3 samples


@pytest.mark.parametrize("form", ["id", "prefix", "name", "demo"])
def test_cassettes_stats_and_profile_end_to_end(form: str, place: Path) -> None:
    root = str(place / "runs")
    code, out, err = _invoke("cassettes", "stats", _form(place, form), "--runs-root", root, "--json")
    assert code == 0, err
    assert json.loads(out)["kind"] == "cassettes-stats"
    code, out, err = _invoke("profile", "show", _form(place, form), "--runs-root", root)
    assert code == 0, err
    plan = ("plan", "--calibrate", _form(place, form), "--runs-root", root, "--json")
    code, out, err = _invoke(*plan, env=PLAN_ENV)
    assert code == 0, err
    assert json.loads(out)["calibration"]["run_id"] == RUN_ID


def test_replay_by_id_prefix(place: Path) -> None:
    code, out, err = _invoke("replay", "20260101", "--runs-root", str(place / "runs"), "--no-progress")
    assert code == 0, err
    # The name and tags given at `run` time are shown where the run is named.
    assert f"replay of {place / 'runs' / RUN_ID} (pilot [demo-copy]) reproduced byte for byte" in out


def test_the_viewer_shows_the_runs_name_and_tags(place: Path) -> None:
    from oracleproto.view.document import build_document

    assert build_document(place / "runs" / RUN_ID)["facts"]["label"] == "pilot [demo-copy]"
    assert build_document(find_demo_run())["facts"]["label"] is None


def test_verify_by_name_and_bundle(place: Path) -> None:
    for ref in ("pilot", str(place / "run.tar.gz")):
        code, out, err = _invoke("verify", ref, "--runs-root", str(place / "runs"), "--quiet")
        assert code == 0, err
        assert out.splitlines()[-1].startswith("VERIFIED")


def test_audit_sample_and_view_of_the_demo(tmp_path: Path) -> None:
    code, _, err = _invoke("audit", "sample", "demo", "--out", str(tmp_path / "a"))
    assert code == 0, err
    assert (tmp_path / "a" / "audit.jsonl").is_file()
    code, _, err = _invoke("view", "demo", "--out", str(tmp_path / "v.html"), "--quiet")
    assert code == 0, err
    assert (tmp_path / "v.html").is_file()


def test_leaderboard_and_bundle_export_by_name(place: Path, tmp_path: Path) -> None:
    root = str(place / "runs")
    code, _, err = _invoke(
        "leaderboard", "pilot", "--runs-root", root, "--out", str(tmp_path / "b"), "--quiet"
    )
    assert code == 0, err
    code, _, err = _invoke("bundle", "export", "pilot", str(tmp_path / "o.tar.gz"), "--runs-root", root)
    assert code == 0, err
    assert (tmp_path / "o.tar.gz").is_file()


def test_completion_offers_demo_and_the_run_ids(place: Path) -> None:
    command = _command(("replay",))
    ctx = click.Context(command)
    ctx.params["runs_root"] = place / "runs"
    (argument,) = [p for p in command.params if isinstance(p, click.Argument)]
    assert [c.value for c in argument.type.shell_complete(ctx, argument, "")] == ["demo", RUN_ID]
    assert [c.value for c in argument.type.shell_complete(ctx, argument, "2026")] == [RUN_ID]
    assert [(c.value, c.type) for c in argument.type.shell_complete(ctx, argument, "./r")] == [
        ("./r", "file")
    ]
