"""The earlier harness's fixtures under ../shared/fixtures/earlier-harness, read in place (never copied).

The two harness profiles, and the captured HTTP exchanges of the earlier harness
(``captures/*.jsonl``: one object per line with base64 ``body_b64``/``resp_b64``).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from oracleproto.profile import HarnessProfile, load_profile
from tests.conftest import SHARED

EARLIER_DIR = SHARED / "fixtures" / "earlier-harness"
CAPTURE_FILES = ("ref-live.jsonl", "ref-script.jsonl")
#: The detector model the captures used (its requests share the main LLM's path).
DETECTOR_MODEL = "sim/detector"


def earlier_dir() -> Path:
    """The fixture directory; the test fails (not skips) without ../shared."""
    if not EARLIER_DIR.exists():
        pytest.fail(f"{EARLIER_DIR} is missing: tests need ../shared beside the repository")
    return EARLIER_DIR


@cache
def earlier_profile() -> HarnessProfile:
    """``earlier-harness.profile.json``."""
    return load_profile(earlier_dir() / "earlier-harness.profile.json")


@cache
def current_profile() -> HarnessProfile:
    """``oracleproto-current.profile.json``: oracleproto's own behaviour, written as a profile."""
    return load_profile(earlier_dir() / "oracleproto-current.profile.json")


@dataclass(frozen=True)
class Exchange:
    """One captured request and its response."""

    seq: int
    path: str
    body: bytes
    response: bytes

    @property
    def request_json(self) -> Any:
        return json.loads(self.body)

    @property
    def response_json(self) -> Any:
        return json.loads(self.response)

    @property
    def is_search(self) -> bool:
        return self.path == "/search"

    @property
    def is_detector(self) -> bool:
        return not self.is_search and self.request_json.get("model") == DETECTOR_MODEL

    @property
    def is_chat(self) -> bool:
        return not self.is_search and not self.is_detector


@cache
def capture(name: str) -> tuple[Exchange, ...]:
    """The exchanges of one capture file, in capture order."""
    out = []
    for line in (earlier_dir() / "captures" / name).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out.append(
            Exchange(
                seq=row["seq"],
                path=row["path"],
                body=base64.b64decode(row["body_b64"]),
                response=base64.b64decode(row["resp_b64"]),
            )
        )
    return tuple(sorted(out, key=lambda e: e.seq))
