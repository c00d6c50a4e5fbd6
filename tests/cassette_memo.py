"""Cassette files parsed once per test worker for each distinct content (a pytest plugin of the suite).

Turning cassette YAML into Python objects (``safe_yaml.load_untrusted``: libyaml's events, one at a
time) is about a seventh of the suite's CPU time, and most of it parses bytes an earlier test of
the worker already parsed: the demo's cassettes, and each recording again for its replay, its
``verify`` and their comparisons. The parse is a function of the bytes and the entry cap alone, so
a worker keeps each successful result by the digest of the bytes, pickled (every reader gets
objects of its own), and hands it out again, passing the interactions to ``on_item`` one by one in
file order as the parse does. Only the parse is skipped: every check after it (entry digests,
types, duplicate keys: ``entry_stream``) runs on every read, and bytes that fail to parse are
parsed again every time.

A test that looks inside the parse (patches the loader) is marked ``yaml_parsed``: it always
parses. ``ORACLEPROTO_TEST_CASSETTE_MEMO=0`` turns the memo off for a whole session. The memo
lives in test workers only (the product, and every child process a test starts, parses every time)
and keeps at most ``CAP_BYTES`` of pickles, the least recently used going first.
"""

from __future__ import annotations

import hashlib
import pickle
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.worker_memo import installed, off_when_marked

MARKER = "yaml_parsed"
ENV_VAR = "ORACLEPROTO_TEST_CASSETTE_MEMO"
CAP_BYTES = 256 << 20
Parse = Callable[..., Any]
Key = tuple[bytes, int, bool]


class CassetteMemo:
    """``load_untrusted`` with its results kept by the digest of the bytes it parsed."""

    def __init__(self, parse: Parse, cap_bytes: int = CAP_BYTES) -> None:
        self.parse = parse
        self.cap_bytes = cap_bytes
        self.enabled = True
        self.kept: OrderedDict[Key, tuple[bytes, list[bytes]]] = OrderedDict()
        self.kept_bytes = 0

    def __call__(
        self, data: bytes, *, max_entry_chars: int, on_item: Callable[[Any], None] | None = None
    ) -> Any:
        if not self.enabled:
            return self.parse(data, max_entry_chars=max_entry_chars, on_item=on_item)
        key = (hashlib.sha256(data).digest(), max_entry_chars, on_item is None)
        kept = self.kept.get(key)
        if kept is not None:
            self.kept.move_to_end(key)
            document, items = kept
            for item in items:
                assert on_item is not None  # items are kept only for a streamed parse
                on_item(pickle.loads(item))
            return pickle.loads(document)
        items: list[bytes] = []

        def keep_then_hand_on(item: Any) -> None:
            items.append(pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL))  # before the reader sees it
            assert on_item is not None
            on_item(item)

        document = self.parse(
            data, max_entry_chars=max_entry_chars, on_item=None if on_item is None else keep_then_hand_on
        )
        self._keep(key, pickle.dumps(document, protocol=pickle.HIGHEST_PROTOCOL), items)
        return document

    def _keep(self, key: Key, document: bytes, items: list[bytes]) -> None:
        size = len(document) + sum(len(item) for item in items)
        if size > self.cap_bytes:
            return
        self.kept[key] = (document, items)
        self.kept_bytes += size
        while self.kept_bytes > self.cap_bytes:
            _, (old_document, old_items) = self.kept.popitem(last=False)
            self.kept_bytes -= len(old_document) + sum(len(item) for item in old_items)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: parses cassette YAML for real (no per-worker memo)")


@pytest.fixture(scope="session", autouse=True)
def _cassette_memo() -> Iterator[CassetteMemo]:
    from oracleproto.transport import entry_stream

    yield from installed(CassetteMemo(entry_stream.load_untrusted), entry_stream, "load_untrusted", ENV_VAR)


@pytest.fixture(autouse=True)
def _yaml_parsed_when_marked(request: pytest.FixtureRequest, _cassette_memo: CassetteMemo) -> Iterator[None]:
    yield from off_when_marked(request, _cassette_memo, MARKER)
