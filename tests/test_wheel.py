"""The built wheel in a fresh virtualenv outside the repository, used from an empty folder.

The wheel is built offline from a copy of the sources (``pip wheel --no-build-isolation``, with the
setuptools of the dev extra), installed without dependencies into a new venv under ``tmp_path``;
the dependencies come from the project's own environment through a ``.pth`` line (no network, no
second download of numpy and matplotlib). Then a pip user's first steps run from an empty folder,
with a private HOME and cache: the demo (replay, verify, fetch), ``sim run``, ``report``, ``init``
and ``run --dry-run``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from oracleproto.settings.init_templates import env_name
from oracleproto.settings.run_config import SECTION_CLASSES

REPO = Path(__file__).resolve().parents[1]
SOURCES = [
    "pyproject.toml",
    "setup.py",
    "MANIFEST.in",
    "README.md",
    ".env.example",
    "oracleproto",
    "cassettes/demo",
]
RUN_DIR_LINE = re.compile(r"^(runs/\d{8}-\d{6}-[0-9a-f]{4})$", re.MULTILINE)


def _run(
    args: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, (
        f"{done.args}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done.stdout


def _build_wheel(tmp_path: Path) -> tuple[Path, str]:
    src = tmp_path / "src"
    for name in SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(
                source, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".lock")
            )
        else:
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, src / name)
    wheelhouse = tmp_path / "wheelhouse"
    args = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
    done = _run([*args, "-w", str(wheelhouse), str(src)], cwd=tmp_path, env=_clean_env(), timeout=300)
    log = _ok(done) + done.stderr
    [wheel] = wheelhouse.glob("oracleproto-*.whl")
    return wheel, log


def _clean_env(**extra: str) -> dict[str, str]:
    settings = {env_name(i) for cls in SECTION_CLASSES.values() for i in cls.model_fields.values()}
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in settings and k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}
    }
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.update(extra)
    return env


@pytest.mark.slow
def test_wheel_works_from_an_empty_folder_in_a_fresh_venv(tmp_path: Path) -> None:
    """Build, install, then: replay/verify/fetch the demo, sim run, report, init, run --dry-run."""
    wheel, build_log = _build_wheel(tmp_path)
    assert "project.license" not in build_log  # the SPDX form: no deprecation warning
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "oracleproto/data/demo-run.tar.xz" in names
    assert not [n for n in names if n.startswith(("cassettes/", "tests/")) or n.endswith(".lock")]
    assert wheel.stat().st_size < 2_000_000
    requires = [
        line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    assert not [r for r in requires if "vcrpy" in r or "freezegun" in r], requires
    assert "License-Expression: MIT" in metadata

    venv = tmp_path / "venv"
    _ok(_run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp_path, env=_clean_env()))
    python = venv / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index"]
    _ok(_run([*install, str(wheel)], cwd=tmp_path, env=_clean_env()))
    # Dependencies from this environment, added only after the install so pip never sees the
    # project's own (editable) distribution there.
    target_site = _ok(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            cwd=tmp_path,
            env=_clean_env(),
        )
    ).strip()
    (Path(target_site) / "_test_deps.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8"
    )

    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = _clean_env(
        PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".state"),
    )
    where = _ok(
        _run([str(python), "-c", "import oracleproto; print(oracleproto.__file__)"], cwd=work, env=env)
    )
    assert Path(where.strip()).is_relative_to(venv), where
    cli = str(venv / "bin" / "oracleproto")

    replayed = _run([cli, "replay", "demo"], cwd=work, env=env)
    _ok(replayed)
    assert str(home / ".cache" / "oracleproto" / "demo") in replayed.stdout + replayed.stderr
    _ok(_run([cli, "verify", "demo"], cwd=work, env=env))
    fetched = _ok(_run([cli, "demo", "fetch"], cwd=work, env=env))
    assert (work / fetched.strip() / "manifest.json").is_file()

    simulated = _ok(
        _run([cli, "sim", "run", "--personas", "1", "--samples", "1", "--no-progress"], cwd=work, env=env)
    )
    run_dir = RUN_DIR_LINE.findall(simulated)[-1]
    reported = _ok(_run([cli, "report", run_dir, "--out", "rescored"], cwd=work, env=env))
    assert (work / "rescored" / "summary.json").is_file(), reported

    _ok(_run([cli, "init"], cwd=work, env=env))
    assert (work / ".env").is_file() and (work / "oracleproto.toml").is_file()
    planned = _run(
        [cli, "run", "--dry-run", "--models", "sim/careful"],
        cwd=work,
        env={**env, "MODEL_TRAINING_CUTOFFS": "sim/careful=2026-01"},
    )
    assert "no network call was made" in _ok(planned) + planned.stderr
