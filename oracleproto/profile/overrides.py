"""The shorthands that override one part of a profile: ``PROTOCOLS_FILE`` and ``LEAK_DETECTOR_PROMPT_FILE``.

A run's *effective* profile is its profile with these parts replaced; its fingerprint is the run's
harness identity, so a run with a protocols file differs from one without, as its bytes do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from oracleproto.profile.model import BlockSpec, HarnessProfile, Protocols


def with_protocols(
    profile: HarnessProfile, *, separator: str, suffix: str, blocks: Sequence[tuple[str, str]]
) -> HarnessProfile:
    """``profile`` whose protocols are a protocols file's: (name, text) blocks, no per-block framing."""
    specs = tuple(BlockSpec(name, text) for name, text in blocks)
    return replace(profile, protocols=Protocols(separator, suffix, specs))


def with_detector_template(profile: HarnessProfile, template: str) -> HarnessProfile:
    """``profile`` whose detector prompt template is ``template``."""
    return replace(profile, detector=replace(profile.detector, template=template))
