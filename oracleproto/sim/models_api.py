"""OpenAI-compatible ``GET /v1/models`` and ``GET /v1/models/{id}``: the simulated models.

The openai SDK and many tools probe the model list before chatting; the simulator answers with
the OpenAI list shape (``{"object": "list", "data": [{"id", "object", "created", "owned_by"}]}``)
naming every persona as ``sim/<name>`` and the leak detector as ``sim/detector``; a simulator
configured with ``replicas`` also lists the personas' replicas ``sim/<name>-r2`` … ``-r5`` (30
models, a paper-sized panel; ``sim run --models`` above 6).
"""

from __future__ import annotations

import json
from urllib.parse import unquote

from oracleproto.sim import openai_wire
from oracleproto.sim.loopback import LoopbackResponse
from oracleproto.sim.personas import DETECTOR_SLUG, PERSONAS, replica_slugs

MODELS_PATHS = ("/v1/models", "/models")
#: 2026-01-01T00:00:00Z: a fixed ``created`` keeps the list byte-stable across runs.
_CREATED = 1_767_225_600
_OWNER = "oracleproto-sim"


def model_ids(*, replicas: bool = False) -> list[str]:
    """Every model id the simulator lists, sorted (``replicas``: the personas' replicas too)."""
    return sorted(
        [f"sim/{name}" for name in PERSONAS] + (replica_slugs() if replicas else []) + [DETECTOR_SLUG]
    )


def _model(model_id: str) -> dict[str, object]:
    return {"id": model_id, "object": "model", "created": _CREATED, "owned_by": _OWNER}


def models_response(path: str, *, replicas: bool = False) -> LoopbackResponse | None:
    """The response for a models path (list or one model), ``None`` when ``path`` is not one."""
    listed = model_ids(replicas=replicas)
    for prefix in MODELS_PATHS:
        if path == prefix:
            payload: dict[str, object] = {"object": "list", "data": [_model(m) for m in listed]}
            return _json(200, json.dumps(payload).encode("utf-8"))
        if path.startswith(prefix + "/"):
            wanted = unquote(path[len(prefix) + 1 :])  # the SDK sends `sim%2Fcareful`
            if wanted in listed:
                return _json(200, json.dumps(_model(wanted)).encode("utf-8"))
            return _json(404, openai_wire.model_not_found_body(wanted))
    return None


def _json(status: int, body: bytes) -> LoopbackResponse:
    return LoopbackResponse(status=status, body=body, headers={"Content-Type": "application/json"})
