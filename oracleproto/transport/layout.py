"""Where entries live on disk: one YAML file per channel (llm split per model), per generation.

```
<cassette dir>/
  llm/<model file>.yaml        generation 0 (the first recording)
  search.yaml
  detector.yaml
  generations/0001/...          refresh generations, same shape, never overwritten
  .journal/<pid>-<token>.jsonl  crash journal of a live writer (deleted on close)
  .lock                         file lock taken while files are rewritten
```
"""

from __future__ import annotations

import re
from pathlib import Path

from oracleproto.errors import CassetteIntegrityError
from oracleproto.primitives.paths import ensure_inside
from oracleproto.transport.entry import Entry

GENERATIONS_DIR = "generations"
JOURNAL_DIR = ".journal"
LOCK_FILE = ".lock"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def model_file_stem(model: str) -> str:
    """run-layout.md's model file rule (``/`` → ``__``, other unsafe chars → ``_``)."""
    return _UNSAFE.sub("_", model.replace("/", "__"))


def generation_dir(root: Path, generation: int) -> Path:
    """Directory holding the files of one generation."""
    return root if generation == 0 else root / GENERATIONS_DIR / f"{generation:04d}"


def relative_file(entry: Entry) -> str:
    """The file (relative to its generation directory) an entry belongs to."""
    if entry.channel == "llm":
        return f"llm/{model_file_stem(entry.model or '_no_model')}.yaml"
    return f"{entry.channel}.yaml"


def list_generations(root: Path) -> list[int]:
    """Generations present on disk, ascending (0 is always listed)."""
    gens = [0]
    base = root / GENERATIONS_DIR
    if base.is_dir():
        gens += sorted(int(p.name) for p in base.iterdir() if p.is_dir() and p.name.isdigit())
    return gens


def cassette_files(root: Path, generation: int) -> list[Path]:
    """The YAML files of one generation, sorted; a symlink leading out of ``root`` is refused."""
    gdir = generation_dir(root, generation)
    files = sorted(gdir.glob("*.yaml")) + sorted((gdir / "llm").glob("*.yaml"))
    for path in files:
        ensure_inside(root, path, what="cassette file", error=CassetteIntegrityError)
    return sorted(files)


def all_cassette_files(root: Path) -> list[Path]:
    """Every cassette file of every generation, sorted."""
    return [p for g in list_generations(root) for p in cassette_files(root, g)]


def resolve_cassette_dir(path: Path) -> Path:
    """A run directory containing ``cassettes/`` → that folder; otherwise ``path`` itself."""
    return path / "cassettes" if (path / "cassettes").is_dir() else path
