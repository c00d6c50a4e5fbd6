"""The committed demo board (docs/examples/leaderboard/, linked from the README) is what the command writes.

Compared byte for byte, with two exceptions that say nothing about the board: the version in the
``generator`` field (a release would otherwise outdate the example), and the viewer page's packed
parts, compared unpacked (gzip's bytes are zlib's choice, not ours; what they hold is compared).
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from oracleproto.cli.main import cli
from tests.view.test_page import embedded

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "leaderboard"
COMMAND = "oracleproto leaderboard demo --out docs/examples/leaderboard"
STALE = f"docs/examples/leaderboard is not what the command writes now: regenerate it with `{COMMAND}`"
_GENERATOR = re.compile(r'"generator":"oracleproto [^"\\]*"')
_DATA = re.compile(r'(<script id="oracleproto-data" type="application/json">)(.*?)(</script>)', re.S)


def _masked(text: str) -> str:
    return _GENERATOR.sub('"generator":"oracleproto <version>"', text)


def _unpacked(document: dict[str, Any]) -> dict[str, Any]:
    def unpack(b64: str) -> Any:
        return json.loads(gzip.decompress(base64.b64decode(b64)))

    out = dict(document)
    packed = out.pop("packed")
    out["recording"] = unpack(packed["recording"])
    out["models"] = [{**m, "packed": unpack(packed["models"][m["slug"]])} for m in out["models"]]
    out["generator"] = "<version>"
    return out


def test_the_committed_demo_board_is_current(tmp_path: Path) -> None:
    out = tmp_path / "board"
    result = CliRunner().invoke(cli, ["leaderboard", "demo", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    assert sorted(p.name for p in EXAMPLE.iterdir()) == names, STALE
    for name in names:
        fresh, committed = ((d / name).read_text(encoding="utf-8") for d in (out, EXAMPLE))
        if name.startswith("oracleproto-view-"):
            assert _DATA.sub("", fresh) == _DATA.sub("", committed), f"{name}: {STALE}"
            assert _unpacked(embedded(fresh)) == _unpacked(embedded(committed)), f"{name}: {STALE}"
        else:
            assert _masked(fresh) == _masked(committed), f"{name}: {STALE}"


def test_the_readme_links_the_committed_board() -> None:
    readme = (EXAMPLE.parents[2] / "README.md").read_text(encoding="utf-8")
    assert "(docs/examples/leaderboard/leaderboard.html)" in readme
    assert COMMAND in readme
    # Its rows link to the viewer page beside it.
    board = embedded((EXAMPLE / "leaderboard.html").read_text(encoding="utf-8"))
    for model in board["models"]:
        assert (EXAMPLE / model["viewer"].split("#", 1)[0]).is_file()
