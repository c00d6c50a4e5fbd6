"""The time-masked ReAct loop (paper Algorithm 1)."""

from __future__ import annotations

from oracleproto.agent.loop import run_sample
from oracleproto.agent.result import SampleResult
from oracleproto.agent.status import Counters, Injection, choose_injection

__all__ = ["Counters", "Injection", "SampleResult", "choose_injection", "run_sample"]
