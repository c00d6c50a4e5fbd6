"""The bad-input table: one ``Case`` per mistake a user (or a bad file) can make, per command.

Hostile cassettes, bundles and manifests get a few cases here (``untrusted_cases``) so every
reading command is covered; their own suites (YAML bombs, crafted bundles, peak memory) go deeper.
"""

from __future__ import annotations

from pathlib import Path

from bad_input_calibrate_cases import calibrate_cases
from bad_input_label_cases import label_cases
from bad_input_leakaudit_cases import leakaudit_cases
from bad_input_panel_cases import panel_cases
from bad_input_profile_cases import profile_cases
from bad_input_run_cases import run_ref_cases
from bad_input_setup_cases import setup_cases
from bad_input_store_cases import store_cases
from bad_input_support import (
    RUN_ID,
    Case,
    all_of,
    damaged_page,
    demo_copy,
    fifo,
    in_run,
    mkdir,
    run_db,
    sqlite_db,
    truncated_demo,
    write,
)
from bad_input_text_files import text_file_cases
from bad_input_view_cases import view_cases

from oracleproto.dataset.demo import demo_db_path

NOT_UTF8 = b"MODELS=sim/hasty\nX=caf\xe9\n"
ROW = (
    '{"id": "q1", "choice_type": "single", "question_type": "yes_no", "event": "Will it rain?", '
    '"options": ["Yes", "No"], "answer": "A", "end_time": "2026-03-01"}\n'
)
TEMPLATE_KEYS = ("prompt_template", "agent_role", "output_format_single", "output_format_multi")


#: ``run`` in replay mode (the default) needs a run to replay: its folder is enough to get past that.
REPLAY = ("--run-id", RUN_ID, "--runs-root", "runs")
RECORDED = mkdir(f"runs/{RUN_ID}")


def _db_setups() -> dict[str, tuple[object, str]]:
    """Broken source DBs at ``x.db`` and the message each must give."""
    return {
        "nonexistent": (None, "no such file"),
        "directory": (mkdir("x.db"), "is a directory"),
        "fifo": (fifo("x.db"), "not a regular file"),
        "under-a-file": (write("f", "x"), "no such file"),
        "empty-file": (write("x.db", b""), "no table has the seven question columns"),
        "garbage": (write("x.db", b"this is not sqlite at all" * 10), "not a valid SQLite database"),
        "truncated-header": (truncated_demo("x.db", 50), "not a valid SQLite database"),
        "truncated-half": (truncated_demo("x.db", 8192), "not a valid SQLite database"),
        "damaged-questions-page": (damaged_page("x.db", demo_db_path(), 2), "a page is damaged"),
        "damaged-metadata-page": (damaged_page("x.db", demo_db_path(), 7), "a page is damaged"),
        "wrong-schema": (sqlite_db("x.db", "CREATE TABLE t (a)"), "no table has the seven question columns"),
        "empty-table": (demo_copy("x.db", "DELETE FROM questions"), "table 'questions' is empty (0 rows)"),
        "non-utf8-text": (
            demo_copy("x.db", "UPDATE questions SET event = CAST(X'FF41' AS TEXT) WHERE rowid = 1"),
            "a text value is not valid UTF-8",
        ),
    }


def _path_for(name: str) -> str:
    return "f/x.db" if name == "under-a-file" else "x.db"


def dataset_cases() -> list[Case]:
    """dataset validate / info, render, sim run and run on broken source DBs."""
    cases: list[Case] = []
    for name, (setup, message) in _db_setups().items():
        db = _path_for(name)
        for command in (("dataset", "validate"), ("dataset", "info"), ("render",)):
            if command == ("dataset", "info") and name in (
                "empty-table",
                "non-utf8-text",
                "damaged-metadata-page",
            ):
                continue  # info describes what is there: an empty table is a valid description
            cases.append(Case(f"{'-'.join(command)}:{name}", (*command, db), 2, message, setup))  # type: ignore[arg-type]
        cases.append(
            Case(
                f"run:dataset-{name}",
                ("run", *REPLAY, "--dataset", db, "--no-progress"),
                2,
                message,
                all_of(RECORDED, setup) if setup else RECORDED,  # type: ignore[arg-type]
            )
        )
    validate_more = [
        Case("dataset-validate:no-arg", ("dataset", "validate"), 2, "Missing argument 'DB'"),
        Case(
            "dataset-validate:unknown-table",
            ("dataset", "validate", "{demo_db}", "--table", "nope"),
            2,
            "no table 'nope'; tables in this DB: dataset_metadata, questions",
        ),
        Case(
            "dataset-validate:table-without-columns",
            ("dataset", "validate", "{demo_db}", "--table", "dataset_metadata"),
            2,
            "table 'dataset_metadata' lacks column(s)",
        ),
        Case(
            "dataset-validate:two-question-tables",
            ("dataset", "validate", "x.db"),
            2,
            "several tables have the question columns: q2, questions; choose one with --table",
            demo_copy("x.db", "CREATE TABLE q2 AS SELECT * FROM questions"),
        ),
        Case(
            "dataset-validate:answer-outside-options",
            ("dataset", "validate", "x.db"),
            2,
            "column 'answer': answer letter(s) Z outside the options",
            demo_copy("x.db", "UPDATE questions SET answer = 'Z' WHERE rowid = 1"),
        ),
        Case(
            "dataset-validate:bad-end-time",
            ("dataset", "validate", "x.db"),
            2,
            "column 'end_time': end_time '31/03/2026' is not a date",
            demo_copy("x.db", "UPDATE questions SET end_time = '31/03/2026' WHERE rowid = 1"),
        ),
        Case(
            "dataset-validate:options-not-json",
            ("dataset", "validate", "x.db"),
            2,
            "options is not valid JSON",
            demo_copy("x.db", "UPDATE questions SET options = 'not json' WHERE rowid = 1"),
        ),
        Case(
            "dataset-validate:no-features-column",
            ("dataset", "validate", "x.db"),
            2,
            "table dataset_metadata has no features_json column",
            demo_copy("x.db", "ALTER TABLE dataset_metadata DROP COLUMN features_json"),
        ),
        Case(
            "dataset-validate:features-not-json",
            ("dataset", "validate", "x.db"),
            2,
            "column 'features_json': features_json is not valid JSON",
            demo_copy("x.db", "UPDATE dataset_metadata SET features_json = '{oops'"),
        ),
        Case("dataset-info:no-arg", ("dataset", "info"), 2, "Missing argument 'DB'"),
        Case(
            "dataset-info:unknown-table",
            ("dataset", "info", "{demo_db}", "--table", "nope"),
            2,
            "no table 'nope'",
        ),
        Case("dataset:unknown-subcommand", ("dataset", "frobnicate"), 2, "No such command 'frobnicate'"),
        Case("dataset-import:no-arg", ("dataset", "import"), 2, "Missing argument 'SOURCE"),
        Case(
            "dataset-import:unknown-source", ("dataset", "import", "kaggle", "a.csv", "x.db"), 2, "'kaggle'"
        ),
        Case(
            "dataset-import:missing-input",
            ("dataset", "import", "futurex-past", "nope.jsonl", "x.db"),
            2,
            "nope.jsonl: 1 problem(s):\n  - dataset, column 'file': no such file",
        ),
        Case(
            "dataset-import:not-parquet",
            ("dataset", "import", "futurex-past", "a.parquet", "x.db"),
            2,
            "not a readable Parquet file",
            write("a.parquet", b"PAR1 junk"),
        ),
        Case(
            "dataset-import:table-without-map",
            ("dataset", "import", "table", "a.csv", "x.db"),
            2,
            "the table importer needs --map",
            write("a.csv", "qid,title\n1,x\n"),
        ),
        Case("dataset-audit:no-arg", ("dataset", "audit"), 2, "Missing argument 'DB'"),
        Case(
            "dataset-audit:bad-cutoffs",
            ("dataset", "audit", "{demo_db}", "--cutoffs", "m1=someday"),
            2,
            "training cutoff 'someday' is not a date",
        ),
    ]
    return cases + validate_more


def build_cases() -> list[Case]:
    """dataset build: bad rows, templates, options and outputs."""
    build = ("dataset", "build")
    rows = "rows.jsonl"
    good = write(rows, ROW)
    return [
        Case("build:no-args", build, 2, "Missing argument 'IN'"),
        Case("build:no-out", (*build, "{demo_rows}"), 2, "Missing argument 'OUT'"),
        Case("build:in-nonexistent", (*build, "nope.jsonl", "o.db"), 2, "no such file"),
        Case("build:in-directory", (*build, "d", "o.db"), 2, "is a directory", mkdir("d")),
        Case(
            "build:in-unknown-suffix",
            (*build, "r.txt", "o.db"),
            2,
            "unknown input format '.txt'",
            write("r.txt", ROW),
        ),
        Case("build:in-empty", (*build, rows, "o.db"), 2, "the input holds no rows", write(rows, "")),
        Case(
            "build:in-not-utf8", (*build, rows, "o.db"), 2, "not UTF-8 text", write(rows, b'{"id": "\xff"}\n')
        ),
        Case(
            "build:in-bad-json-line",
            (*build, rows, "o.db"),
            2,
            "row 'line 2', column 'json': not valid JSON",
            write(rows, ROW + "{not json\n"),
        ),
        Case(
            "build:in-json-not-object",
            (*build, rows, "o.db"),
            2,
            "row 'line 1', column 'json': expected a JSON object, got list",
            write(rows, "[1, 2]\n"),
        ),
        Case(
            "build:in-bad-answer",
            (*build, rows, "o.db"),
            2,
            "outside the options",
            write(rows, ROW.replace('"answer": "A"', '"answer": "Q"')),
        ),
        Case(
            "build:in-bad-end-time",
            (*build, rows, "o.db"),
            2,
            "end_time 'yesterday' is not a date; expected YYYY-MM-DD",
            write(rows, ROW.replace("2026-03-01", "yesterday")),
        ),
        Case(
            "build:in-duplicate-id",
            (*build, rows, "o.db"),
            2,
            "row 'q1', column 'id': duplicate id: used by rows #1, #2",
            write(rows, ROW + ROW),
        ),
        Case(
            "build:csv-missing-column",
            (*build, "r.csv", "o.db"),
            2,
            "column 'answer': missing column in the CSV header",
            write(
                "r.csv",
                'id,choice_type,question_type,event,options,end_time\nq1,single,yes_no,e,"[]",2026-01-01\n',
            ),
        ),
        Case(
            "build:out-exists",
            (*build, rows, "o.db"),
            2,
            "o.db already exists; pass --force",
            all_of(good, write("o.db", "x")),
        ),
        Case("build:out-directory", (*build, rows, "d"), 2, "is a directory", all_of(good, mkdir("d"))),
        Case(
            "build:out-under-a-file",
            (*build, rows, "f/o.db"),
            2,
            "cannot write f/o.db",
            all_of(good, write("f", "x")),
        ),
        Case(
            "build:templates-nonexistent",
            (*build, rows, "o.db", "--templates", "t.json"),
            2,
            "no such file",
            good,
        ),
        Case(
            "build:templates-not-json",
            (*build, rows, "o.db", "--templates", "t.json"),
            2,
            "not a JSON file",
            all_of(good, write("t.json", "{oops")),
        ),
        Case(
            "build:templates-not-utf8",
            (*build, rows, "o.db", "--templates", "t.json"),
            2,
            "not a JSON file",
            all_of(good, write("t.json", b'{"a": "\xff"}')),
        ),
        Case(
            "build:templates-missing-keys",
            (*build, rows, "o.db", "--templates", "t.json"),
            2,
            "prompt_reconstruction is missing template key 'binary_named_output_format'",
            all_of(good, write("t.json", '{"agent_role": "x"}')),
        ),
        Case(
            "build:templates-not-object",
            (*build, rows, "o.db", "--templates", "t.json"),
            2,
            "prompt_reconstruction must be a JSON object, got list",
            all_of(good, write("t.json", "[1]")),
        ),
        Case(
            "build:templates-directory",
            (*build, rows, "o.db", "--templates", "d"),
            2,
            "is a directory",
            all_of(good, mkdir("d")),
        ),
        Case(
            "build:table-not-identifier",
            (*build, rows, "o.db", "--table", "1; DROP"),
            2,
            "must be a plain identifier",
            good,
        ),
        Case(
            "build:table-is-metadata",
            (*build, rows, "o.db", "--table", "dataset_metadata"),
            2,
            "other than 'dataset_metadata'",
            good,
        ),
        Case(
            "build:imported-at-word",
            (*build, rows, "o.db", "--imported-at", "yesterday"),
            2,
            "--imported-at 'yesterday' is not an ISO 8601 date or timestamp",
            good,
        ),
        Case(
            "build:imported-at-month-13",
            (*build, rows, "o.db", "--imported-at", "2026-13-01"),
            2,
            "is not an ISO 8601 date or timestamp",
            good,
        ),
        Case(
            "build:imported-at-naive",
            (*build, rows, "o.db", "--imported-at", "2026-03-01T10:00:00"),
            2,
            "is not in UTC",
            good,
        ),
        Case(
            "build:imported-at-offset",
            (*build, rows, "o.db", "--imported-at", "2026-03-01T10:00:00+02:00"),
            2,
            "is not in UTC",
            good,
        ),
        Case(
            "build:imported-at-empty",
            (*build, rows, "o.db", "--imported-at", ""),
            2,
            "is not an ISO 8601 date or timestamp",
            good,
        ),
    ]


def render_cases() -> list[Case]:
    """render: options and settings."""
    return [
        Case("render:no-arg", ("render",), 2, "Missing argument 'DB'"),
        Case("render:unknown-id", ("render", "demo", "--id", "nope"), 2, "unknown question id(s): 'nope'"),
        Case(
            "render:bad-protocols",
            ("render", "demo", "--protocols", "most"),
            2,
            "Invalid value for '--protocols'",
        ),
        Case(
            "render:max-steps-0", ("render", "demo", "--max-steps", "0"), 2, "Invalid value for '--max-steps'"
        ),
        Case(
            "render:max-searches-negative",
            ("render", "demo", "--max-searches", "-1"),
            2,
            "Invalid value for '--max-searches'",
        ),
        Case(
            "render:max-steps-word",
            ("render", "demo", "--max-steps", "six"),
            2,
            "'six' is not a valid integer",
        ),
        Case("render:unknown-table", ("render", "demo", "--table", "nope"), 2, "no table 'nope'"),
        Case(
            "render:env-not-utf8",
            ("render", "demo"),
            2,
            ".env: not UTF-8 text: byte 0xe9 at offset 22 (line 2)",
            write(".env", NOT_UTF8),
        ),
        Case(
            "render:env-steps-0",
            ("render", "demo"),
            2,
            "invalid ReAct settings",
            env={"REACT_MAX_STEPS": "0"},
        ),
        Case(
            "render:env-steps-word",
            ("render", "demo"),
            2,
            "invalid ReAct settings",
            env={"REACT_MAX_STEPS": "many"},
        ),
        Case("render:env-dir", ("render", "demo"), 2, ".env: is a directory", mkdir(".env")),
    ]


#: (variable, value, substring of the message). Each runs ``run`` (replay mode) with it set.
ENV_CASES: list[tuple[str, str, str]] = [
    ("SAMPLING_N", "0", "SAMPLING_N: Input should be greater than 0"),
    ("SAMPLING_N", "three", "SAMPLING_N: Input should be a valid integer"),
    ("SAMPLING_N", "1.5", "SAMPLING_N: Input should be a valid integer"),
    ("SAMPLING_N", "99999999999999999999999", "SAMPLING_N: Input should be less than or equal to 1000"),
    ("LLM_TEMPERATURE", "3", "LLM_TEMPERATURE: Input should be less than or equal to 2"),
    ("LLM_TEMPERATURE", "warm", "LLM_TEMPERATURE: Input should be a valid number"),
    ("LLM_TOP_P", "0", "LLM_TOP_P: Input should be greater than 0"),
    ("LLM_MAX_TOKENS", "-5", "LLM_MAX_TOKENS: Input should be greater than 0"),
    ("LLM_TIMEOUT_S", "0", "LLM_TIMEOUT_S: Input should be greater than 0"),
    ("LLM_MAX_CONCURRENCY", "0", "LLM_MAX_CONCURRENCY: Input should be greater than 0"),
    ("LLM_RETRY_MAX", "-1", "LLM_RETRY_MAX: Input should be greater than or equal to 0"),
    ("TAVILY_MAX_RESULTS", "21", "TAVILY_MAX_RESULTS: Input should be less than or equal to 20"),
    ("TAVILY_SEARCH_DEPTH", "deep", "TAVILY_SEARCH_DEPTH: Input should be 'basic' or 'advanced'"),
    ("TAVILY_INCLUDE_ANSWER", "maybe", "TAVILY_INCLUDE_ANSWER: Input should be a valid boolean"),
    ("LLM_SEND_SEED", "perhaps", "LLM_SEND_SEED: Input should be a valid boolean"),
    ("ENABLE_SEARCH_LEAK_FILTER", "2", "ENABLE_SEARCH_LEAK_FILTER: Input should be a valid boolean"),
    ("LEAK_DETECTOR_FAIL_ACTION", "explode", "LEAK_DETECTOR_FAIL_ACTION: Input should be 'drop' or 'keep'"),
    (
        "LEAK_DETECTOR_TEMPERATURE",
        "-1",
        "LEAK_DETECTOR_TEMPERATURE: Input should be greater than or equal to 0",
    ),
    ("REACT_MAX_STEPS", "0", "REACT_MAX_STEPS: Input should be greater than 0"),
    ("REACT_MAX_STEPS", "100000", "REACT_MAX_STEPS: Input should be less than or equal to 1000"),
    ("REACT_MAX_SEARCH_CALLS", "-1", "REACT_MAX_SEARCH_CALLS: Input should be greater than or equal to 0"),
    (
        "PREDICTION_CUTOFF_DELTA_DAYS",
        "-1",
        "PREDICTION_CUTOFF_DELTA_DAYS: Input should be greater than or equal to 0",
    ),
    ("ORACLEPROTO_MODE", "live", "ORACLEPROTO_MODE: Input should be 'replay', 'record' or 'refresh'"),
    ("ANALYSIS_CONVENTION", "v9", "ANALYSIS_CONVENTION: Input should be 'paper' or 'reference-v4'"),
    ("ANALYSIS_BOOTSTRAP_N", "-1", "ANALYSIS_BOOTSTRAP_N: Input should be greater than or equal to 0"),
    ("ANALYSIS_SEED", "seed", "ANALYSIS_SEED: Input should be a valid integer"),
    ("GRID_R_LIST", "a,b", "GRID_R_LIST.0: Input should be a valid integer"),
    ("GRID_R_LIST", "[1,", "GRID_R_LIST: Value error, starts with '[' but is not a valid JSON list"),
    ("GRID_C_LIST", '["x"]', "GRID_C_LIST.0: Input should be a valid integer"),
    ("LLM_BACKOFF_NETWORK_S", "soon", "LLM_BACKOFF_NETWORK_S.0: Input should be a valid number"),
    ("SEARCH_BACKOFF_S", "1,,x", "SEARCH_BACKOFF_S.1: Input should be a valid number"),
    ("MODEL_TRAINING_CUTOFFS", "just-a-word", "MODEL_TRAINING_CUTOFFS: Value error, expected key=value"),
    ("MODEL_TRAINING_CUTOFFS", "{bad json", "MODEL_TRAINING_CUTOFFS: Value error, Expecting property name"),
    ("MODEL_TRAINING_CUTOFFS", "[1, 2]", "MODEL_TRAINING_CUTOFFS: Value error, expected key=value"),
    ("MODELS", "[1,", "MODELS: Value error, starts with '[' but is not a valid JSON list"),
    ("MODELS", "sim/hasty:online", "MODELS: 'sim/hasty:online' ends in ':online'"),
    ("MODELS", "a::b", "MODELS: 'a::b' contains '::', reserved for grid cells"),
    ("LEAK_DETECTOR_MODEL", "x:online", "LEAK_DETECTOR_MODEL: 'x:online' ends in ':online'"),
]


def run_cases() -> list[Case]:
    """run: run ids, env files, settings of every type, datasets and options."""
    cases = [
        Case(f"run:env-{name}={value}", ("run", "--no-progress"), 2, message, env={name: value})
        for name, value, message in ENV_CASES
    ]
    run_id_message = "invalid run id"
    cases += [
        Case("run:run-id-word", ("run", "--run-id", "not-an-id"), 2, run_id_message),
        Case(
            "run:run-id-traversal",
            ("run", "--run-id", "../../../tmp/x"),
            2,
            "expected UTC 'YYYYMMDD-HHMMSS-xxxx'",
        ),
        Case("run:run-id-uppercase", ("run", "--run-id", "20260101-000000-DE00"), 2, run_id_message),
        Case("run:run-id-empty", ("run", "--run-id", ""), 2, run_id_message),
        Case("run:run-id-missing-value", ("run", "--run-id"), 2, "Option '--run-id' requires an argument"),
        Case("run:no-models", ("run", *REPLAY, "--no-progress"), 2, "no models to run; set MODELS", RECORDED),
        Case("plan:no-models", ("plan",), 2, "no models to run; set MODELS"),
        Case("plan:missing-config", ("plan", "--config", "nope.toml"), 2, "nope.toml does not exist"),
        Case("plan:limit-zero", ("plan", "--limit", "0"), 2, "Invalid value for '--limit'"),
        Case("plan:bad-prices", ("plan", "--prices", "nope.json"), 2, "price file nope.json does not exist"),
        Case("run:max-cost-zero", ("run", "--max-cost", "0"), 2, "Invalid value for '--max-cost'"),
        Case(
            "replay:processes-zero",
            ("replay", "demo", "--processes", "0"),
            2,
            "Invalid value for '--processes'",
        ),
        Case(
            "replay:processes-word",
            ("replay", "demo", "--processes", "two"),
            2,
            "Invalid value for '--processes'",
        ),
        Case(
            "run:replay-without-run-id",
            ("run", "--no-progress"),
            2,
            "no run to replay; replay mode (the default",
        ),
        Case(
            "run:replay-unknown-run-id",
            ("run", "--run-id", "20990101-000000-0000", "--no-progress"),
            2,
            "no run 20990101-000000-0000 under runs to replay",
        ),
        Case(
            "run:model-without-cutoff",
            ("run", *REPLAY, "--no-progress"),
            2,
            "MODEL_TRAINING_CUTOFFS has no cutoff for 'm'",
            RECORDED,
            env={"MODELS": "m"},
        ),
        Case(
            "run:cutoff-month-13",
            ("run", *REPLAY, "--no-progress"),
            2,
            "training cutoff '2026-13' is not a date; use YYYY-MM-DD, or YYYY-MM",
            RECORDED,
            env={"MODELS": "m", "MODEL_TRAINING_CUTOFFS": "m=2026-13"},
        ),
        Case(
            "run:question-types-match-nothing",
            ("run", *REPLAY, "--no-progress"),
            2,
            "matches QUESTION_TYPES=['nope'] CHOICE_TYPES=None (its 16 questions have question types",
            RECORDED,
            env={"QUESTION_TYPES": "nope"},
        ),
        Case(
            "run:env-file-not-utf8",
            ("run", "--env-file", "e.env"),
            2,
            "e.env: not UTF-8 text: byte 0xe9",
            write("e.env", NOT_UTF8),
        ),
        Case("run:env-file-directory", ("run", "--env-file", "d"), 2, "File 'd' is a directory", mkdir("d")),
        Case(
            "run:env-file-bad-value",
            ("run", "--env-file", "e.env"),
            2,
            "SAMPLING_N: Input should be greater than 0",
            write("e.env", "SAMPLING_N=0\n"),
        ),
        Case("run:dotenv-not-utf8", ("run",), 2, ".env: not UTF-8 text", write(".env", NOT_UTF8)),
        Case(
            "run:record-without-keys",
            ("run", "--record", "--no-progress"),
            2,
            "cannot record live",
            env={"MODELS": "m", "MODEL_TRAINING_CUTOFFS": "m=2025-01"},
        ),
        Case("run:select-without-refresh", ("run", "--select", "model=x"), 2, "--select needs --refresh RUN"),
        Case("run:refresh-unknown-run", ("run", "--refresh", "nope"), 2, "nope: run directory not found"),
        Case("run:runs-root-is-a-file", ("run", "--runs-root", "f"), 2, "is a file", write("f", "x")),
        Case(
            "run:runs-root-under-a-file",
            ("run", "--run-id", RUN_ID, "--runs-root", "f/runs", "--no-progress"),
            2,
            f"no run {RUN_ID} under f/runs to replay",
            write("f", "x"),
            env={"MODELS": "m", "MODEL_TRAINING_CUTOFFS": "m=2025-01"},
        ),
        Case("run:unknown-option", ("run", "--frobnicate"), 2, "No such option '--frobnicate'"),
    ]
    return cases


def sim_cases() -> list[Case]:
    """sim run / sim serve options."""
    sim = ("sim", "run", "--no-progress", "--runs-root", "runs")
    return [
        Case("sim-run:models-0", (*sim, "--models", "0"), 2, "Invalid value for '--models'"),
        Case("sim-run:models-31", (*sim, "--models", "31"), 2, "Invalid value for '--models'"),
        Case("sim-run:samples-0", (*sim, "--samples", "0"), 2, "Invalid value for '--samples'"),
        Case("sim-run:samples-word", (*sim, "--samples", "lots"), 2, "'lots' is not a valid integer"),
        Case("sim-run:fail-rate-2", (*sim, "--fail-5xx", "2"), 2, "Invalid value for '--fail-5xx'"),
        Case(
            "sim-run:fail-rates-sum",
            (*sim, "--fail-5xx", "0.6", "--fail-429", "0.6"),
            2,
            "must not exceed 1",
        ),
        Case("sim-run:latency-negative", (*sim, "--latency-ms", "-1"), 2, "Invalid value for '--latency-ms'"),
        Case("sim-run:revise-bad", (*sim, "--revise", "sim/hasty"), 2, "expected MODEL=REV"),
        Case(
            "sim-run:select-without-refresh", (*sim, "--select", "model=x"), 2, "--select needs --refresh RUN"
        ),
        Case("sim-run:run-id-bad", (*sim, "--run-id", "nope"), 2, "invalid run id 'nope'"),
        Case("sim-run:refresh-unknown", (*sim, "--refresh", "nope"), 2, "nope: run directory not found"),
        Case("sim-run:dataset-missing", (*sim, "--dataset", "x.db"), 2, "no such file"),
        Case(
            "sim-run:dataset-damaged",
            (*sim, "--dataset", "x.db"),
            2,
            "a page is damaged",
            damaged_page("x.db", demo_db_path(), 2),
        ),
        Case(
            "sim-run:dataset-empty-table",
            (*sim, "--dataset", "x.db"),
            2,
            "table 'questions' is empty",
            demo_copy("x.db", "DELETE FROM questions"),
        ),
        Case(
            "sim-run:runs-root-under-a-file",
            ("sim", "run", "--no-progress", "--runs-root", "f/runs", "--personas", "1", "--samples", "1"),
            2,
            "f is a file, not a directory; remove it",
            write("f", "x"),
        ),
        Case("sim-serve:port-too-big", ("sim", "serve", "--port", "70000"), 2, "Invalid value for '--port'"),
        Case(
            "sim-serve:fail-sum",
            ("sim", "serve", "--fail-5xx", "0.7", "--fail-timeout", "0.7"),
            2,
            "exceeds 1",
        ),
        Case(
            "sim-serve:retry-after-negative",
            ("sim", "serve", "--retry-after", "-1"),
            2,
            "Invalid value for '--retry-after'",
        ),
        Case("sim:unknown-subcommand", ("sim", "frob"), 2, "No such command 'frob'"),
    ]


def _corrupt_db(run: Path) -> None:
    run_db(run).write_bytes(b"garbage, not sqlite" * 20)


def _truncate_db(run: Path) -> None:
    path = run_db(run)
    path.write_bytes(path.read_bytes()[:8192])


def _wrong_schema_db(run: Path) -> None:
    path = run_db(run)
    path.unlink()
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE unrelated (a)")
    conn.close()


def _drop_db(run: Path) -> None:
    run_db(run).unlink()


def _db_dir_is_file(run: Path) -> None:
    import shutil

    shutil.rmtree(run / "db")
    (run / "db").write_text("not a folder")


BROKEN_RUNS = {
    "db-garbage": _corrupt_db,
    "db-truncated": _truncate_db,
    "db-wrong-schema": _wrong_schema_db,
    "db-missing": _drop_db,
    "db-dir-is-a-file": _db_dir_is_file,
}
#: What replay, gc and ls --sample (which open the per-model DBs read-only) say.
READ_MESSAGES = {
    "db-garbage": "careful__r5__c4.db: not a valid SQLite database (file is not a database); the run is",
    "db-truncated": "sim__careful__r5__c4.db: not a valid SQLite database (database disk image is malformed)",
    "db-wrong-schema": "sim__careful__r5__c4.db: no run_results table; this is not a per-model run database",
    "db-missing": "sim__careful__r5__c4.db: database of model 'sim/careful::r5::c4' is missing from",
    "db-dir-is-a-file": "sim__careful__r5__c4.db: database of model 'sim/careful::r5::c4' is missing from",
}
REPORT_MESSAGES = {
    "db-garbage": "sim__careful__r5__c4.db: cannot read: file is not a database",
    "db-truncated": "sim__careful__r5__c4.db: cannot read: database disk image is malformed",
    "db-wrong-schema": "sim__careful__r5__c4.db: table 'run_meta' is missing",
    "db-missing": "sim__careful__r5__c4.db is missing: manifest.json lists model 'sim/careful::r5::c4'",
    "db-dir-is-a-file": "sim__careful__r5__c4.db is missing: manifest.json lists model 'sim/careful::r5::c4'",
}


def run_dir_cases() -> list[Case]:
    """report, replay, verify, cassettes and cache on missing, wrong and damaged run directories."""
    run = "{run}"
    cases = [
        Case("report:no-arg", ("report",), 2, "Missing argument 'RUN'"),
        Case("export:no-arg", ("export",), 2, "Missing argument 'RUN'"),
        Case("export:nonexistent", ("export", "nope"), 2, "nope: run directory not found"),
        Case("export:not-a-run", ("export", "d"), 2, "d: not a run directory", mkdir("d")),
        Case(
            "export:bad-format",
            ("export", run, "--format", "xml"),
            2,
            "Invalid value for '--format'",
            in_run(lambda r: None),
        ),
        Case(
            "export:out-is-a-dir",
            ("export", run, "--out", "d"),
            2,
            "Invalid value for '--out'",
            in_run(lambda r: (r.parent.parent / "d").mkdir()),
        ),
        Case(
            "report:decimals-too-many",
            ("report", run, "--decimals", "12"),
            2,
            "Invalid value for '--decimals'",
            in_run(lambda r: None),
        ),
        Case(
            "report:bold-unknown",
            ("report", run, "--bold", "maybe"),
            2,
            "Invalid value for '--bold'",
            in_run(lambda r: None),
        ),
        Case(
            "report:nonexistent",
            ("report", "nope"),
            2,
            "nope: run directory not found",
        ),
        Case("report:a-file", ("report", "f"), 2, "is a file", write("f", "x")),
        Case(
            "report:not-a-run",
            ("report", "d"),
            2,
            "d: not a run directory",
            mkdir("d"),
        ),
        Case(
            "report:bad-convention",
            ("report", run, "--convention", "v9"),
            2,
            "unknown scoring convention 'v9'",
            in_run(lambda r: None),
        ),
        Case(
            "report:bad-format",
            ("report", run, "--format", "pdf"),
            2,
            "Invalid value for '--format'",
            in_run(lambda r: None),
        ),
        Case(
            "report:bootstrap-negative",
            ("report", run, "--bootstrap", "-1"),
            2,
            "Invalid value for '--bootstrap'",
            in_run(lambda r: None),
        ),
        Case(
            "report:seed-word",
            ("report", run, "--seed", "x"),
            2,
            "'x' is not a valid integer",
            in_run(lambda r: None),
        ),
        Case(
            "report:prices-nonexistent",
            ("report", run, "--prices", "p.json", "--bootstrap", "0"),
            2,
            "price file p.json does not exist",
            in_run(lambda r: None),
        ),
        Case(
            "report:prices-not-json",
            ("report", run, "--prices", "p.json", "--bootstrap", "0"),
            2,
            "is not valid JSON",
            all_of(in_run(lambda r: None), write("p.json", "{oops")),
        ),
        Case(
            "report:prices-not-utf8",
            ("report", run, "--prices", "p.json", "--bootstrap", "0"),
            2,
            "price file p.json is not UTF-8 text (byte offset 0)",
            all_of(in_run(lambda r: None), write("p.json", b"\xff\xfe{}")),
        ),
        Case(
            "report:credit-price-negative",
            ("report", run, "--tavily-usd-per-credit", "-0.5", "--bootstrap", "0"),
            2,
            "-0.5 is not a price: give a finite number >= 0",
            in_run(lambda r: None),
        ),
        Case(
            "report:search-price-both-units",
            ("report", run, "--prices", "p.json", "--bootstrap", "0"),
            2,
            "'search' gives both 'usd_per_credit' and 'usd_per_call'; keep one",
            all_of(
                in_run(lambda r: None),
                write("p.json", '{"search": {"usd_per_credit": 1, "usd_per_call": 1}}'),
            ),
        ),
        Case(
            "report:names-not-json",
            ("report", run, "--names", "n.json", "--bootstrap", "0"),
            2,
            "names file n.json is not valid JSON",
            all_of(in_run(lambda r: None), write("n.json", "{oops")),
        ),
        Case(
            "report:names-not-utf8",
            ("report", run, "--names", "n.json", "--bootstrap", "0"),
            2,
            "names file n.json is not UTF-8 text (byte at offset 0)",
            all_of(in_run(lambda r: None), write("n.json", b"\xff\xfe{}")),
        ),
        Case(
            "report:names-a-grid-cell",
            ("report", run, "--names", "n.json", "--bootstrap", "0"),
            2,
            "'sim/careful::r5::c4': name the real model slug, without '::rR::cC'",
            all_of(in_run(lambda r: None), write("n.json", '{"sim/careful::r5::c4": "Careful"}')),
        ),
        Case(
            "report:out-is-a-file",
            ("report", run, "--out", "f", "--bootstrap", "0"),
            2,
            "is a file",
            all_of(in_run(lambda r: None), write("f", "x")),
        ),
        Case(
            "report:out-not-an-analysis-dir",
            ("report", run, "--out", "d", "--bootstrap", "0"),
            2,
            "is not an oracleproto analysis directory",
            all_of(in_run(lambda r: None), write("d/mine.txt", "keep me")),
        ),
        Case(
            "report:out-under-a-file",
            ("report", run, "--out", "f/an", "--bootstrap", "0"),
            2,
            "cannot write f/an: f is a file, not a directory",
            all_of(in_run(lambda r: None), write("f", "x")),
        ),
        Case("replay:no-arg", ("replay",), 2, "Missing argument 'RUN'"),
        Case(
            "replay:unknown-id",
            ("replay", "20990101-000000-0000", "--runs-root", "runs"),
            2,
            "run directory not found",
        ),
        Case("replay:nonexistent-path", ("replay", "nope/x"), 2, "run directory not found"),
        Case("replay:not-a-run-id-folder", ("replay", "d"), 2, "d: not a run directory", mkdir("d")),
        Case(
            "replay:out-is-a-file",
            ("replay", run, "--out", "f"),
            2,
            "is a file",
            all_of(in_run(lambda r: None), write("f", "x")),
        ),
        Case(
            "replay:dataset-directory",
            ("replay", run, "--dataset", "d"),
            2,
            "is a directory",
            all_of(in_run(lambda r: None), mkdir("d")),
        ),
        Case("verify:no-arg", ("verify",), 2, "Missing argument 'RUN'"),
        Case("verify:nonexistent", ("verify", "nope"), 2, "nope: run directory not found"),
        Case(
            "verify:unknown-id",
            ("verify", "20990101-000000-0000", "--runs-root", "runs"),
            2,
            "run directory not found",
        ),
        Case(
            "verify:manifest-missing",
            ("verify", "runs/" + RUN_ID),
            2,
            "manifest not found",
            mkdir("runs/" + RUN_ID),
        ),
        Case(
            "verify:dataset-nonexistent",
            ("verify", run, "--dataset", "x.db"),
            2,
            "does not exist",
            in_run(lambda r: None),
        ),
        Case(
            "verify:dataset-directory",
            ("verify", run, "--dataset", "d"),
            2,
            "is a directory",
            all_of(in_run(lambda r: None), mkdir("d")),
        ),
        Case(
            "verify:attestation-on-bundle-flag-typo",
            ("verify", run, "--write-attestations"),
            2,
            "No such option",
            in_run(lambda r: None),
        ),
        Case("bundle-export:no-args", ("bundle", "export"), 2, "Missing argument 'RUN'"),
        Case(
            "bundle-export:unknown-run",
            ("bundle", "export", "nope", "o.tar.gz"),
            2,
            "nope: run directory not found",
        ),
        Case(
            "bundle-export:out-directory",
            ("bundle", "export", run, "d"),
            2,
            "is a directory",
            all_of(in_run(lambda r: None), mkdir("d")),
        ),
        Case(
            "bundle-export:dataset-nonexistent",
            ("bundle", "export", run, "o.tar.gz", "--dataset", "x.db"),
            2,
            "does not exist",
            in_run(lambda r: None),
        ),
        Case("bundle-import:no-args", ("bundle", "import"), 2, "Missing argument 'BUNDLE'"),
        Case("bundle-import:nonexistent", ("bundle", "import", "b.tar.gz", "dest"), 2, "does not exist"),
        Case(
            "bundle-import:bundle-directory",
            ("bundle", "import", "d", "dest"),
            2,
            "is a directory",
            mkdir("d"),
        ),
        Case(
            "bundle-import:dest-is-a-file",
            ("bundle", "import", "b.tar.gz", "f"),
            2,
            "is a file",
            all_of(write("b.tar.gz", "x"), write("f", "x")),
        ),
    ]
    for name, damage in BROKEN_RUNS.items():
        cases.append(
            Case(
                f"report:{name}",
                ("report", run, "--bootstrap", "0"),
                2,
                REPORT_MESSAGES[name],
                in_run(damage),
            )
        )
        cases.append(Case(f"verify:{name}", ("verify", run, "--quiet"), 1, "NOT VERIFIED", in_run(damage)))
        message = READ_MESSAGES[name]
        cases.append(
            Case(
                f"replay:{name}", ("replay", run, "--out", "out", "--no-progress"), 2, message, in_run(damage)
            )
        )
        cases.append(Case(f"gc:{name}", ("cassettes", "gc", run), 2, message, in_run(damage)))
        cases.append(
            Case(
                f"ls-sample:{name}",
                ("cassettes", "ls", run, "--sample", "sim/hasty", "demo-01", "0"),
                2,
                message,
                in_run(damage),
            )
        )
    return cases


def cassette_cases() -> list[Case]:
    """cassettes ls/show/stats/diff/gc and cache rebuild: arguments and paths."""
    run = "{run}"
    present = in_run(lambda r: None)
    cases: list[Case] = []
    for sub in ("ls", "show", "stats", "gc"):
        cases += [
            Case(f"cassettes-{sub}:no-arg", ("cassettes", sub), 2, "Missing argument 'RUN'"),
            Case(
                f"cassettes-{sub}:nonexistent",
                ("cassettes", sub, "nope"),
                2,
                "nope: run directory not found",
            ),
            Case(f"cassettes-{sub}:a-file", ("cassettes", sub, "f"), 2, "is a file", write("f", "x")),
        ]
    cases += [
        Case(
            "cassettes-ls:sample-index-word",
            ("cassettes", "ls", run, "--sample", "m", "q", "x"),
            2,
            "'x' is not a valid integer",
            present,
        ),
        Case(
            "cassettes-ls:sample-too-few",
            ("cassettes", "ls", run, "--sample", "m"),
            2,
            "requires 3 arguments",
            present,
        ),
        Case(
            "cassettes-ls:sample-unknown-model",
            ("cassettes", "ls", run, "--sample", "sim/nobody", "demo-01", "0"),
            2,
            "--sample: model 'sim/nobody' names 0 of this run's models",
            present,
        ),
        Case(
            "cassettes-ls:sample-unknown-question",
            ("cassettes", "ls", run, "--sample", "sim/hasty", "nope", "0"),
            2,
            "has no stored sample 0 of question 'nope'",
            present,
        ),
        Case(
            "cassettes-show:no-prefix",
            ("cassettes", "show", run),
            2,
            "Missing argument 'KEY_PREFIX'",
            present,
        ),
        Case(
            "cassettes-show:no-match",
            ("cassettes", "show", run, "zzzz"),
            2,
            "0 entries match key prefix 'zzzz'",
            present,
        ),
        Case(
            "cassettes-show:ambiguous",
            ("cassettes", "show", run, "f"),
            2,
            "give a longer unique prefix",
            present,
        ),
        Case(
            "cassettes-stats:samples-word",
            ("cassettes", "stats", run, "--samples", "x"),
            2,
            "'x' is not a valid integer",
            present,
        ),
        Case("cassettes-ls:empty-dir", ("cassettes", "ls", "d"), 2, "d: no cassettes here", mkdir("d")),
        Case("cassettes-stats:empty-dir", ("cassettes", "stats", "d"), 2, "d: no cassettes here", mkdir("d")),
        Case(
            "cassettes-show:empty-dir",
            ("cassettes", "show", "d", "ab"),
            2,
            "d: no cassettes here",
            mkdir("d"),
        ),
        Case("cache-rebuild:empty-dir", ("cache", "rebuild", "d"), 2, "d: no cassettes here", mkdir("d")),
        Case("cassettes-gc:not-a-run", ("cassettes", "gc", "d"), 2, "d: not a run directory", mkdir("d")),
        Case("cassettes-diff:no-args", ("cassettes", "diff"), 2, "Missing argument 'OLD'"),
        Case("cassettes-diff:no-new", ("cassettes", "diff", run), 2, "Missing argument 'NEW'", present),
        Case(
            "cassettes-diff:nonexistent",
            ("cassettes", "diff", "nope", "nope2"),
            2,
            "nope2: no such directory; pass a run directory",
        ),
        Case(
            "cassettes-diff:bad-generation",
            ("cassettes", "diff", run + "@x", run),
            2,
            "@x: no such directory; pass a run directory or a cassette directory; a generation is",
            present,
        ),
        Case(
            "cassettes-diff:missing-generation",
            ("cassettes", "diff", run + "@7", run),
            2,
            "generation 7 does not exist (present: 0)",
            present,
        ),
        Case(
            "cassettes-diff:bad-format",
            ("cassettes", "diff", run, run, "--format", "pdf"),
            2,
            "Invalid value for '--format'",
            present,
        ),
        Case(
            "cassettes-diff:bootstrap-negative",
            ("cassettes", "diff", run, run, "--bootstrap", "-3"),
            2,
            "Invalid value for '--bootstrap'",
            present,
        ),
        Case("cache-rebuild:no-arg", ("cache", "rebuild"), 2, "Missing argument 'RUN'"),
        Case("cache-rebuild:nonexistent", ("cache", "rebuild", "nope"), 2, "nope: run directory not found"),
        Case("cache-rebuild:a-file", ("cache", "rebuild", "f"), 2, "is a file", write("f", "x")),
        Case(
            "cache-rebuild:cache-dir-under-a-file",
            ("cache", "rebuild", run, "--cache-dir", "f/c"),
            2,
            "cannot write f/c",
            all_of(present, write("f", "x")),
        ),
        Case("top:unknown-command", ("frobnicate",), 2, "No such command 'frobnicate'"),
        Case("top:unknown-option", ("--frobnicate",), 2, "No such option '--frobnicate'"),
        Case("bundle:unknown-subcommand", ("bundle", "frob"), 2, "No such command 'frob'"),
    ]
    return cases


def _alias_cassette(run: Path) -> None:
    (run / "cassettes" / "search.yaml").write_text("a: &x [1]\nb: *x\n", encoding="utf-8")


def _future_manifest(run: Path) -> None:
    import json

    path = run / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["schema_version"] = 99
    path.write_text(json.dumps(manifest), encoding="utf-8")


ALIAS = "cassettes/search.yaml: refused: anchor (&name) at line 1, column 4"


def untrusted_cases() -> list[Case]:
    """A few hostile files through every command that reads them (their own suites go deeper)."""
    run = "{run}"
    alias = in_run(_alias_cassette)
    return [
        Case(
            "untrusted:import-not-gzip",
            ("bundle", "import", "b.tar.gz", "dest"),
            2,
            "not a readable .tar.gz bundle",
            write("b.tar.gz", "garbage"),
        ),
        Case(
            "untrusted:import-empty",
            ("bundle", "import", "b.tar.gz", "dest"),
            2,
            "b.tar.gz: not a readable .tar.gz bundle (empty file)",
            write("b.tar.gz", b""),
        ),
        Case(
            "untrusted:verify-empty-bundle",
            ("verify", "b.tar.gz"),
            1,
            "FAIL  bundle members  b.tar.gz: not a readable .tar.gz bundle (empty file)",
            write("b.tar.gz", b""),
        ),
        Case(
            "untrusted:report-schema-99",
            ("report", run, "--bootstrap", "0"),
            2,
            "schema_version 99 is not one this oracleproto reads",
            in_run(_future_manifest),
        ),
        Case("untrusted:verify-alias", ("verify", run), 1, "refused: anchor (&name)", alias),
        Case("untrusted:replay-alias", ("replay", run, "--out", "out", "--no-progress"), 2, ALIAS, alias),
        Case("untrusted:ls-alias", ("cassettes", "ls", run), 2, ALIAS, alias),
        Case("untrusted:stats-alias", ("cassettes", "stats", run), 2, ALIAS, alias),
        Case("untrusted:show-alias", ("cassettes", "show", run, "ab"), 2, ALIAS, alias),
        Case("untrusted:cache-rebuild-alias", ("cache", "rebuild", run, "--cache-dir", "c"), 2, ALIAS, alias),
        Case("untrusted:diff-alias", ("cassettes", "diff", run, run), 2, ALIAS, alias),
    ]


def all_cases() -> list[Case]:
    """Every case of the table."""
    return [
        *dataset_cases(),
        *build_cases(),
        *render_cases(),
        *run_cases(),
        *sim_cases(),
        *run_dir_cases(),
        *cassette_cases(),
        *untrusted_cases(),
        *text_file_cases(),
        *label_cases(),
        *leakaudit_cases(),
        *view_cases(),
        *setup_cases(),
        *calibrate_cases(),
        *profile_cases(),
        *store_cases(),
        *panel_cases(),
        *run_ref_cases(),
    ]
