"""Provider simulator: OpenAI-compatible chat and Tavily-compatible search on loopback."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oracleproto._lazy import export_dir, load_export

if TYPE_CHECKING:
    from oracleproto.sim.faults import FaultConfig
    from oracleproto.sim.personas import DETECTOR_SLUG, PERSONAS, Persona
    from oracleproto.sim.server import SimConfig, SimHandler, Simulator

# Each public name and the module that defines it, imported on first use (PEP 562).
_EXPORTS = {
    "FaultConfig": "oracleproto.sim.faults",
    "DETECTOR_SLUG": "oracleproto.sim.personas",
    "PERSONAS": "oracleproto.sim.personas",
    "Persona": "oracleproto.sim.personas",
    "SimConfig": "oracleproto.sim.server",
    "SimHandler": "oracleproto.sim.server",
    "Simulator": "oracleproto.sim.server",
}

__all__ = ["DETECTOR_SLUG", "PERSONAS", "FaultConfig", "Persona", "SimConfig", "SimHandler", "Simulator"]


def __getattr__(name: str) -> Any:
    return load_export(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return export_dir(globals(), _EXPORTS)
