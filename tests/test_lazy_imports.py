"""Start-up imports (issue 18): packages export lazily, and the CLI imports only what a command uses.

Each check runs in a fresh interpreter, since this test process has imported everything already.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import oracleproto
from oracleproto.cli.main import skip_httpx_cli

#: Heavy modules no command needs just to start (or to print its help).
HEAVY = (
    "matplotlib",
    "oracleproto.analysis.plots",
    "playwright",
    "numpy",
    "rich",
    "tavily",
    "httpx",
    "oracleproto.runner.execute",
    "oracleproto.agent.loop",
    "oracleproto.view.document",
)

#: Every package whose ``__init__`` re-exports its API lazily (PEP 562).
LAZY_PACKAGES = (
    "oracleproto",
    "oracleproto.agent",
    "oracleproto.analysis",
    "oracleproto.refresh",
    "oracleproto.prompts",
    "oracleproto.providers",
    "oracleproto.sim",
    "oracleproto.store",
    "oracleproto.transport",
    "oracleproto.verify",
    "oracleproto.view",
)


def _modules_after(code: str) -> set[str]:
    """The names in ``sys.modules`` after running ``code`` in a fresh interpreter."""
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


#: What every command imports of the CLI package before it looks up the command it runs.
CLI_CORE = [
    "oracleproto.cli",
    "oracleproto.cli.exits",
    "oracleproto.cli.failures",
    "oracleproto.cli.lazy_group",
    "oracleproto.cli.main",
]


def _cli_modules(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m == "oracleproto.cli" or m.startswith("oracleproto.cli."))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_import_oracleproto_loads_no_layer() -> None:
    modules = _modules_after("import oracleproto")
    assert _heavy(modules) == []
    # Only the version and the error vocabulary load eagerly.
    assert {m for m in modules if m.startswith("oracleproto.")} <= {
        "oracleproto._lazy",
        "oracleproto._version",
        "oracleproto.errors",
    }


def test_import_cli_loads_no_command_module() -> None:
    modules = _modules_after("import oracleproto.cli.main")
    assert _heavy(modules) == []
    assert _cli_modules(modules) == CLI_CORE


@pytest.mark.parametrize("args", [["--help"], ["--version"]])
def test_top_level_help_imports_no_command(args: list[str]) -> None:
    code = (
        "from oracleproto.cli.main import cli\n"
        "try:\n"
        f"    cli.main({args!r}, prog_name='oracleproto', standalone_mode=True)\n"
        "except SystemExit:\n"
        "    pass"
    )
    modules = _modules_after(code)
    assert _heavy(modules) == []
    assert _cli_modules(modules) == CLI_CORE


def test_replay_help_imports_neither_plots_nor_the_viewer() -> None:
    code = (
        "from oracleproto.cli.main import cli\n"
        "try:\n"
        "    cli.main(['replay', '--help'], prog_name='oracleproto')\n"
        "except SystemExit:\n"
        "    pass"
    )
    modules = _modules_after(code)
    assert "oracleproto.cli.run" in modules
    assert not {"matplotlib", "oracleproto.analysis.plots", "oracleproto.cli.view", "playwright"} & modules


def test_naming_the_demo_imports_neither_the_analysis_nor_numpy() -> None:
    """The demo RUN is looked up without verify's checks: a command that reads no analysis stays light."""
    code = (
        "from oracleproto.cli.main import cli\n"
        "try:\n"
        "    cli.main(['cassettes', 'stats', 'demo'], prog_name='oracleproto')\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code"
    )
    modules = _modules_after(code)
    assert "oracleproto.verify.demo" in modules
    assert not {"numpy", "oracleproto.analysis.report", "oracleproto.verify.run"} & modules


def test_a_recording_without_its_analysis_pass_imports_neither_the_analysis_nor_numpy(tmp_path: Path) -> None:
    """``sim run --no-report`` (as ``run --no-report``, and a run stopped before its pass) starts and
    records without the metrics, the refresh audit or numpy: they load only for an analysis pass."""
    args = ["sim", "run", "--personas", "1", "--samples", "1", "--limit", "1", "--no-detector"]
    args += ["--no-report", "--no-progress", "--runs-root", str(tmp_path)]
    code = (
        "from oracleproto.cli.main import cli\n"
        "try:\n"
        f"    cli.main({args!r}, prog_name='oracleproto')\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code"
    )
    modules = _modules_after(code)
    assert "oracleproto.runner.execute" in modules and [p.name for p in tmp_path.iterdir()]
    loaded = {
        "numpy",
        "oracleproto.analysis.report",
        "oracleproto.analysis.reader",
        "oracleproto.refresh.report",
    }
    assert not loaded & modules


def test_the_console_script_talks_http_without_httpx_s_own_command_line(tmp_path: Path) -> None:
    """The console script records through httpx without importing httpx's CLI (rich, pygments)."""
    args = ["oracleproto", "sim", "run", "--personas", "1", "--samples", "1", "--limit", "1"]
    args += ["--no-detector", "--no-report", "--no-progress", "--runs-root", str(tmp_path)]
    code = (
        f"sys.argv = {args!r}\n"
        "from oracleproto.cli.main import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "import httpx\n"
        "assert sys.modules['httpx._main'] is None and callable(httpx.main)"
    )
    modules = _modules_after(code)
    assert {"httpx", "oracleproto.runner.execute"} <= modules and [p.name for p in tmp_path.iterdir()]
    assert not {"rich", "pygments"} & modules


def test_httpx_s_command_line_is_left_alone_once_httpx_is_imported() -> None:
    loaded = {"httpx": object()}
    skip_httpx_cli(loaded)
    assert loaded.keys() == {"httpx"}
    fresh: dict[str, object] = {}
    skip_httpx_cli(fresh)
    assert fresh == {"httpx._main": None}


#: Run after the console script's ``main`` exits: numpy imported then, as a command would import it,
#: and the BLAS setting with the process's thread count (Linux) once OpenBLAS has started.
_BLAS_PROBE = (
    "import atexit, os, sys\n"
    "def probe():\n"
    "    import numpy\n"
    "    threads = [l for l in open('/proc/self/status') if l.startswith('Threads:')][0].split()[1]\n"
    "    print('blas', os.environ.get('OPENBLAS_NUM_THREADS'), threads)\n"
    "atexit.register(probe)\n"
    "sys.argv = ['oracleproto', '--version']\n"
    "from oracleproto.cli.main import main\n"
    "main()"
)


@pytest.mark.parametrize(("given", "seen"), [(None, "1"), ("2", "2")])
def test_the_console_script_starts_one_blas_thread_unless_told(given: str | None, seen: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    done = subprocess.run(
        [sys.executable, "-c", _BLAS_PROBE], capture_output=True, text=True, check=True, timeout=60, env=env
    )
    _, value, threads = done.stdout.splitlines()[-1].split()
    assert value == seen
    if given is None:
        assert threads == "1"  # the main thread alone: OpenBLAS started no thread of its own


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_lazy_exports_resolve_to_their_definitions(package: str) -> None:
    module = importlib.import_module(package)
    exports: dict[str, str] = module._EXPORTS
    assert set(exports) <= set(module.__all__), "a lazy name missing from __all__"
    for name in module.__all__:
        value = getattr(module, name)
        if name in exports:
            assert value is getattr(importlib.import_module(exports[name]), name), name
    assert set(module.__all__) <= set(dir(module))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = oracleproto.no_such_name  # type: ignore[attr-defined]
    with pytest.raises(ImportError):
        exec("from oracleproto.store import no_such_name", {})


def test_star_import_gives_every_public_name() -> None:
    namespace: dict[str, object] = {}
    exec("from oracleproto import *", namespace)
    assert set(oracleproto.__all__) <= set(namespace)
