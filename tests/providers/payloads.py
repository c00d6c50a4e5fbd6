"""Read the real recorded interactions under ../shared/fixtures/real-payloads (three YAML formats).

vcrpy YAML keeps the raw body in ``response.body.string``; pydantic-ai's recorder stores the
JSON body parsed under ``parsed_body``; R vcr uses ``http_interactions`` with ``status`` as an
int or a mapping. Bodies are returned as the bytes a client would have read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class Interaction:
    """One recorded request/response pair."""

    source: str
    index: int
    uri: str
    request_body: bytes
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def is_chat(self) -> bool:
        return self.uri.rstrip("/").endswith("/chat/completions")

    @property
    def is_tavily(self) -> bool:
        return self.uri.rstrip("/").endswith("/search") and "tavily" in self.uri

    @property
    def is_streaming(self) -> bool:
        return self.body.lstrip().startswith((b"data:", b":")) or b"\ndata: " in self.body[:2000]


def _as_bytes(value: Any) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return json.dumps(value).encode("utf-8")


def _body(part: dict[str, Any]) -> bytes:
    if "parsed_body" in part:
        return _as_bytes(part["parsed_body"])
    body = part.get("body")
    if isinstance(body, dict):
        return _as_bytes(body.get("string"))
    return _as_bytes(body)


def _status(response: dict[str, Any]) -> int:
    status = response.get("status")
    if isinstance(status, dict):
        return int(status["code"])
    return int(status)


def _headers(response: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in (response.get("headers") or {}).items():
        out[str(name).lower()] = str(value[0] if isinstance(value, list) and value else value)
    return out


def load_interactions(path: Path, root: Path) -> list[Interaction]:
    """Every interaction of one cassette file."""
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    if not isinstance(data, dict):
        return []
    items = data.get("interactions") or data.get("http_interactions") or []
    out: list[Interaction] = []
    for i, item in enumerate(items):
        request, response = item["request"], item["response"]
        out.append(
            Interaction(
                source=path.relative_to(root).as_posix(),
                index=i,
                uri=str(request.get("uri", "")),
                request_body=_body(request),
                status=_status(response),
                headers=_headers(response),
                body=_body(response),
            )
        )
    return out


@lru_cache(maxsize=4)
def _all(root: Path) -> tuple[Interaction, ...]:
    out: list[Interaction] = []
    for path in sorted([*root.rglob("*.yaml"), *root.rglob("*.yml")]):
        out.extend(load_interactions(path, root))
    return tuple(out)


def all_interactions(root: Path) -> list[Interaction]:
    """Every interaction of every YAML cassette under ``root``, in path order (parsed once)."""
    return list(_all(root))
