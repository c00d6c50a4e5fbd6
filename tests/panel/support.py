"""What the panel tests share: shards of one simulated experiment recorded once per module, and
panel files naming them."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

from oracleproto.sim.server import SimConfig, Simulator
from oracleproto.verify.attest import write_attestation
from tests.ledger.support import env_file, invoke, record_args, run_dir_of

LIMIT = "2"


@dataclass(frozen=True)
class Recorded:
    """Everything recorded once: two shards (the first sealed), a single run, and odd runs."""

    root: Path
    experiment: str
    shards: tuple[Path, ...]
    single: Path
    #: A shard of another experiment (another temperature).
    other_experiment: Path
    #: A shard of the experiment that overlaps shard 0 (it records sim/careful too).
    overlapping: Path


def _record(where: Path, env: Path, *extra: str) -> Path:
    result = invoke(record_args(where, env, "--limit", LIMIT, *extra))
    assert result.exit_code == 0, result.output
    return run_dir_of(result.stdout)


def record_all(root: Path) -> Recorded:
    """Record the experiment's two shards, the same experiment as one run, and the odd ones."""
    with Simulator(SimConfig(seed=3)) as sim:
        env = env_file(root, sim.base_url)
        printed = invoke(["run", "--env-file", env, "--print-experiment-id", "--limit", LIMIT])
        assert printed.exit_code == 0, printed.output
        experiment = printed.stdout.strip()
        shards = tuple(
            _record(root / f"shard{i}", env, "--shard", f"{i}/2", "--experiment", experiment) for i in (0, 1)
        )
        single = _record(root / "single", env)
        warm = env_file(root, sim.base_url, name="warm.env", LLM_TEMPERATURE="0.2")
        other = _record(root / "other", warm, "--shard", "1/2")
        overlapping = _record(root / "overlap", env, "--shard-models", "sim/careful,sim/greedy")
    write_attestation(shards[0])  # one member sealed, one not: both kinds of seal
    return Recorded(root, experiment, shards, single, other, overlapping)


def seal_sha(run: Path) -> str:
    """The digest a panel file pins: attestation.json's, else manifest.json's."""
    name = "attestation.json" if (run / "attestation.json").is_file() else "manifest.json"
    return hashlib.sha256((run / name).read_bytes()).hexdigest()


def panel_file(where: Path, members: list[Path], *, sha: dict[Path, str] | None = None) -> Path:
    """A PANEL.toml in ``where`` naming ``members`` by relative path with their seal digests."""
    lines = ['name = "test panel"']
    for run in members:
        digest = (sha or {}).get(run) or seal_sha(run)
        rel = run.relative_to(where) if run.is_relative_to(where) else run
        lines += ["[[member]]", f'path = "{rel.as_posix()}"', f'sha256 = "{digest}"']
    path = where / "PANEL.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def copy_tree(recorded: Recorded, to: Path) -> Recorded:
    """A copy of everything recorded (to damage without touching the module's recording)."""
    shutil.copytree(recorded.root, to, ignore=shutil.ignore_patterns(".lock"))

    def moved(p: Path) -> Path:
        return to / p.relative_to(recorded.root)

    return Recorded(
        to,
        recorded.experiment,
        tuple(moved(p) for p in recorded.shards),
        moved(recorded.single),
        moved(recorded.other_experiment),
        moved(recorded.overlapping),
    )


def build(where: Path, members: list[Path], out: str = "panel") -> tuple[int, str, str]:
    """``panel build`` in-process: exit status, stdout, stderr."""
    spec = panel_file(where, members)
    result = invoke(["panel", "build", spec, "--out", where / out])
    return result.exit_code, result.stdout, result.stderr
