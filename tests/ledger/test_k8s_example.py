"""The worked Kubernetes example (docs/examples/k8s-indexed-job.yaml) stays true to the command line:
its options exist, its shard count matches the Job's, and its failure policy fails an index exactly
on the exit statuses a retry cannot help."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from oracleproto.cli.exits import (
    EXIT_AUTH,
    EXIT_INTERNAL,
    EXIT_INVALID,
    EXIT_SAMPLE_ERRORS,
    EXIT_SPEND_CAP,
    EXIT_TERMINATED,
    EXIT_UNAVAILABLE,
)
from oracleproto.runner.experiment_id import ExperimentId
from oracleproto.runner.sharding import INDEX_VARIABLES
from tests.ledger.support import invoke

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "k8s-indexed-job.yaml"


def _job() -> dict[str, Any]:
    documents = list(yaml.safe_load_all(EXAMPLE.read_text(encoding="utf-8")))
    jobs = [d for d in documents if d["kind"] == "Job"]
    assert len(jobs) == 1
    job: dict[str, Any] = jobs[0]
    return job


def test_the_job_runs_one_shard_per_index_with_options_that_exist() -> None:
    spec = _job()["spec"]
    assert spec["completionMode"] == "Indexed"
    container = spec["template"]["spec"]["containers"][0]
    script = container["args"][0]
    assert f"--shard auto/{spec['completions']}" in script
    assert INDEX_VARIABLES[1] == "JOB_COMPLETION_INDEX" and "$JOB_COMPLETION_INDEX" in script
    env = {item["name"]: item["value"] for item in container["env"]}
    ExperimentId.parse(env["ORACLEPROTO_EXPERIMENT"])
    assert env["LEDGER_URL"].startswith("redis://")
    assert re.fullmatch(r"\d{8}-\d{6}", env["RUN_STAMP"])
    help_text = invoke(["run", "--help"]).output
    for option in re.findall(r"(--[a-z][a-z-]+)", script.split("oracleproto run", 1)[1].split("\n#")[0]):
        assert option in help_text, option


def test_an_index_fails_at_once_only_where_a_retry_cannot_help() -> None:
    rules = _job()["spec"]["podFailurePolicy"]["rules"]
    fail = next(rule for rule in rules if rule["action"] == "FailIndex")
    assert fail["onExitCodes"]["operator"] == "In"
    assert set(fail["onExitCodes"]["values"]) == {EXIT_INVALID, EXIT_AUTH, EXIT_SPEND_CAP, EXIT_INTERNAL}
    retried = {EXIT_UNAVAILABLE, EXIT_SAMPLE_ERRORS, EXIT_TERMINATED}
    assert not retried & set(fail["onExitCodes"]["values"])
