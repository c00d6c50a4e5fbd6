"""Harness profiles: every byte-level choice of a harness as data (docs/harness-profile.md)."""

from __future__ import annotations

from oracleproto.profile.builtin import BUILTIN_NAME, builtin_profile, builtin_profile_data
from oracleproto.profile.canonical import export_text, profile_fingerprint, profile_to_data
from oracleproto.profile.load import BUILTIN_WORD, PROFILE_SETTING, load_profile, parse_profile_text
from oracleproto.profile.model import HarnessProfile, JsonStyle
from oracleproto.profile.parse import profile_from_data

__all__ = [
    "BUILTIN_NAME",
    "BUILTIN_WORD",
    "PROFILE_SETTING",
    "HarnessProfile",
    "JsonStyle",
    "builtin_profile",
    "builtin_profile_data",
    "export_text",
    "load_profile",
    "parse_profile_text",
    "profile_fingerprint",
    "profile_from_data",
    "profile_to_data",
]
