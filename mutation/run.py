"""`make mutation`: mutmut 3 on the modules a reviewer trusts most, one group at a time.

For each group of ``mutation/groups.toml`` a scratch folder ``build/mutation/<group>/`` gets
links to the package, the tests and the data the tests read, and a ``pyproject.toml`` (the
project's own, plus a ``[tool.mutmut]`` table naming the group's modules and tests). mutmut
copies them to ``mutants/`` there and mutates that copy only, so the work tree is never
touched (others may be running tests in it). Each mutant runs only the group's tests that
called the mutated function, in a process forked from one that has imported everything.

Every mutant that no test killed is then matched against ``mutation/equivalent.toml``
(mutants documented as equivalent, each with its reason), by function and by the changed
lines, not by mutmut's number (which shifts when a function is edited). The run fails
unless every survivor is explained there, and prints a TOML stub for each that is not.

Usage: ``python mutation/run.py [GROUP ...] [--max-children N] [--resume | --report-only]``.
``--resume`` keeps the previous ``mutants/`` and retests its survivors, timeouts and unrun mutants
only (after adding tests; add them to a test file the group already lists, since a changed test
list makes mutmut start over);
``--report-only`` lists the last run's survivors again. ``--groups-file`` and ``--build`` run
another selection in another folder (e.g. the suite before some tests, to count what they kill).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "mutation"
BUILD = ROOT / "build" / "mutation"
#: What the tests read besides the package: the demo run, golden snapshots, ../shared.
LINKED = ("oracleproto", "tests", "cassettes", "golden")
#: mutmut statuses that count as detected (a timeout is a mutant the suite would not pass).
DETECTED = {"killed", "timeout", "caught by type check", "segfault"}


@dataclass(frozen=True)
class Survivor:
    """A mutant no test killed: its name, status and the lines it changed."""

    name: str
    status: str
    diff: str

    @property
    def function(self) -> str:
        return self.name.partition("__mutmut_")[0]

    @property
    def module(self) -> str:
        return module_of(self.name)

    @property
    def change(self) -> str:
        """The changed lines of the diff, stripped: what identifies the mutant across renumbering."""
        return "\n".join(
            line[0] + line[1:].strip()
            for line in self.diff.splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
        )


def module_of(name: str) -> str:
    """``oracleproto.primitives.redact.x_scrub__mutmut_3`` → ``oracleproto.primitives.redact``."""
    return re.split(r"\.x[_ǁ]", name, maxsplit=1)[0]


def load_groups(path: Path) -> dict[str, dict[str, list[str]]]:
    groups: dict[str, dict[str, list[str]]] = tomllib.loads(path.read_text())["groups"]
    for name, group in groups.items():
        for test in group["tests"]:
            if not (ROOT / test).exists():
                raise SystemExit(f"{path}: group {name}: {test} does not exist")
    return groups


def load_equivalents(extra: list[Path]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The documented mutants, and the substitutions that are equivalent wherever they are made."""
    data = tomllib.loads((HERE / "equivalent.toml").read_text())
    for path in extra:  # entries being written (checked here before they join equivalent.toml)
        more = tomllib.loads(path.read_text())
        for key in ("equivalent", "equivalent_substitution"):
            data.setdefault(key, []).extend(more.get(key, []))
    entries: list[dict[str, str]] = data.get("equivalent", [])
    rules: list[dict[str, str]] = data.get("equivalent_substitution", [])
    for entry in entries:
        missing = {"function", "change", "why"} - set(entry)
        if missing or not entry["why"].strip():
            raise SystemExit(f"mutation/equivalent.toml: {entry.get('function')!r} lacks {missing or 'why'}")
    for rule in rules:
        missing = {"original", "mutated", "why"} - set(rule)
        if missing or not rule["why"].strip():
            raise SystemExit(f"mutation/equivalent.toml: {rule.get('original')!r} lacks {missing or 'why'}")
    return entries, rules


def substituted(survivor: Survivor, rules: list[dict[str, str]]) -> bool:
    """True when the mutant changes one line by one documented substitution (and nothing else)."""
    lines = survivor.change.splitlines()
    if len(lines) != 2 or not (lines[0].startswith("-") and lines[1].startswith("+")):
        return False
    before, after = lines[0][1:], lines[1][1:]
    for rule in rules:
        start = before.find(rule["original"])
        while start != -1:
            if before[:start] + rule["mutated"] + before[start + len(rule["original"]) :] == after:
                return True
            start = before.find(rule["original"], start + 1)
    return False


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def prepare(workdir: Path, group: dict[str, list[str]], *, fresh: bool) -> None:
    """The scratch folder: links, and the project's pyproject.toml with the group's mutmut table."""
    if fresh and (workdir / "mutants").exists():
        shutil.rmtree(workdir / "mutants")
    workdir.mkdir(parents=True, exist_ok=True)
    links = {name: ROOT / name for name in LINKED}
    if (ROOT.parent / "shared").is_dir():
        links["shared"] = ROOT.parent / "shared"  # tests/conftest.py reads ROOT.parent / "shared"
    for name, target in links.items():
        link = workdir / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    table = "\n".join(
        [
            "",
            "[tool.mutmut]",
            'source_paths = ["oracleproto"]',
            f"only_mutate = {_toml_list(group['modules'])}",
            f"pytest_add_cli_args_test_selection = {_toml_list(group['tests'])}",
            'also_copy = ["cassettes", "golden"]',
            # A fresh folder per run: no results carried over from an edited test suite.
            "use_git_change_detection = false",
            # mutmut 3.8 stops a mutant after 10 × (its tests' measured time + 1 s) of *wall* time
            # (and 20 × of CPU time) and counts it as a timeout, i.e. detected (mutmut's default is
            # 30 ×). At nice 19 on a shared 2-core machine a mutant's tests ran 3-4 × slower than in
            # the stats run, so 4 × turned slow survivors into false "timeouts"; 10 × leaves room.
            "timeout_multiplier = 10.0",
            "",
        ]
    )
    (workdir / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text() + table)


def run_mutmut(workdir: Path, names: list[str], max_children: int) -> float:
    """``mutmut run`` at the lowest priority (the machine is shared); returns the wall time."""
    mutmut = Path(sys.executable).parent / "mutmut"
    command = ["nice", "-n", "19", str(mutmut), "run", "--max-children", str(max_children), *names]
    started = time.monotonic()
    with (workdir / "mutmut.log").open("w") as log:
        code = subprocess.run(
            command, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, check=False
        ).returncode
    elapsed = time.monotonic() - started
    if code != 0:
        tail = (workdir / "mutmut.log").read_text(errors="replace")[-3000:]
        raise SystemExit(f"mutmut failed in {workdir} (exit {code}); end of mutmut.log:\n{tail}")
    return elapsed


def results(workdir: Path) -> tuple[Counter[str], list[tuple[str, str, str]]]:
    """Mutants per module, and (name, status, source path) of each one not detected."""
    from mutmut.stats import status_by_exit_code

    totals: Counter[str] = Counter()
    undetected: list[tuple[str, str, str]] = []
    for meta in sorted((workdir / "mutants").rglob("*.py.meta")):
        source = str(meta.relative_to(workdir / "mutants"))[: -len(".meta")]
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            totals[module_of(name)] += 1
            status = status_by_exit_code[code]
            if status not in DETECTED:
                undetected.append((name, status, source))
    return totals, undetected


def to_retest(workdir: Path) -> list[str]:
    """What ``--resume`` runs again: survivors, mutants not run yet (an interrupted run), and
    timeouts (a verdict the machine's load may have caused: the timeout is in wall time)."""
    from mutmut.stats import status_by_exit_code

    names: list[str] = []
    for meta in sorted((workdir / "mutants").rglob("*.py.meta")):
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            if status_by_exit_code[code] not in {"killed", "caught by type check", "segfault"}:
                names.append(name)
    return names


def diffs(workdir: Path, undetected: list[tuple[str, str, str]]) -> list[Survivor]:
    """Each undetected mutant with its diff (read from the mutated copy, as ``mutmut show`` does)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    here = Path.cwd()
    os.chdir(workdir)
    try:
        return [
            Survivor(name, status, get_diff_for_mutant(name, path=path)) for name, status, path in undetected
        ]
    finally:
        os.chdir(here)


def explain(
    survivors: list[Survivor], equivalents: tuple[list[dict[str, str]], list[dict[str, str]]]
) -> tuple[list[Survivor], int]:
    """The survivors nothing in equivalent.toml explains, and how many entries matched nothing (stale)."""
    entries, rules = equivalents
    known = {(e["function"], e["change"].strip()) for e in entries}
    used = {(s.function, s.change) for s in survivors} & known
    unexplained = [s for s in survivors if (s.function, s.change) not in known and not substituted(s, rules)]
    return unexplained, len(known - used)


def stub(survivor: Survivor) -> str:
    change = survivor.change.replace('"""', '\\"\\"\\"')
    return (
        f'[[equivalent]]\nfunction = "{survivor.function}"\nchange = """\n{change}\n"""\n'
        f'why = ""  # {survivor.status}: {survivor.name}\n'
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("groups", nargs="*", help="groups of mutation/groups.toml (default: all)")
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument("--groups-file", type=Path, default=HERE / "groups.toml")
    parser.add_argument("--build", type=Path, default=BUILD, help="scratch folder (default build/mutation)")
    parser.add_argument("--report-only", action="store_true", help="list the last run's results, run nothing")
    parser.add_argument("--resume", action="store_true", help="keep mutants/ and retest its survivors")
    parser.add_argument(
        "--equivalent",
        type=Path,
        action="append",
        default=[],
        help="another file of entries, read after equivalent.toml",
    )
    args = parser.parse_args()
    groups = load_groups(args.groups_file)
    chosen = args.groups or list(groups)
    unknown = set(chosen) - set(groups)
    if unknown:
        parser.error(f"unknown group(s) {sorted(unknown)}; known: {sorted(groups)}")
    equivalents = load_equivalents(args.equivalent)
    all_survivors: list[Survivor] = []
    stale_total = 0
    for name in chosen:
        workdir = args.build / name
        if args.report_only:
            if not (workdir / "mutants").is_dir():
                parser.error(f"group {name} has not been run ({workdir / 'mutants'} is missing)")
            print(f"== {name}: results of the last run")
        else:
            again = to_retest(workdir) if args.resume else []
            prepare(workdir, groups[name], fresh=not args.resume)
            if args.resume and not again:
                print(f"== {name}: nothing to retest")
            else:
                elapsed = run_mutmut(workdir, again, args.max_children)
                print(f"== {name}: mutmut ran in {elapsed:.0f} s (log: {workdir / 'mutmut.log'})")
        totals, undetected = results(workdir)
        survivors = diffs(workdir, undetected)
        unexplained, _ = explain(survivors, equivalents)
        per_module = Counter(s.module for s in survivors)
        per_unexplained = Counter(s.module for s in unexplained)
        for module in sorted(totals):
            print(
                f"   {module}: {totals[module]} mutants, {per_module[module]} not killed "
                f"({per_module[module] - per_unexplained[module]} documented equivalent)"
            )
        all_survivors += survivors
    unexplained, stale_total = explain(all_survivors, equivalents)
    for survivor in unexplained:
        print(f"\n-- {survivor.status}: {survivor.name}\n{survivor.diff}")
    if unexplained:
        print("\nUnexplained survivors: kill each with a test, or add it to mutation/equivalent.toml:\n")
        print("\n".join(stub(s) for s in unexplained))
        print(f"{len(unexplained)} unexplained survivor(s)")
        return 1
    if stale_total and not args.groups:
        print(f"note: {stale_total} entry(ies) of mutation/equivalent.toml matched no survivor (stale?)")
    print("no unexplained survivors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
