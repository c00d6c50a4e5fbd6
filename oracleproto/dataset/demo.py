"""The packaged demo dataset: fictional events written for this project, the tool's default.

Sources (``demo_questions.jsonl``, ``demo_templates.json``) and the built ``demo.db`` ship in
``oracleproto/data``; a test proves the DB is exactly what the builder makes of the sources.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

from oracleproto.errors import DatasetError, DatasetProblem

DEMO_DB = "demo.db"
DEMO_QUESTIONS = "demo_questions.jsonl"
DEMO_TEMPLATES = "demo_templates.json"
#: Build parameters of the packaged demo DB (the reproduction test rebuilds with these).
DEMO_TABLE = "questions"
DEMO_DATASET_NAME = "oracleproto_demo"
DEMO_DESCRIPTION = (
    "oracleproto demo set: fictional, clearly labelled events written for this project "
    "(no real-world outcomes); for trying the tool without the paper's dataset."
)


def _data_file(name: str) -> Path:
    resource = files("oracleproto").joinpath("data", name)
    # Installed as files (wheel or editable), resources are real paths; SQLite needs one.
    if not isinstance(resource, Path) or not resource.is_file():
        raise DatasetError(
            f"oracleproto/data/{name}",
            [
                DatasetProblem(
                    None, "file", "packaged demo file not found on the filesystem; reinstall oracleproto"
                )
            ],
        )
    return resource


def demo_db_path() -> Path:
    """Path of the packaged demo source DB."""
    return _data_file(DEMO_DB)


def demo_questions_path() -> Path:
    """Path of the demo's JSONL source rows."""
    return _data_file(DEMO_QUESTIONS)


def demo_templates_path() -> Path:
    """Path of the demo's template JSON (our own wording of the eight keys)."""
    return _data_file(DEMO_TEMPLATES)


def demo_templates() -> dict[str, str]:
    """The demo's ``prompt_reconstruction`` mapping."""
    value = json.loads(demo_templates_path().read_text(encoding="utf-8"))
    if not isinstance(value, dict):
        raise DatasetError(DEMO_TEMPLATES, [DatasetProblem(None, "templates", "not a JSON object")])
    return {str(k): str(v) for k, v in value.items()}
