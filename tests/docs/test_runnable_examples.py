"""Every shell example marked runnable in README.md and docs/ runs, offline, and prints what it shows.

The marker convention and the masks are in ``tests/docs/runnable.py``. Each block is its own test
(``README.md:<line>``), in a new empty folder, through the installed console script.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.runnable import Block, difference, markdown_files, mask, matches, parse

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
#: A closed port: a command that tried to reach the network through HTTP(S) would fail at once.
_NO_NETWORK = "http://127.0.0.1:9"


def _collect() -> tuple[list[Block], list[str]]:
    blocks: list[Block] = []
    problems: list[str] = []
    for path in markdown_files(ROOT):
        found, wrong = parse(path.read_text(encoding="utf-8"), path.relative_to(ROOT))
        blocks.extend(found)
        problems.extend(f"{p.source}:{p.line}: {p.message}" for p in wrong)
    return blocks, problems


BLOCKS, PROBLEMS = _collect()


def _environment(tmp: Path) -> dict[str, str]:
    """A clean environment: no setting from the machine, home and caches inside ``tmp``."""
    home = tmp / ".home"
    env = {
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".state"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "COLUMNS": "200",
        "PYTHONUNBUFFERED": "1",  # stdout and stderr interleave as on a terminal
        "HTTP_PROXY": _NO_NETWORK,
        "HTTPS_PROXY": _NO_NETWORK,
        "ALL_PROXY": _NO_NETWORK,
        "NO_PROXY": "127.0.0.1,localhost,::1",
    }
    env.update({name.lower(): value for name, value in env.items() if name.endswith("_PROXY")})
    return env


def test_the_documents_have_runnable_examples_and_every_marker_binds() -> None:
    assert not PROBLEMS, "\n".join(PROBLEMS)
    readme = [block for block in BLOCKS if block.source == Path("README.md")]
    assert len(readme) >= 4, [block.id for block in BLOCKS]
    assert any(block.source.parts[0] == "docs" for block in BLOCKS)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("block", BLOCKS, ids=[block.id for block in BLOCKS])
def test_runnable_example(block: Block, tmp_path: Path) -> None:
    assert (BIN / "oracleproto").is_file(), f"no console script in {BIN}: install the package"
    work = tmp_path / "work"
    work.mkdir()
    for name, text in block.files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text, encoding="utf-8")
    env = _environment(tmp_path)
    for number, command in enumerate(block.commands, start=1):
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command.text],
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=540,
            check=False,
        )
        expected = block.exit_status if number == len(block.commands) else 0
        where = f"{block.id}, `{command.text}`"
        assert done.returncode == expected, f"{where}: exit {done.returncode}, not {expected}\n{done.stdout}"
        if command.shown:
            shown = mask("\n".join(command.shown), tmp="", repo="")
            actual = mask(done.stdout, tmp=str(work), repo=str(ROOT))
            assert matches(shown, actual), f"{where}: output differs\n{difference(shown, actual)}"


# The parser, masks and matcher themselves: a runnable test that could not fail would be a defect.

DOC = """\
intro
<!-- file: oracleproto.toml -->
```toml
[llm]
models = ["sim/careful"]
```

<!-- runnable -->
```console
$ oracleproto plan \\
    --limit 2
plan: 2 questions …
…
total …

$ true
```

<!-- runnable exit=2 -->
```console
$ oracleproto plan --models nope
```

<!-- runnable -->
```bash
$ echo wrong fence
```

<!-- runnable -->
no fence here

````markdown
<!-- runnable -->
```console
$ echo inside another block: text, not an example
```
````
"""


def test_parse_binds_markers_files_commands_and_exit_statuses() -> None:
    blocks, problems = parse(DOC, Path("x.md"))
    assert [(b.line, len(b.commands), b.exit_status) for b in blocks] == [(9, 2, 0), (20, 1, 2)]
    first = blocks[0]
    assert first.files == {"oracleproto.toml": '[llm]\nmodels = ["sim/careful"]\n'}
    assert first.commands[0].text == "oracleproto plan  --limit 2"
    assert first.commands[0].shown == ["plan: 2 questions …", "…", "total …", ""]
    assert first.commands[1].shown == []
    assert [(p.line, p.message) for p in problems] == [
        (24, "a runnable block must be a ```console block"),
        (29, "the marker is not followed by a fenced block"),
    ]


def test_masks_hide_paths_run_ids_times_and_durations(tmp_path: Path) -> None:
    tmp, repo = str(tmp_path / "x"), str(tmp_path / "repo")
    text = f"wrote {tmp}/run/20260101-000000-de00 at 2026-11-27T06:24:31Z in 1.5 s  \n\n"
    assert mask(text, tmp=tmp, repo=repo) == "wrote <TMP>/run/<RUN-ID> at <TIME> in <DURATION>"
    assert mask(f"{repo}/cassettes/demo", tmp=tmp, repo=repo) == "<REPO>/cassettes/demo"
    assert mask("20261127-064248-d82c  2026-11-27 06:42  x", tmp="", repo="") == "<RUN-ID>  <TIME>  x"


@pytest.mark.parametrize(
    ("shown", "actual", "expected"),
    [
        ("a\nb", "a\nb", True),
        ("a\nb", "a\nc", False),
        ("a\nb", "a\nb\nc", False),  # an extra line is a difference
        ("a\n…", "a\nb\nc", True),
        ("a\n…\nd", "a\nd", True),
        ("a\n…\nd", "a\nb\nc", False),
        ("VERIFIED: … (60 passed)", "VERIFIED: <REPO>/x (60 passed)", True),
        ("VERIFIED: … (60 passed)", "VERIFIED: <REPO>/x (59 passed)", False),
        ("x.y", "xzy", False),  # shown text is literal, not a pattern
        ("", "", True),
    ],
)
def test_matcher(shown: str, actual: str, expected: bool) -> None:
    assert matches(shown, actual) is expected
