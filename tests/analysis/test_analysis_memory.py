"""The analysis pass holds little (issue 18): retried calls only, one render buffer at a time."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.analysis import call_failures as cf
from oracleproto.analysis.cassette_scan import Call, scan
from oracleproto.analysis.heap import release_heap
from oracleproto.transport.fileio import _Dumper


def _reference(cassettes: Path, keys: set[str] | None, slug: str) -> dict[str, Any]:
    """The counts as computed before: every call held whole, then counted."""
    calls: dict[str, Call] = {}
    for path in sorted(cassettes.rglob("*.yaml")):
        for call in scan(path):
            held = calls.get(call.key)
            if held is None or int(call.generation) >= int(held.generation):
                calls[call.key] = call
    retries: Counter[str] = Counter()
    waited = dict.fromkeys(cf.CHANNELS, 0.0)
    failed: dict[str, Counter[str]] = {c: Counter() for c in cf.CHANNELS}
    for key, call in calls.items():
        used = key in keys if keys is not None else call.model == slug
        if not used or call.channel not in cf.CHANNELS:
            continue
        retries[call.channel] += max(0, len(call.attempts) - 1)
        waited[call.channel] += cf._waited_s(call.attempts)
        for attempt in call.attempts[:-1]:
            failed[call.channel][cf._failed_as(attempt)] += 1
    return {
        "retries": {c: retries[c] for c in cf.CHANNELS},
        "wait_s": {c: round(waited[c], 3) for c in cf.CHANNELS},
        "retried_on": {c: dict(sorted(failed[c].items())) for c in cf.CHANNELS},
    }


_ATTEMPT = st.fixed_dictionaries(
    {
        "exception": st.sampled_from([None, "ReadTimeout"]),
        "latency_ms": st.integers(0, 3000),
        "recorded_at": st.integers(0, 50).map(lambda s: f"2026-01-01T00:00:{s:02d}+00:00"),
        "status": st.sampled_from([None, 200, 429, 500]),
    }
)
_CALL = st.fixed_dictionaries(
    {
        "attempts": st.lists(_ATTEMPT, max_size=3),
        "channel": st.sampled_from(["llm", "search", "detector"]),
        "context": st.fixed_dictionaries({"model": st.sampled_from(["m/a", "m/b"])}),
        "generation": st.integers(0, 2),
        "key": st.sampled_from([f"{i:064x}" for i in range(1, 6)]),
    }
)


def _write(path: Path, calls: list[dict[str, Any]]) -> None:
    items = [
        {"oracleproto": {**c, "attempts": [{"attempt": i, **a} for i, a in enumerate(c["attempts"])]}}
        for c in calls
    ]
    path.write_text(yaml.dump({"interactions": items, "version": 1}, Dumper=_Dumper, sort_keys=True), "utf-8")


@settings(max_examples=80, deadline=None)
@given(
    st.lists(_CALL, max_size=6),
    st.lists(_CALL, max_size=6),
    st.none() | st.sets(st.sampled_from([f"{i:064x}" for i in range(1, 6)])),
    st.sampled_from(["m/a", "m/b"]),
)
def test_holding_only_retried_calls_counts_the_same(
    first: list[dict[str, Any]], second: list[dict[str, Any]], keys: set[str] | None, slug: str
) -> None:
    """A later generation of a key replaces a retried call exactly as when every call was held."""

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "llm").mkdir()
        _write(root / "detector.yaml", first)
        _write(root / "llm" / "m.yaml", second)
        calls = cf.recorded_calls(root)
        assert all(isinstance(c, Call) and len(c.attempts) > 1 for c in calls.values() if isinstance(c, Call))
        retried = {key for key, call in calls.items() if isinstance(call, Call)}
        wanted = None if keys is None else keys & retried
        assert cf._retries(calls, wanted, slug) == _reference(root, keys, slug)


def test_each_plot_frees_its_render_buffer(monkeypatch: Any, tmp_path: Path) -> None:
    """The Agg renderer (a 300 dpi RGBA buffer) is dropped as soon as a plot's files are written."""
    import matplotlib.pyplot as plt

    from oracleproto.analysis import plots

    canvases: list[Any] = []
    saved = plots._save

    def spy(fig: Any, out: Path, stem: str) -> list[Path]:
        canvases.append(fig.canvas)
        return saved(fig, out, stem)

    monkeypatch.setattr(plots, "_save", spy)
    fig, ax = plt.subplots(figsize=(2, 1))
    ax.plot([0, 1], [0, 1])
    plots._save(fig, tmp_path, "p")
    assert (tmp_path / "p.png").stat().st_size > 0
    assert canvases and all("renderer" not in vars(c) for c in canvases)


def test_releasing_the_heap_is_harmless() -> None:
    """``release_heap`` works on glibc and is a no-op elsewhere; memory stays usable after it."""
    assert isinstance(release_heap(), bool)
    assert len(bytearray(4 << 20)) == 4 << 20
