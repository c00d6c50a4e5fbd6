"""``oracleproto cassettes ls|show|stats|gc`` and ``oracleproto cache rebuild``."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import click

from oracleproto.cli.lazy_group import LazyGroup
from oracleproto.cli.runref import RUN_FORMS, RunRef, run_argument, runs_root_option
from oracleproto.errors import TransportError
from oracleproto.primitives.oserrors import cannot_write
from oracleproto.store import RunDir
from oracleproto.store.manifest import MANIFEST_NAME
from oracleproto.store.naming import RUN_ID_RE
from oracleproto.store.sample_entries import read_sample_keys
from oracleproto.transport.diff import stored_request
from oracleproto.transport.layout import JOURNAL_DIR, resolve_cassette_dir
from oracleproto.transport.stats import cassette_stats, savings_text
from oracleproto.transport.store import CassetteStore, has_leftover_journal, rebuild_index
from oracleproto.verify.attest import ATTESTATION_NAME
from oracleproto.verify.gc import apply_gc, plan_gc

#: The epilog of the commands that take a run or a bare cassette folder.
_EPILOG = f"RUN: {RUN_FORMS}; or a folder of cassettes."


def _samples_from_manifest(path: Path) -> int | None:
    manifest = path / "manifest.json"
    if manifest.is_file():
        try:
            value = json.loads(manifest.read_text()).get("sampling_n")
        except (json.JSONDecodeError, AttributeError) as exc:
            raise TransportError(f"{manifest}: not a JSON object ({exc}); pass --samples instead") from exc
        return int(value) if value is not None else None
    return None


def cassette_dir_of(path: Path, *, journal_ok: bool = False) -> Path:
    """The cassette folder of ``path`` (a run dir or a cassette dir); one holding no cassette fails.

    A folder whose entries are only in a crash journal (a recording killed before its fold) is
    accepted when ``journal_ok`` (the command folds it); otherwise the message says how to fold it.
    """
    folder = resolve_cassette_dir(path)
    if any(folder.rglob("*.yaml")):
        return folder
    if has_leftover_journal(folder):
        if journal_ok:
            return folder
        _refuse_live_recording(folder)
        raise TransportError(
            f"{path}: the entries are still only in the crash journal ({folder / JOURNAL_DIR}) of a "
            "recording stopped before it folded them: resume that run (rerun its command with "
            "--run-id), or fold them with `oracleproto cache rebuild`"
        )
    raise TransportError(
        f"{path}: no cassettes here (no *.yaml file under {folder}); pass a run directory or its "
        "cassettes/ folder"
    )


def _refuse_live_recording(folder: Path) -> None:
    """Say so when the journal is a live recorder's: the run is being recorded, not stopped.

    The cassette folder is ``<run>/cassettes`` (or a run directory named by ``cassettes.dir``):
    the run's writer lock is in the run directory, its parent.
    """
    for root in (folder.parent, folder):
        if not RUN_ID_RE.fullmatch(root.name) or not (root / MANIFEST_NAME).is_file():
            continue
        run = RunDir(root, root.name)
        run.require_idle("rerun this command (its entries are folded into the cassettes when it ends)")


@click.group("cassettes", cls=LazyGroup)
def cassettes() -> None:
    """Inspect the recorded cassettes of a run (RUN = a run, or a cassette folder)."""


@cassettes.command("ls", epilog=_EPILOG)
@run_argument(cassettes=True)
@runs_root_option
@click.option(
    "--sample",
    "sample",
    type=(str, str, int),
    default=None,
    metavar="MODEL QUESTION N",
    help="Only the entries sample N of QUESTION for MODEL used (search and detector included).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the entries as one JSON object (nothing else).")
def ls_cmd(run: RunRef, runs_root: Path | None, sample: tuple[str, str, int] | None, as_json: bool) -> None:
    """One line per entry: key, channel, status, generation, context (and how many samples used it)."""
    path = run.path
    store = CassetteStore(cassette_dir_of(path), writable=False)
    entries = store.effective_entries()
    users: dict[str, int] = {}
    if sample is not None:
        keys, users = _sample_entries(path, sample)
        by_key = {e.key: e for e in entries}
        missing = [k for k in keys if k not in by_key]
        if missing:
            raise TransportError(f"{path}: the sample used entries the cassettes do not hold: {missing[:3]}")
        order = {"llm": 0, "search": 1, "detector": 2}
        entries = sorted(
            (by_key[k] for k in keys),
            key=lambda e: (order[e.channel], e.context["step"] if e.context else 0, e.key),
        )
    if as_json:
        from oracleproto.cli.jsonout import emit, entry_document

        shown = [entry_document(e, users.get(e.key) if sample is not None else None) for e in entries]
        chosen = list(sample) if sample else None
        emit("cassettes-ls", {"path": str(path), "sample": chosen, "entries": shown})
        return
    for e in entries:
        ctx = e.context
        who = f"{ctx['model']} {ctx['question_id']} s{ctx['sample']} t{ctx['step']}" if ctx else "-"
        if ctx and e.channel != "llm" and e.occurrence is None:
            who = f"first asked by {who}"  # shared entries are keyed without the sample
        shared = f"  used by {users[e.key]} samples" if users.get(e.key, 0) > 1 else ""
        click.echo(f"{e.key[:16]}  {e.channel:<8} {e.status:>3}  g{e.generation}  {who}{shared}")


def _sample_entries(path: Path, sample: tuple[str, str, int]) -> tuple[list[str], dict[str, int]]:
    """The keys one sample used, and for every key how many samples of the run used it."""
    model, question, index = sample
    run = RunDir.open(path)
    records = read_sample_keys(run.model_db_paths(run.load_manifest()))
    if records is None:
        raise TransportError(
            f"{path}: the run predates per-sample entry records, so which entries a sample used is unknown"
        )
    slugs = sorted({slug for slug, _, _ in records})
    matching = [s for s in slugs if model in (s, s.split("::", 1)[0])]
    if len(matching) != 1:
        raise TransportError(
            f"--sample: model {model!r} names {len(matching)} of this run's models ({', '.join(slugs)}); "
            "give one of them"
        )
    slot = (matching[0], question, index)
    if slot not in records:
        raise TransportError(
            f"--sample: {matching[0]} has no stored sample {index} of question {question!r} in {path}"
        )
    users: dict[str, int] = {}
    for keys in records.values():
        for key in keys:
            users[key] = users.get(key, 0) + 1
    return records[slot], users


@cassettes.command("gc", epilog=f"RUN: {RUN_FORMS}.")
@run_argument()
@runs_root_option
@click.option("--apply", "apply", is_flag=True, help="Remove them (default: only list them).")
def gc_cmd(run: RunRef, runs_root: Path | None, apply: bool) -> None:
    """List (or with --apply remove) the entries no stored sample of the run used."""
    if apply and run.read_only:
        raise TransportError(
            f"{run.text}: the published demo run is read-only; copy it (`oracleproto demo fetch --dir D`) "
            "and collect the copy's garbage"
        )
    plan = plan_gc(run.path)
    if plan.finished is not None:
        click.echo(
            f"finished an interrupted `{plan.finished}`: its rewritten cassettes and the new seal "
            "(manifest.json, attestation.json) are now in place"
        )
    total = plan.kept + len(plan.unreachable)
    click.echo(
        f"{len(plan.unreachable)} of {total} entries in generation {plan.generation} are used by no "
        "stored sample"
    )
    for e in plan.unreachable:
        ctx = e.context
        who = f"{ctx['model']} {ctx['question_id']} s{ctx['sample']} t{ctx['step']}" if ctx else "-"
        click.echo(f"  {e.key[:16]}  {e.channel:<8} {e.status:>3}  {who}")
    if not plan.unreachable:
        return
    if not apply:
        click.echo("nothing removed: rerun with --apply to remove them")
        return
    removed = apply_gc(plan)
    sealed = " and attestation.json" if (plan.run.root / ATTESTATION_NAME).is_file() else ""
    click.echo(f"removed {removed} entries; manifest.json cassettes.root_digest{sealed} updated")


@cassettes.command("show", epilog=_EPILOG)
@run_argument(cassettes=True)
@click.argument("key_prefix")
@runs_root_option
def show_cmd(run: RunRef, key_prefix: str, runs_root: Path | None) -> None:
    """Show the entry whose key starts with KEY_PREFIX."""
    path = run.path
    store = CassetteStore(cassette_dir_of(path), writable=False)
    found = [e for e in store.effective_entries() if e.key.startswith(key_prefix)]
    if len(found) != 1:
        raise TransportError(
            f"{len(found)} entries match key prefix {key_prefix!r} in {path}; give a longer unique prefix"
        )
    e = found[0]
    shown = {
        "key": e.key,
        "channel": e.channel,
        "context": e.context,
        "occurrence": e.occurrence,
        "generation": e.generation,
        "request": stored_request(e),
        "status": e.status,
        "exception": e.exception,
        "latency_ms": e.latency_ms,
        "recorded_at": e.recorded_at,
        "attempts": e.attempts,
        "body": e.body.decode("utf-8", "replace"),
    }
    click.echo(json.dumps(shown, indent=2, ensure_ascii=False, sort_keys=True))


@cassettes.command("stats", epilog=_EPILOG)
@run_argument(cassettes=True)
@runs_root_option
@click.option(
    "--samples", type=int, default=None, help="Samples per question (default: manifest sampling_n)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as one JSON object (only that).")
def stats_cmd(run: RunRef, runs_root: Path | None, samples: int | None, as_json: bool) -> None:
    """Entries per channel, dedup, sample-collapse check, bytes, tokens and cost."""
    path = run.path
    n = samples if samples is not None else _samples_from_manifest(path)
    stats = cassette_stats(cassette_dir_of(path), n)
    if as_json:
        from oracleproto.cli.jsonout import emit, stats_document

        emit("cassettes-stats", {**stats_document(stats, n), "savings": savings_text(stats)})
        if n is not None and stats.collapse_violations:
            raise SystemExit(1)
        return
    click.echo(f"cassettes: {stats.cassette_dir}")
    click.echo(f"bytes: {stats.bytes}")
    click.echo(f"root digest: {stats.root_digest}")
    for name, ch in sorted(stats.channels.items()):
        line = f"{name}: {ch.entries} entries (distinct keys), {ch.requests} requests"
        if name != "llm":
            line += f", {ch.sharing_text()}"
        if ch.prompt_tokens or ch.completion_tokens:
            line += f", tokens {ch.prompt_tokens}+{ch.completion_tokens}"
        if ch.costed:
            line += f", cost {ch.cost:.6f} USD ({ch.costed} of {ch.entries} report it)"
        click.echo(line)
    click.echo(savings_text(stats))
    if n is None:
        click.echo("sample-collapse check: skipped (pass --samples or a run dir with manifest.json)")
    elif stats.collapse_violations:
        click.echo(f"sample-collapse check: {len(stats.collapse_violations)} violation(s)")
        for v in stats.collapse_violations:
            click.echo(f"  {v}")
        raise SystemExit(1)
    else:
        click.echo(f"sample-collapse check: ok ({n} distinct keys per model × question)")


@click.group("cache")
def cache() -> None:
    """Manage the local ``cache/`` index built from cassettes."""


@cache.command("rebuild", epilog=_EPILOG)
@run_argument(cassettes=True)
@runs_root_option
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Index directory (default: RUN/cache for a run, else 'cache' beside the cassette folder).",
)
def rebuild_cmd(run: RunRef, runs_root: Path | None, cache_dir: Path | None) -> None:
    """Rebuild the diskcache index from the cassettes."""
    if run.read_only and cache_dir is None:
        raise TransportError(
            f"{run.text}: the published demo run is never written to, and its index would go inside it: "
            "give --cache-dir DIR"
        )
    cassette_dir = cassette_dir_of(run.path, journal_ok=True)
    target = cache_dir or cassette_dir.parent / "cache"
    existed = target.exists()
    try:
        count = rebuild_index(cassette_dir, target)
    except (OSError, sqlite3.Error) as exc:
        if not existed:  # leave no half-built index behind
            shutil.rmtree(target, ignore_errors=True)
        why = cannot_write(target, exc) if isinstance(exc, OSError) else f"cannot write {target} ({exc})"
        raise TransportError(f"{why}; the index is rebuildable: fix that and rerun") from None
    click.echo(f"indexed {count} entries from {cassette_dir} into {target}")
