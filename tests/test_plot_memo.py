"""The suite's per-worker plot memo draws once per distinct input and writes the same bytes again."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from tests.plot_memo import PlotMemo


@dataclass(frozen=True)
class _Convention:
    value: str = "oracleproto"


@dataclass(frozen=True)
class _Result:
    convention: _Convention = _Convention()
    models: dict[str, Any] = field(default_factory=lambda: {"m/a": {"exam_avg": {"yes_no": 0.5}}})
    model_order: tuple[str, ...] = ("m/a",)
    display_names: dict[str, str] = field(default_factory=dict)
    run_id: str = "20260101-000000-abcd"


class _Drawer:
    """Writes one file whose bytes name the call, so a drawing and a memo hit can be told apart."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, result: Any, out: Path) -> list[Path]:
        self.calls += 1
        path = out / "buckets.png"
        path.write_bytes(f"drawing {self.calls} of {result.model_order}".encode())
        return [path]


def test_the_same_input_is_drawn_once_and_its_bytes_written_again(tmp_path: Path) -> None:
    drawer = _Drawer()
    memo = PlotMemo(drawer)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = memo(_Result(), tmp_path / "a")
    # Another run id is not drawn: the plots do not show it.
    second = memo(_Result(run_id="20260202-000000-ef01"), tmp_path / "b")
    assert drawer.calls == 1
    assert [p.name for p in second] == [p.name for p in first] == ["buckets.png"]
    assert second[0] == tmp_path / "b" / "buckets.png"
    assert second[0].read_bytes() == first[0].read_bytes() == b"drawing 1 of ('m/a',)"


@pytest.mark.parametrize(
    "changed",
    [
        {"convention": _Convention("paper")},
        {"models": {"m/a": {"exam_avg": {"yes_no": 0.25}}}},
        {"model_order": ("m/a", "m/b")},
        {"display_names": {"m/a": "Model A"}},
    ],
    ids=["convention", "models", "model_order", "display_names"],
)
def test_every_field_the_plots_read_is_part_of_the_key(tmp_path: Path, changed: dict[str, Any]) -> None:
    drawer = _Drawer()
    memo = PlotMemo(drawer)
    memo(_Result(), tmp_path)
    memo(replace(_Result(), **changed), tmp_path)
    assert drawer.calls == 2


def test_matplotlibs_settings_are_part_of_the_key(tmp_path: Path) -> None:
    import matplotlib

    drawer = _Drawer()
    memo = PlotMemo(drawer)
    memo(_Result(), tmp_path)
    with matplotlib.rc_context({"lines.linewidth": 7.0}):
        memo(_Result(), tmp_path)
    assert drawer.calls == 2


def test_a_disabled_memo_draws_every_time(tmp_path: Path) -> None:
    drawer = _Drawer()
    memo = PlotMemo(drawer)
    memo.enabled = False
    memo(_Result(), tmp_path)
    memo(_Result(), tmp_path)
    assert drawer.calls == 2
