"""Hostile cassette YAML: aliases, anchors, deep nesting, oversized entries and files, duplicates."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml
import yaml.scanner

from oracleproto.errors import CassetteIntegrityError
from oracleproto.transport import safe_yaml
from oracleproto.transport.entry import interaction_digest, to_interaction
from oracleproto.transport.fileio import dump_entries, parse_entries, read_entries
from oracleproto.transport.layout import cassette_files
from oracleproto.transport.safe_yaml import MAX_DEPTH, load_untrusted
from oracleproto.verify.demo import find_demo_run
from tests.transport.test_keys_and_store import _entry

#: These tests are about the parse itself (some patch the loader): no memo (tests/cassette_memo.py).
pytestmark = pytest.mark.yaml_parsed


def billion_laughs(levels: int = 9) -> bytes:
    """The classic: each level is nine aliases of the one before (9**levels strings once expanded)."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]")
    return ("\n".join(lines) + f"\ninteractions: [*l{levels}]\nversion: 1\n").encode()


def _one_entry() -> bytes:
    return dump_entries([_entry("a" * 64)])


DEEPER = rf"nesting at line \d+, column \d+: deeper than {MAX_DEPTH} levels"
HOSTILE: list[tuple[str, bytes, str]] = [
    (
        "billion laughs (lists)",
        billion_laughs(),
        r"refused: anchor \(&name\) at line 1, column 5: cassettes never use",
    ),
    (
        "billion laughs (mappings)",
        b"a: &a {x: 1, y: 1}\nb: &b {x: *a, y: *a, z: *a}\nc: &c {x: *b, y: *b, z: *b}\ninteractions: [*c]\n",
        r"anchor \(&name\) at line",
    ),
    ("merge key", b"base: &b {k: v}\ninteractions:\n- <<: *b\n", r"anchor \(&name\) at line"),
    ("self-recursive alias", b"interactions: &loop [*loop]\n", r"anchor \(&name\) at line"),
    ("alias without anchor", b"interactions: [*nowhere]\n", r"alias \(\*name\) at line 1, column 16"),
    ("anchor on a scalar", b"interactions: []\nversion: &v 1\n", r"anchor \(&name\) at line 2, column 10"),
    ("deep flow lists", b"interactions: " + b"[" * 100_000 + b"]" * 100_000, DEEPER),
    ("deep flow maps", b"interactions: " + b"{a: " * 100_000 + b"}" * 100_000, DEEPER),
    ("deep block lists", b"interactions:\n" + b"- " * 100_000 + b"x\n", DEEPER),
    ("two documents", _one_entry() + b"---\n" + _one_entry(), "a second document at line"),
    (
        "python object tag",
        b"interactions: !!python/object/apply:os.system ['echo hi']\n",
        r"tag tag:yaml\.org,2002:python/object/apply:os\.system at line 1, column 15",
    ),
    (
        "python scalar tag",
        b"interactions: [!!python/name:os.system '']\n",
        r"not valid YAML \(could not determine a constructor for the tag 'tag:yaml\.org,2002:python/name:os",
    ),
    ("set tag", b"interactions: !!set {a, b}\n", r"tag tag:yaml\.org,2002:set at line 1"),
    (
        "merge key without alias",
        b"interactions:\n- <<: {a: 1}\n",
        r"constructor for the tag 'tag:yaml\.org,2002:merge'",
    ),
    ("list as a key", b"interactions:\n- ? [a]\n  : b\n", r"a list or mapping as a key at line 2, column 7"),
    ("not YAML", b"interactions: [unclosed\n", "not valid YAML"),
    ("empty file", b"", "not a cassette"),
]


@pytest.mark.parametrize(("case", "data", "message"), HOSTILE, ids=[c[0] for c in HOSTILE])
def test_hostile_yaml_is_refused_with_file_and_position(case: str, data: bytes, message: str) -> None:
    with pytest.raises(CassetteIntegrityError, match=r"^cassettes/llm/m\.yaml: ") as info:
        parse_entries(data, "cassettes/llm/m.yaml")
    assert info.match(message), (case, str(info.value))


def test_a_duplicated_entry_is_refused() -> None:
    text = _one_entry().decode()
    head, body = text.split("interactions:\n", 1)
    entry, tail = body.split("version:", 1)
    doubled = f"{head}interactions:\n{entry}{entry}version:{tail}".encode()
    with pytest.raises(
        CassetteIntegrityError, match=r"m\.yaml, entry #1: duplicate of entry #0 \(key a{64}\)"
    ):
        parse_entries(doubled, "m.yaml")


def test_entry_and_file_size_limits(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    data = dump_entries([_entry("a" * 64), _entry("b" * 64, b"x" * 5000)])
    assert len(parse_entries(data, "m.yaml")) == 2
    monkeypatch.setattr(safe_yaml, "MAX_ENTRY_CHARS", 4000)
    with pytest.raises(
        CassetteIntegrityError,
        match=r"m\.yaml: refused: entry #1: [\d,]+ characters of YAML, over the entry limit of 4,000",
    ):
        parse_entries(data, "m.yaml")
    path = tmp_path / "search.yaml"
    path.write_bytes(data)
    monkeypatch.setattr(safe_yaml, "MAX_CASSETTE_FILE_BYTES", len(data) - 1)
    with pytest.raises(
        CassetteIntegrityError, match=rf"search\.yaml: {len(data):,} bytes, over the cassette file"
    ):
        read_entries(path)


def test_a_symlinked_cassette_file_leading_out_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "secret.yaml"
    outside.write_bytes(_one_entry())
    root = tmp_path / "cassettes"
    (root / "llm").mkdir(parents=True)
    (root / "llm" / "m.yaml").symlink_to(outside)
    with pytest.raises(CassetteIntegrityError, match=r"cassette file .*m\.yaml leads outside"):
        cassette_files(root, 0)


def test_a_committed_cassette_loads_as_with_the_plain_loader() -> None:
    for path in [find_demo_run() / "cassettes" / "search.yaml"]:
        data = path.read_bytes()
        assert load_untrusted(data) == yaml.load(data, Loader=yaml.CSafeLoader), path
        assert dump_entries(parse_entries(data, str(path))) == data


def test_the_dumper_never_writes_anchors_for_shared_objects() -> None:
    first = _entry("a" * 64)
    second = dataclasses.replace(first, key="b" * 64)  # shares attempts, headers and meta with ``first``
    assert second.attempts is first.attempts
    data = dump_entries([first, second])
    assert b"&id" not in data and b"*id" not in data
    assert [e.key for e in parse_entries(data, "m.yaml")] == ["a" * 64, "b" * 64]


def _crafted(path: tuple[str, ...], value: object) -> bytes:
    """One entry with ``path`` set to ``value`` and its digest recomputed (a digest is no signature)."""
    interaction = to_interaction(_entry("a" * 64))
    target = interaction
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    interaction["oracleproto"]["digest"] = interaction_digest(interaction)
    return yaml.dump({"interactions": [interaction], "version": 1}, Dumper=yaml.SafeDumper).encode()


CRAFTED = [
    (("response", "status", "code"), "200", r"response\.status\.code must be an integer, got str"),
    (("response", "status", "code"), True, r"response\.status\.code must be an integer, got bool"),
    (("request", "headers"), ["x"], r"request\.headers must be a mapping, got list"),
    (("response", "headers"), {"x": "y"}, r"response\.headers\['x'\] must be a list of strings"),
    (("response", "body", "string"), 7, r"response\.body\.string must be a string or bytes, got int"),
    (("oracleproto", "latency_ms"), None, r"oracleproto\.latency_ms must be an integer, got NoneType"),
    (("oracleproto", "context"), {"model": "m"}, r"oracleproto\.context must have model and question_id"),
]


@pytest.mark.parametrize(("path", "value", "message"), CRAFTED, ids=[".".join(c[0]) for c in CRAFTED])
def test_an_entry_with_a_matching_digest_but_wrong_types_is_refused(
    path: tuple[str, ...], value: object, message: str
) -> None:
    with pytest.raises(CassetteIntegrityError, match=rf"^m\.yaml, entry #0: entry a{{64}}: {message}"):
        parse_entries(_crafted(path, value), "m.yaml")


def test_libyamls_own_nesting_cap_is_reported_as_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    # libyaml 0.2.5 (PyYAML >= 6.0.4 wheels) stops deep flow nesting in its scanner, ahead of our cap.
    mark = yaml.Mark("<byte string>", 1013, 0, 1013, None, None)

    def scanner_cap(self: object, *args: object) -> object:
        raise yaml.scanner.ScannerError(
            "while increasing flow level", mark, "exceeded maximum nesting depth", mark
        )

    monkeypatch.setattr(safe_yaml.NoAliasLoader, "load_document", scanner_cap)
    with pytest.raises(CassetteIntegrityError) as info:
        parse_entries(b"interactions: []\n", "cassettes/llm/m.yaml")
    assert str(info.value).startswith(
        "cassettes/llm/m.yaml: refused: nesting at line 1, column 1014: deeper than 64 levels; "
    )
