"""Crafted bundles against ``bundle import`` and ``verify``: a message, DEST untouched, bounded memory.

Every bundle is built here from scratch (a valid ``bundle.json`` with a correct self digest,
then one thing wrong), so each case fails for the reason it names and no other.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from oracleproto.primitives.hashing import canonical_json, sha256_hex
from oracleproto.verify import bundle_import
from oracleproto.verify.bundle_import import (
    _copy_checked,
    _MeteredReader,
    _read_manifest,
    _regular,
    import_bundle,
)
from oracleproto.verify.bundle_schema import (
    FORMAT,
    MAX_BUNDLE_BYTES,
    MAX_MANIFEST_BYTES,
    MAX_MEMBER_BYTES,
    BundleError,
    BundleManifest,
    check_member_name,
    parse_bundle_manifest,
)
from tests.hostile import peak_rss, run_main, tree

#: An absolute member path outside every folder (the system temp dir, not this machine's layout).
ESCAPE = Path(tempfile.gettempdir()) / "oracleproto-escape.txt"

RUN_ID = "20260101-000000-ab12"
MANIFEST = f"run/{RUN_ID}/manifest.json"
DB = f"run/{RUN_ID}/db/m.db"
GIB = 1024**3
_ZEROS = 16 * 1024 * 1024


@dataclass
class Member:
    """One tar member: a regular file by default, or any other tar type."""

    name: str
    data: bytes = b""
    kind: bytes = tarfile.REGTYPE
    size: int | None = None  # the tar header's size when it must differ from len(data)
    link: str = ""
    pax: dict[str, str] = field(default_factory=dict)

    def header(self) -> bytes:
        info = tarfile.TarInfo(self.name)
        info.type, info.linkname = self.kind, self.link
        info.size = len(self.data) if self.size is None else self.size
        info.pax_headers = self.pax
        return info.tobuf(tarfile.PAX_FORMAT if self.pax else tarfile.USTAR_FORMAT)


def manifest_bytes(listed: dict[str, bytes], **changes: Any) -> bytes:
    """A ``bundle.json`` listing ``listed`` with a correct self digest; ``changes`` edit its body first."""
    body: dict[str, Any] = {
        "format": FORMAT,
        "run_id": RUN_ID,
        "dataset": {"sha256": "0" * 64, "member": None},
        "members": {n: {"sha256": sha256_hex(d), "size": len(d)} for n, d in sorted(listed.items())},
    }
    for key, value in changes.items():
        if value is _DROP:
            del body[key]
        else:
            body[key] = value
    return json.dumps({**body, "self_digest": sha256_hex(canonical_json(body))}).encode()


_DROP = object()
GOOD = {MANIFEST: b"{}\n", DB: b"sqlite bytes"}


def write_bundle(path: Path, members: list[Member], *, zeros: int = 0) -> Path:
    """Gzip a tar of ``members``; ``zeros`` bytes of the last member's data are streamed as zero blocks.

    A gzip file may hold several members, so a 2 GiB run of zeros is one small compressed chunk
    repeated: the archive stays ~2 MB without compressing 2 GiB in the test.
    """
    head = io.BytesIO()
    for member in members:
        head.write(member.header())
        if member.kind == tarfile.REGTYPE and member.size is None:
            head.write(member.data + b"\0" * (-len(member.data) % 512))
    chunk = gzip.compress(b"\0" * _ZEROS, compresslevel=9) if zeros else b""
    with path.open("wb") as out:
        out.write(gzip.compress(head.getvalue()))
        for _ in range(zeros // _ZEROS):
            out.write(chunk)
        out.write(gzip.compress(b"\0" * 1024))
    return path


def regular(listed: dict[str, bytes]) -> list[Member]:
    return [Member(n, d) for n, d in sorted(listed.items())]


def bundle_of(*members: Member, manifest: bytes | None = None) -> Callable[[Path], Path]:
    """A case: bundle.json (for GOOD unless given) first, then ``members``."""
    first = Member("bundle.json", manifest if manifest is not None else manifest_bytes(GOOD))
    return lambda path: write_bundle(path, [first, *members])


def bomb(listed_size: int) -> Callable[[Path], Path]:
    """A ~2 MB bundle holding a 2 GiB member, listed in bundle.json with ``listed_size`` bytes."""

    def build(path: Path) -> Path:
        listed = manifest_bytes({MANIFEST: GOOD[MANIFEST]})
        doc = json.loads(listed)
        body = {k: v for k, v in doc.items() if k != "self_digest"}
        body["members"][DB] = {"sha256": "0" * 64, "size": listed_size}
        text = json.dumps({**body, "self_digest": sha256_hex(canonical_json(body))}).encode()
        members = [Member("bundle.json", text), Member(MANIFEST, GOOD[MANIFEST]), Member(DB, size=2 * GIB)]
        return write_bundle(path, members, zeros=2 * GIB)

    return build


def not_gzip(path: Path) -> Path:
    path.write_bytes(b"PK\x03\x04 this is a zip, not a .tar.gz")
    return path


def truncated(path: Path) -> Path:
    data = write_bundle(path, [Member("bundle.json", manifest_bytes(GOOD)), *regular(GOOD)]).read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


GOOD_MEMBERS = regular(GOOD)
CASES: list[tuple[str, Callable[[Path], Path], str]] = [
    (
        "bundle.json without run_id",
        bundle_of(*GOOD_MEMBERS, manifest=manifest_bytes(GOOD, run_id=_DROP)),
        r"bundle\.json is not a valid bundle manifest: run_id: Field required",
    ),
    (
        "bundle.json without dataset",
        bundle_of(*GOOD_MEMBERS, manifest=manifest_bytes(GOOD, dataset=_DROP)),
        r"bundle\.json is not a valid bundle manifest: dataset: Field required",
    ),
    (
        "member entry not an object",
        bundle_of(*GOOD_MEMBERS, manifest=manifest_bytes(GOOD, members={MANIFEST: "abc", DB: 3})),
        rf"members\.{MANIFEST}: Input should be a valid dictionary",
    ),
    (
        "member size as a string",
        bundle_of(
            *GOOD_MEMBERS,
            manifest=manifest_bytes(
                GOOD, members={n: {"sha256": sha256_hex(d), "size": "1"} for n, d in GOOD.items()}
            ),
        ),
        rf"members\.{DB}\.size: Input should be a valid integer",
    ),
    (
        "run id ../x",
        bundle_of(*GOOD_MEMBERS, manifest=manifest_bytes(GOOD, run_id="../x")),
        r"run_id: Value error, invalid run id '\.\./x'",
    ),
    (
        "unknown format",
        bundle_of(manifest=manifest_bytes(GOOD, format="tarball/9")),
        r"format is 'tarball/9'",
    ),
    (
        "self digest wrong",
        bundle_of(manifest=manifest_bytes(GOOD).replace(b'"self_digest": "', b'"self_digest": "0')),
        r"bundle\.json is damaged: its self_digest does not match",
    ),
    ("bundle.json not JSON", bundle_of(manifest=b"{not json"), r"bundle\.json is not valid JSON"),
    (
        "bundle.json too large",
        bundle_of(manifest=b" " * (MAX_MANIFEST_BYTES + 1)),
        rf"bundle\.json is {MAX_MANIFEST_BYTES + 1:,} bytes, over {MAX_MANIFEST_BYTES:,}",
    ),
    (
        "bundle.json not first",
        lambda p: write_bundle(p, [*GOOD_MEMBERS, Member("bundle.json", manifest_bytes(GOOD))]),
        rf"the first member is '{DB}', not bundle\.json",
    ),
    (
        "member bigger than declared",
        bundle_of(Member(MANIFEST, GOOD[MANIFEST]), Member(DB, GOOD[DB] + b"+ hidden payload")),
        rf"member {DB} is 28 bytes in the archive but bundle\.json lists 12",
    ),
    (
        "member changed",
        bundle_of(Member(MANIFEST, GOOD[MANIFEST]), Member(DB, b"SQLITE BYTES")),
        rf"member {DB} does not match its sha256",
    ),
    (
        "member missing",
        bundle_of(Member(MANIFEST, GOOD[MANIFEST])),
        rf"member {DB} is listed in bundle\.json but missing",
    ),
    (
        "member not listed",
        bundle_of(*GOOD_MEMBERS, Member(f"run/{RUN_ID}/extra.txt", b"x")),
        rf"member run/{RUN_ID}/extra\.txt is not listed",
    ),
    ("member twice", bundle_of(*GOOD_MEMBERS, Member(DB, GOOD[DB])), rf"member {DB} appears twice"),
    ("../ member", bundle_of(Member(f"run/{RUN_ID}/../../../escape.txt", b"x")), r"escapes its folder"),
    (
        "absolute member",
        bundle_of(Member(str(ESCAPE), b"x")),
        re.escape(f"'{ESCAPE}' escapes"),
    ),
    (
        "other run's member",
        bundle_of(Member("run/20990101-000000-ffff/x", b"x")),
        r"outside the bundle layout",
    ),
    (
        "top-level member",
        bundle_of(Member("evil.sh", b"x")),
        r"member 'evil\.sh' is outside the bundle layout",
    ),
    (
        "symlink member",
        bundle_of(Member(DB, kind=tarfile.SYMTYPE, link="/etc/passwd")),
        rf"member '{DB}' is a symlink, not a regular file",
    ),
    (
        "hard link member",
        bundle_of(Member(DB, kind=tarfile.LNKTYPE, link="/etc/passwd")),
        rf"member '{DB}' is a hard link",
    ),
    ("device member", bundle_of(Member(DB, kind=tarfile.CHRTYPE)), rf"member '{DB}' is a device or fifo"),
    ("fifo member", bundle_of(Member(DB, kind=tarfile.FIFOTYPE)), rf"member '{DB}' is a device or fifo"),
    ("directory member", bundle_of(Member(f"run/{RUN_ID}/db", kind=tarfile.DIRTYPE)), r"is a directory"),
    (
        "dataset member not listed",
        bundle_of(manifest=manifest_bytes(GOOD, dataset={"sha256": "0" * 64, "member": "dataset/x.db"})),
        r"dataset\.member 'dataset/x\.db' is not a listed dataset/ member",
    ),
    (
        "gzip bomb declared 2 GiB",
        bomb(2 * GIB),
        rf"member {DB} declares 2,147,483,648 bytes, over the per-member limit",
    ),
    (
        "gzip bomb declared small",
        bomb(12),
        rf"member {DB} is 2,147,483,648 bytes in the archive but bundle\.json lists 12",
    ),
    (
        "bomb in a tar header",
        bundle_of(
            Member(MANIFEST, GOOD[MANIFEST], pax={"comment": "x" * (64 * 1024 * 1024)}), Member(DB, GOOD[DB])
        ),
        r"decompresses to more than [\d,]+ bytes, more than its members declare",
    ),
    ("not gzip", not_gzip, r"not a readable \.tar\.gz bundle"),
    ("truncated", truncated, r"not a readable \.tar\.gz bundle"),
]


def test_the_crafting_helpers_make_an_importable_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = bundle_of(*GOOD_MEMBERS)(tmp_path / "good.tar.gz")
    code, output = run_main(capsys, monkeypatch, "bundle", "import", bundle, tmp_path / "dest")
    assert code == 0, output
    assert (tmp_path / "dest" / DB).read_bytes() == GOOD[DB]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_crafted_bundle_is_refused_and_dest_is_left_as_it_was(
    case: tuple[str, Callable[[Path], Path], str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, build, message = case
    bundle = build(tmp_path / "hostile.tar.gz")
    empty = tmp_path / "empty"
    empty.mkdir()
    nested = tmp_path / "new" / "deeper" / "dest"
    for dest in (empty, nested):
        before = tree(tmp_path)
        code, output = run_main(capsys, monkeypatch, "bundle", "import", bundle, dest)
        assert code == 2, output
        assert output.startswith(f"error: {bundle}: "), output
        assert re.search(message, output), (case, output)
        assert tree(tmp_path) == before  # DEST as it was, no temp sibling, no created parent
    assert not ESCAPE.exists()


def test_verify_of_a_crafted_bundle_fails_without_leaving_its_temp_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    bundle = bundle_of(*GOOD_MEMBERS, manifest=manifest_bytes(GOOD, run_id="../x"))(tmp_path / "h.tar.gz")
    code, output = run_main(capsys, monkeypatch, "verify", bundle, "--quiet")
    assert code == 1, output
    assert "FAIL  bundle members" in output and "invalid run id '../x'" in output
    assert list(temp.iterdir()) == []


def test_peak_memory_of_import_on_a_2_gib_member_bundle(tmp_path: Path) -> None:
    """The issue's case: a ~2 MB bundle holding a 2 GiB member once reached 2.18 GB RSS."""
    figures = []
    for listed in (2 * GIB, 12):
        bundle = bomb(listed)(tmp_path / f"bomb-{listed}.tar.gz")
        code, output, rss = peak_rss("bundle", "import", bundle, tmp_path / f"dest-{listed}")
        assert code == 2 and "refusing to import" in output, output
        assert not (tmp_path / f"dest-{listed}").exists()
        figures.append(f"listed {listed:,} B: peak RSS {rss:.0f} MB (bundle {bundle.stat().st_size:,} B)")
        assert rss < 300, figures
    print("bundle import of a 2 GiB-member bundle:", "; ".join(figures))


# --- bundle.json and member names, checked directly (no archive) -------------------------------


def _parse(listed: dict[str, int], **changes: Any) -> BundleManifest:
    body: dict[str, Any] = {
        "format": FORMAT,
        "run_id": RUN_ID,
        "dataset": {"sha256": "0" * 64, "member": None},
        "members": {name: {"sha256": "a" * 64, "size": size} for name, size in sorted(listed.items())},
    }
    body.update(changes)
    raw = json.dumps({**body, "self_digest": sha256_hex(canonical_json(body))}).encode()
    parsed, model = parse_bundle_manifest(raw, "b.tar.gz")
    assert parsed == body
    return model


@pytest.mark.parametrize(
    "name",
    [f"run/{RUN_ID}/manifest.json", f"run/{RUN_ID}/db/m.db", "dataset/x.db", "expected/table3_overall.md"],
)
def test_a_member_inside_the_layout_is_accepted(name: str) -> None:
    assert check_member_name(name, RUN_ID, "w") == name
    assert check_member_name(name, None, "w") == name


@pytest.mark.parametrize(
    "name",
    [
        "dataset/sub/x.db",
        "expected/a/b.md",
        "expected",
        "other/x",
        f"run/{RUN_ID}",
        "run/20260101-000000-ffff/manifest.json",
        f"run/{RUN_ID}//manifest.json",
        f"run/{RUN_ID}/./manifest.json",
    ],
)
def test_a_member_outside_the_layout_is_refused_naming_it(name: str) -> None:
    message = (
        rf"^w: member {re.escape(repr(name))} is outside the bundle layout \(run/<run_id>/…, "
        r"dataset/<file>, expected/<file>\); refusing to import$"
    )
    with pytest.raises(BundleError, match=message):
        check_member_name(name, RUN_ID, "w")


def test_a_member_of_another_run_is_refused_in_the_manifest() -> None:
    other = "run/20260101-000000-ffff/db/m.db"
    with pytest.raises(
        BundleError, match=rf"^b\.tar\.gz: bundle\.json: member '{other}' is outside the bundle"
    ):
        _parse({MANIFEST: 2, other: 1})


def test_a_manifest_that_is_not_an_object_says_what_it_is() -> None:
    with pytest.raises(BundleError, match=r"^b\.tar\.gz: bundle\.json: expected a JSON object, got list$"):
        parse_bundle_manifest(b"[]", "b.tar.gz")


def test_every_invalid_field_is_named_with_its_path() -> None:
    with pytest.raises(BundleError) as caught:
        _parse({MANIFEST: 2}, dataset={"sha256": "0" * 64}, extra=1)
    message = str(caught.value)
    prefix = "b.tar.gz: bundle.json is not a valid bundle manifest: "
    assert message.startswith(prefix)
    problems = message.removeprefix(prefix).split("; ")
    assert sorted(p.split(":")[0] for p in problems) == ["dataset.member", "extra"], problems


def test_the_size_limits_are_inclusive() -> None:
    at_member_limit = _parse({MANIFEST: 0, f"run/{RUN_ID}/db/a.db": MAX_MEMBER_BYTES})
    assert at_member_limit.total_bytes == MAX_MEMBER_BYTES
    four = {f"run/{RUN_ID}/db/{i}.db": MAX_MEMBER_BYTES for i in range(MAX_BUNDLE_BYTES // MAX_MEMBER_BYTES)}
    assert _parse({MANIFEST: 0, **four}).total_bytes == MAX_BUNDLE_BYTES
    with pytest.raises(
        BundleError,
        match=rf"^b\.tar\.gz: bundle\.json: member run/{RUN_ID}/db/a\.db declares {MAX_MEMBER_BYTES + 1:,} "
        rf"bytes, over the per-member limit of {MAX_MEMBER_BYTES:,}; refusing to import$",
    ):
        _parse({MANIFEST: 0, f"run/{RUN_ID}/db/a.db": MAX_MEMBER_BYTES + 1})
    with pytest.raises(
        BundleError,
        match=rf"^b\.tar\.gz: bundle\.json: members total {MAX_BUNDLE_BYTES + 1:,} bytes, over the bundle "
        rf"limit of {MAX_BUNDLE_BYTES:,}; refusing to import$",
    ):
        _parse({MANIFEST: 1, **four})


# --- copying a member: exactly its size, hashed, refused when short -----------------------------


def test_a_member_is_copied_to_exactly_its_size_across_chunks(tmp_path: Path) -> None:
    data = bytes(range(256)) * (5 * 4096 + 3)  # over 5 MiB: several 1 MiB chunks and a short one
    source = io.BytesIO(data + b"bytes past the member")
    digest = _copy_checked(source, tmp_path / "m", len(data), "m", "w")
    assert (tmp_path / "m").read_bytes() == data and digest == sha256_hex(data)
    assert source.read() == b"bytes past the member"  # nothing past the member was read


def test_a_short_member_is_refused_with_what_arrived(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match=r"^w: member m is truncated \(3 of 1,000 bytes\)$"):
        _copy_checked(io.BytesIO(b"abc"), tmp_path / "m", 1000, "m", "w")


def test_the_metered_reader_stops_at_its_budget() -> None:
    reader = _MeteredReader(io.BytesIO(b"x" * 10), 10, "w")
    assert reader.read(4) == b"xxxx" and reader.read() == b"x" * 6 and reader.consumed == 10
    assert reader.read() == b""
    over = _MeteredReader(io.BytesIO(b"x" * 11), 10, "w")
    assert over.read(6) == b"x" * 6
    with pytest.raises(BundleError, match=r"^w: decompresses to more than 10 bytes, more than its members"):
        over.read(100)


def test_the_metered_reader_reads_at_most_one_byte_past_its_budget() -> None:
    raw = io.BytesIO(b"x" * 100)
    reader = _MeteredReader(raw, 10, "w")
    assert reader.consumed == 0
    assert reader.read(0) == b"" and raw.tell() == 0  # nothing asked, nothing read
    assert reader.read(8) == b"x" * 8
    assert reader.read(2) == b"xx" and reader.consumed == 10  # exactly the budget is fine
    with pytest.raises(BundleError, match="decompresses to more than 10 bytes"):
        reader.read()
    assert raw.tell() == 11  # one byte past the budget tells a bomb; no more was decompressed
    for size in (-1, 50):
        raw = io.BytesIO(b"x" * 100)
        reader = _MeteredReader(raw, 10, "w")
        assert reader.read(4) == b"xxxx"
        with pytest.raises(BundleError):
            reader.read(size)
        assert raw.tell() == 11, size


@pytest.mark.parametrize(
    ("kind", "what"),
    [
        (tarfile.GNUTYPE_SPARSE, "a sparse file"),
        (tarfile.SYMTYPE, "a symlink"),
        (tarfile.LNKTYPE, "a hard link"),
        (tarfile.DIRTYPE, "a directory"),
        (tarfile.FIFOTYPE, "a device or fifo"),
        (tarfile.CHRTYPE, "a device or fifo"),
    ],
)
def test_a_member_that_is_not_a_regular_file_is_named_by_its_kind(kind: bytes, what: str) -> None:
    info = tarfile.TarInfo("x")
    info.type = kind
    if kind == tarfile.GNUTYPE_SPARSE:
        info.sparse = [(0, 0)]  # what tarfile sets when it reads a GNU sparse member's map
    message = rf"^w: member 'x' is {what}, not a regular file; refusing to import$"
    with pytest.raises(BundleError, match=message):
        _regular(info, "w")
    regular_file = tarfile.TarInfo("y")
    assert _regular(regular_file, "w") == "y"


def _tar(*members: Member) -> tarfile.TarFile:
    data = b"".join(m.header() + m.data + b"\0" * (-len(m.data) % 512) for m in members) + b"\0" * 1024
    return tarfile.open(fileobj=io.BytesIO(data), mode="r|")


def test_an_empty_archive_has_nothing_first() -> None:
    with (
        _tar() as tar,
        pytest.raises(
            BundleError, match=r"^w: the first member is nothing, not bundle\.json; not an oracleproto"
        ),
    ):
        _read_manifest(tar, "w")


def test_a_bundle_json_that_is_a_link_is_refused_with_where() -> None:
    link = Member("bundle.json", kind=tarfile.SYMTYPE, link="elsewhere")
    with _tar(link) as tar, pytest.raises(BundleError, match=r"^w: member 'bundle\.json' is a symlink"):
        _read_manifest(tar, "w")


def test_a_bundle_json_of_exactly_the_limit_imports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = manifest_bytes(GOOD)
    padded = text + b" " * (MAX_MANIFEST_BYTES - len(text))  # JSON allows trailing blanks
    bundle = bundle_of(*GOOD_MEMBERS, manifest=padded)(tmp_path / "at-limit.tar.gz")
    code, output = run_main(capsys, monkeypatch, "bundle", "import", bundle, tmp_path / "dest")
    assert code == 0, output
    over = bundle_of(*GOOD_MEMBERS, manifest=padded + b" ")(tmp_path / "over.tar.gz")
    code, output = run_main(capsys, monkeypatch, "bundle", "import", over, tmp_path / "dest2")
    assert (
        code == 2
        and f"bundle.json is {MAX_MANIFEST_BYTES + 1:,} bytes, over {MAX_MANIFEST_BYTES:,}" in output
    )


@pytest.mark.parametrize("existing", ["file", "non-empty folder"])
def test_import_into_something_that_exists_is_refused_untouched(tmp_path: Path, existing: str) -> None:
    bundle = bundle_of(*GOOD_MEMBERS)(tmp_path / "good.tar.gz")
    dest = tmp_path / "dest"
    if existing == "file":
        dest.write_bytes(b"mine\n")
    else:
        dest.mkdir()
        (dest / "mine").write_bytes(b"mine\n")
    before = tree(tmp_path)
    message = rf"^{re.escape(str(dest))} exists and is not empty; import into a new or empty folder$"
    with pytest.raises(BundleError, match=message):
        import_bundle(bundle, dest)
    assert tree(tmp_path) == before


def test_a_bundle_that_cannot_be_opened_names_the_reason(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder.tar.gz"
    folder.mkdir()
    with pytest.raises(BundleError, match=rf"^{re.escape(str(folder))}: cannot import \(Is a directory\)$"):
        import_bundle(folder, tmp_path / "dest")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-folder.tar.gz"]


def test_a_failure_to_create_the_lock_is_raised_as_it_is_and_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = bundle_of(*GOOD_MEMBERS)(tmp_path / "good.tar.gz")
    failure = OSError(24, "Too many open files")

    def no_more_files(*args: object, **kwargs: object) -> object:
        raise failure

    monkeypatch.setattr(bundle_import, "open", no_more_files, raising=False)
    with pytest.raises(OSError) as caught:
        import_bundle(bundle, tmp_path / "new" / "dest")
    assert caught.value is failure
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.tar.gz"]  # no temp folder, no parent
