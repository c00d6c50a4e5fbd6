"""One resolver for the RUN argument of every command that takes one, and the ``--runs-root`` option.

A RUN is, tried in this order:

1. ``demo``: the bundled demo run (the source checkout's, else the installed package's copy);
2. an existing path: a run directory, or — for commands that only read it — a bundle ``.tar.gz``
   (and, for ``cassettes``/``cache``, a bare cassette folder);
3. under the runs root (``--runs-root``, else ``$RUNS_ROOT``, else ``./runs``): a run id, a unique
   prefix of one (``20260301`` or ``20260301-1200``), or the name given with ``run --name``.

Every failure is a :class:`StoreError`, printed by the top-level handler as ``error: …`` like every
other message, and names what was tried and how to list the runs (``oracleproto runs list``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import click
from click.shell_completion import CompletionItem

from oracleproto.errors import StoreError
from oracleproto.store.label import read_label
from oracleproto.store.naming import RUN_ID_RE
from oracleproto.store.rundir import RunDir

F = TypeVar("F", bound=Callable[..., Any])

DEMO = "demo"
#: The forms a RUN argument takes, for help texts and messages.
RUN_FORMS = (
    "a run directory, a run id (or a unique prefix of one) under --runs-root, a name given with "
    "`run --name`, or 'demo'"
)
RUNS_ROOT_HELP = (
    "Folder holding the run directories, where a run id, id prefix or name is looked up "
    "(default: $RUNS_ROOT, else ./runs)."
)
#: Shown under the options of every command whose argument is a RUN.
RUN_EPILOG = f"RUN: {RUN_FORMS}."
RUN_OR_BUNDLE_EPILOG = f"RUN: {RUN_FORMS}; or a bundle .tar.gz (`bundle export`)."

Kind = Literal["directory", "bundle", "demo", "cassettes", "store"]


@dataclass(frozen=True)
class RunRef:
    """What a RUN argument named: the path to read and how it was found."""

    #: The argument as typed.
    text: str
    #: The run directory, the bundle file, or a bare cassette folder.
    path: Path
    #: ``directory`` (a run directory the user owns), ``demo`` (the published demo: read it, never
    #: write it), ``bundle``, ``cassettes`` (a folder of cassettes only), ``store`` (``--from-store``:
    #: the text is a store reference, resolved by the store client).
    kind: Kind

    @property
    def read_only(self) -> bool:
        """True for what a command must not write into: the demo, a bundle, a store reference."""
        return self.kind in ("demo", "bundle", "store")


def label_suffix(path: Path) -> str:
    """`` (name [tags])`` of the run at ``path`` (``run --name/--tag``), or nothing."""
    label = read_label(path) if path.is_dir() else None
    return f" ({label.text()})" if label is not None and not label.empty else ""


def default_runs_root() -> Path:
    """``$RUNS_ROOT`` (the environment; ``run`` also reads ``.env`` and the config file), else ``runs``."""
    from oracleproto.settings.model import load_settings

    return load_settings(None).run.runs_root


def _run_dirs(root: Path) -> list[Path]:
    """The folders under ``root`` named like run ids, sorted (oldest first)."""
    try:
        return sorted(p for p in root.iterdir() if RUN_ID_RE.fullmatch(p.name) and p.is_dir())
    except OSError:
        return []


def _shown(paths: list[Path], limit: int = 5) -> str:
    names = [p.name for p in paths[:limit]]
    return ", ".join(names) + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def _not_found(text: str, root: Path, *, bundles: bool) -> StoreError:
    bundle = ", a bundle .tar.gz" if bundles else ""
    return StoreError(
        f"{text}: run directory not found (no such folder, and no run id, id prefix or run name under "
        f"{root}); give a run directory{bundle}, a run id or name (`oracleproto runs list --runs-root "
        f"{root}` lists them), or 'demo'"
    )


def _under_root(text: str, root: Path, *, bundles: bool) -> Path:
    """A run id, a unique id prefix or a run name under ``root``."""
    if RUN_ID_RE.fullmatch(text):
        if not (root / text).is_dir():
            raise _not_found(text, root, bundles=bundles)
        return RunDir.open(root / text).root
    if "/" in text or "\\" in text or not text:
        raise _not_found(text, root, bundles=bundles)
    runs = _run_dirs(root)
    found = [p for p in runs if p.name.startswith(text)]
    if not found:
        found = [p for p in runs if read_label(p).name == text]
    if len(found) > 1:
        raise StoreError(
            f"{text}: names {len(found)} runs under {root} ({_shown(found)}); give more of the run id"
        )
    if not found:
        raise _not_found(text, root, bundles=bundles)
    return RunDir.open(found[0]).root


def resolve_run(
    text: str, runs_root: Path | None = None, *, bundles: bool = False, cassettes: bool = False
) -> RunRef:
    """The run (or bundle, or cassette folder) ``text`` names; see the module docstring for the order."""
    if text == DEMO:
        from oracleproto.verify.demo import find_demo_run  # the demo's code only when it is asked for

        return RunRef(text, find_demo_run(), "demo")
    path = Path(text)
    if path.is_dir():
        if cassettes:
            try:
                return RunRef(text, RunDir.open(path).root, "directory")
            except StoreError:
                return RunRef(text, path, "cassettes")  # a cassette folder, or a run copied under a new name
        return RunRef(text, RunDir.open(path).root, "directory")
    if path.exists():
        if bundles and path.is_file():
            return RunRef(text, path, "bundle")
        what = "is a file" if path.is_file() else "is not a directory"
        hint = "; import a bundle first with `oracleproto bundle import`" if path.is_file() else ""
        raise StoreError(f"{text}: {what}, not a run directory{hint}")
    root = runs_root if runs_root is not None else default_runs_root()
    return RunRef(text, _under_root(text, root, bundles=bundles), "directory")


class RunArgument(click.ParamType[RunRef]):
    """A RUN argument: converted by :func:`resolve_run` (with the command's ``--runs-root``).

    ``--runs-root`` and ``--from-store`` are eager options, so they are known here whatever their
    place on the command line; with ``--from-store`` the text is left to the store client.
    """

    name = "run"

    def __init__(self, *, bundles: bool = False, cassettes: bool = False) -> None:
        self.bundles = bundles
        self.cassettes = cassettes

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> RunRef:
        """Resolve ``value``; errors are the resolver's (``error: …``), not click's."""
        if isinstance(value, RunRef):
            return value
        params = ctx.params if ctx is not None else {}
        if params.get("from_store") is not None:
            return RunRef(str(value), Path(str(value)), "store")
        return resolve_run(
            str(value), params.get("runs_root"), bundles=self.bundles, cassettes=self.cassettes
        )

    def shell_complete(
        self, ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        """Run ids under the runs root and ``demo``; paths otherwise."""
        try:
            root = ctx.params.get("runs_root") or default_runs_root()
        except Exception:  # completion must never fail on bad settings
            root = Path("runs")
        names = [DEMO, *(p.name for p in _run_dirs(root))]
        items = [CompletionItem(n) for n in names if n.startswith(incomplete)]
        return items or [CompletionItem(incomplete, type="file")]


def runs_root_option(func: F) -> F:
    """``--runs-root DIR``: eager, so a RUN argument before it on the command line still sees it."""
    return click.option(
        "--runs-root",
        type=click.Path(path_type=Path, file_okay=False),
        default=None,
        is_eager=True,
        help=RUNS_ROOT_HELP,
    )(func)


def run_argument(name: str = "run", *, bundles: bool = False, cassettes: bool = False) -> Callable[[F], F]:
    """The RUN argument (metavar RUN) resolved by :class:`RunArgument`."""
    return click.argument(name, metavar="RUN", type=RunArgument(bundles=bundles, cassettes=cassettes))
