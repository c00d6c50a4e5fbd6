"""Bad input of ``store push|pull|ls`` and of ``--from-store``: every case refused before a byte
moves, with a message saying what, where and how to fix it (no server needed: each is caught
while the URL, the environment, the reference or the run is read)."""

from __future__ import annotations

import json
from pathlib import Path

from bad_input_support import RUN_ID, Case, all_of, in_run, mkdir, write

STORE = "file://{cwd}/st"
#: The environment of every case: no store or AWS variable leaks in from the machine running the tests.
CLEAN = {
    "CASSETTE_STORE": "",
    "AWS_ACCESS_KEY_ID": "",
    "AWS_SECRET_ACCESS_KEY": "",
    "AWS_ENDPOINT_URL_S3": "",
    "AWS_ENDPOINT_URL": "",
}
ZERO = "0" * 64


def _index(**changes: object) -> str:
    doc: dict[str, object] = {
        "format": "oracleproto-run-index/1",
        "run_id": RUN_ID,
        "dataset": {"sha256": ZERO, "name": None, "size": None},
        "cassette_root": None,
        "files": {
            "manifest.json": {"sha256": ZERO, "size": 1},
            "attestation.json": {"sha256": ZERO, "size": 1},
        },
    }
    return json.dumps({**doc, **changes})


def _unseal(run: Path) -> None:
    (run / "attestation.json").unlink()


def _edit_after_seal(run: Path) -> None:
    table = run / "analysis" / "table3_overall.md"
    table.write_text(table.read_text() + "\n")


def _case(cid: str, args: tuple[str, ...], code: int, message: str, **kw: object) -> Case:
    env = {**CLEAN, **kw.pop("env", {})}  # type: ignore[dict-item]
    return Case(f"store:{cid}", args, code, message, env=env, **kw)  # type: ignore[arg-type]


def store_cases() -> list[Case]:
    """The table's rows for the cassette store."""
    ls = ("store", "ls", "--store")
    return [
        _case(
            "no-store", ("store", "ls"), 2, "no cassette store given: pass --store URL or set CASSETTE_STORE"
        ),
        _case("push-no-store", ("store", "push", "demo"), 2, "no cassette store given"),
        _case("scheme", (*ls, "ftp://host/x"), 2, "scheme 'ftp' is not supported"),
        _case("no-scheme", (*ls, "bucket/prefix"), 2, "no scheme; expected s3://BUCKET/PREFIX"),
        _case("bucket-name", (*ls, "s3://Bad_Bucket/p"), 2, "is not an S3 bucket name"),
        _case("userinfo", (*ls, "s3://AKIAX:secretvalue@bkt/p"), 2, "credentials do not go in the URL"),
        _case("query", (*ls, "s3://bkt/p?X-Amz-Credential=1"), 2, "no query or fragment is accepted"),
        _case("file-relative", (*ls, "file://relative/folder"), 2, "file:///path (three slashes)"),
        _case("dotdot-prefix", (*ls, "s3://bkt/a/../b"), 2, "its prefix holds '.', '..'"),
        _case("no-folder", (*ls, STORE), 2, "no such folder; check the URL"),
        _case(
            "half-credentials",
            (*ls, "s3://bkt/p"),
            2,
            "AWS_SECRET_ACCESS_KEY is not set but AWS_ACCESS_KEY_ID is",
            env={"AWS_ACCESS_KEY_ID": "AKIA" + "IOSFODNN7EXAMPLE"},  # AWS's example, from parts
        ),
        _case(
            "plain-http-remote",
            (*ls, "s3://bkt/p"),
            2,
            "is plain HTTP to another machine",
            env={"AWS_ENDPOINT_URL_S3": "http://storage.example.org:9000"},
        ),
        _case(
            "endpoint-not-url",
            (*ls, "s3://bkt/p"),
            2,
            "expected http(s)://HOST[:PORT]",
            env={"AWS_ENDPOINT_URL_S3": "localhost:9000"},
        ),
        _case(
            "endpoint-userinfo",
            (*ls, "s3://bkt/p"),
            2,
            "credentials do not go in the endpoint URL",
            env={"AWS_ENDPOINT_URL_S3": "https://user:pass@s3.example.org"},
        ),
        _case(
            "retries",
            (*ls, "s3://bkt/p"),
            2,
            "CASSETTE_STORE_RETRIES='many': expected a whole number from 0 to 100",
            env={"CASSETTE_STORE_RETRIES": "many"},
        ),
        _case(
            "jobs",
            (*ls, "s3://bkt/p"),
            2,
            "CASSETTE_STORE_JOBS='0': expected a whole number from 1 to 64",
            env={"CASSETTE_STORE_JOBS": "0"},
        ),
        _case(
            "pull-bad-ref",
            ("store", "pull", "not a run", "dest", "--store", STORE),
            2,
            "expected a run id (YYYYMMDD-HHMMSS-xxxx), an index digest",
            setup=mkdir("st"),
        ),
        _case(
            "pull-no-run",
            ("store", "pull", RUN_ID, "dest", "--store", STORE),
            2,
            f"holds no run '{RUN_ID}'; `oracleproto store ls` lists the runs it holds",
            setup=mkdir("st"),
        ),
        _case(
            "pull-no-digest",
            ("store", "pull", "abcdef12", "dest", "--store", STORE),
            2,
            "holds no run 'abcdef12'",
            setup=mkdir("st"),
        ),
        _case(
            "pull-dest-not-empty",
            ("store", "pull", RUN_ID, "dest", "--store", STORE),
            2,
            "dest exists and is not empty; pull into a new or empty folder",
            setup=all_of(mkdir("st"), write("dest/x", "x")),
        ),
        _case(
            "pull-index-not-json",
            ("store", "pull", "idx.json", "dest", "--store", STORE),
            2,
            "idx.json: not a run index (not JSON",
            setup=all_of(mkdir("st"), write("idx.json", "{")),
        ),
        _case(
            "pull-index-missing-field",
            ("store", "pull", "idx.json", "dest", "--store", STORE),
            2,
            "not a valid run index (format: Field required)",
            setup=all_of(mkdir("st"), write("idx.json", "{}")),
        ),
        _case(
            "pull-index-newer",
            ("store", "pull", "idx.json", "dest", "--store", STORE),
            2,
            "written in 'oracleproto-run-index/2', which this oracleproto does not know",
            setup=all_of(mkdir("st"), write("idx.json", _index(format="oracleproto-run-index/2"))),
        ),
        _case(
            "pull-index-escapes",
            ("store", "pull", "idx.json", "dest", "--store", STORE),
            2,
            "escapes its folder",
            setup=all_of(
                mkdir("st"),
                write(
                    "idx.json",
                    _index(
                        files={
                            "../outside": {"sha256": ZERO, "size": 1},
                            "manifest.json": {"sha256": ZERO, "size": 1},
                            "attestation.json": {"sha256": ZERO, "size": 1},
                        }
                    ),
                ),
            ),
        ),
        _case(
            "pull-index-no-seal",
            ("store", "pull", "idx.json", "dest", "--store", STORE),
            2,
            "no attestation.json listed (every sealed run has one)",
            setup=all_of(
                mkdir("st"), write("idx.json", _index(files={"manifest.json": {"sha256": ZERO, "size": 1}}))
            ),
        ),
        _case(
            "pull-index-bad-run-id",
            ("store", "pull", "idx.json", "dest", "--store", STORE),
            2,
            "run_id: Value error, invalid run id '../x'",
            setup=all_of(mkdir("st"), write("idx.json", _index(run_id="../x"))),
        ),
        _case(
            "pull-index-bad-size",
            ("store", "pull", "idx.json", "dest", "--store", STORE),
            2,
            "files.manifest.json.size: Input should be greater than or equal to 0",
            setup=all_of(
                mkdir("st"),
                write(
                    "idx.json",
                    _index(
                        files={
                            "manifest.json": {"sha256": ZERO, "size": -1},
                            "attestation.json": {"sha256": ZERO, "size": 1},
                        }
                    ),
                ),
            ),
        ),
        _case(
            "push-unsealed",
            ("store", "push", "{run}", "--store", STORE),
            2,
            "is not sealed (no attestation.json); seal it with `oracleproto verify",
            setup=in_run(_unseal),
        ),
        _case(
            "push-changed-after-seal",
            ("store", "push", "{run}", "--store", STORE),
            2,
            "analysis/table3_overall.md changed since the run was sealed",
            setup=in_run(_edit_after_seal),
        ),
        _case(
            "push-no-such-run",
            ("store", "push", "runs/nope", "--store", STORE),
            2,
            "runs/nope",
        ),
        _case(
            "push-a-file",
            ("store", "push", "b.tar.gz", "--store", STORE),
            2,
            "b.tar.gz: is a file, not a run directory; import a bundle first",
            setup=write("b.tar.gz", "x"),
        ),
        _case("verify-from-bad-store", ("verify", RUN_ID, "--from-store", "ftp://x/y"), 2, "scheme 'ftp'"),
        _case(
            "verify-from-store-attest",
            ("verify", RUN_ID, "--from-store", STORE, "--write-attestation"),
            2,
            "--write-attestation seals a run you own; pull it with `store pull` first",
        ),
        _case(
            "replay-from-bad-store",
            ("replay", RUN_ID, "--from-store", "s3://x"),
            2,
            "is not an S3 bucket name",
        ),
        _case(
            "bundle-import-from-store-no-run",
            ("bundle", "import", RUN_ID, "dest", "--from-store", STORE),
            2,
            f"holds no run '{RUN_ID}'",
            setup=mkdir("st"),
        ),
    ]
