"""Provider simulator: OpenAI-compatible chat and Tavily-compatible search on loopback."""

from __future__ import annotations

from oracleproto.sim.faults import FaultConfig
from oracleproto.sim.personas import DETECTOR_SLUG, PERSONAS, Persona
from oracleproto.sim.server import SimConfig, SimHandler, Simulator

__all__ = ["DETECTOR_SLUG", "PERSONAS", "FaultConfig", "Persona", "SimConfig", "SimHandler", "Simulator"]
