"""Which entries a side of an audit diff holds: one generation of a cassette directory.

Every refresh generation is complete (it holds each entry the refreshed run used, carried
over or re-recorded), and generation 0 is the original recording, so a single generation is
the right unit to compare — overlaying generations would resurrect entries a refresh no
longer uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from oracleproto.errors import TransportError
from oracleproto.transport.entry import Entry
from oracleproto.transport.layout import list_generations, resolve_cassette_dir
from oracleproto.transport.store import CassetteStore


@dataclass(frozen=True)
class CassetteView:
    """The entries of one generation, with a stable label for reports."""

    label: str
    root: Path
    generation: int
    entries: tuple[Entry, ...]
    #: The run directory holding these cassettes, when there is one (for DB-level roll-ups).
    run_dir: Path | None


def split_ref(ref: str) -> tuple[Path, int | None]:
    """``PATH`` or ``PATH@GEN`` → (path, generation or None for the latest)."""
    path, sep, gen = ref.rpartition("@")
    if sep and gen.isdigit() and path:
        return Path(path), int(gen)
    return Path(ref), None


def load_view(path: Path, generation: int | None = None) -> CassetteView:
    """Load one generation (default: the latest) of a run directory or cassette directory."""
    if not path.is_dir():
        base, sep, _ = str(path).rpartition("@")
        hint = (
            "; a generation is written PATH@N with N a number (e.g. @0)"
            if sep and Path(base).is_dir()
            else ""
        )
        raise TransportError(f"{path}: no such directory; pass a run directory or a cassette directory{hint}")
    root = resolve_cassette_dir(path)
    gens = list_generations(root)
    chosen = gens[-1] if generation is None else generation
    if chosen not in gens:
        raise TransportError(
            f"{path}: generation {chosen} does not exist (present: {', '.join(map(str, gens))}); "
            "write PATH@GEN with one of them"
        )
    by_gen = CassetteStore(root, writable=False).entries_by_generation()
    entries = tuple(sorted(by_gen.get(chosen, []), key=lambda e: e.key))
    if not entries:
        raise TransportError(f"{path}: generation {chosen} holds no cassette entries (nothing to compare)")
    run_dir = root.parent if root != path or (root.parent / "manifest.json").is_file() else None
    if run_dir is not None and not (run_dir / "manifest.json").is_file():
        run_dir = None
    name = run_dir.name if run_dir is not None else root.name
    return CassetteView(f"{name}@g{chosen}", root, chosen, entries, run_dir)


def previous_generation(view: CassetteView) -> CassetteView:
    """The generation before ``view`` in the same cassette directory (for ``diff RUN RUN``)."""
    gens = [g for g in list_generations(view.root) if g < view.generation]
    if not gens:
        raise TransportError(
            f"{view.label}: there is no earlier generation to compare with; give two runs, or PATH@GEN"
        )
    return load_view(view.run_dir or view.root, gens[-1])
