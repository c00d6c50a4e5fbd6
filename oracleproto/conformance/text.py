"""Untrusted text made safe to print: captures come from strangers, and so do their bodies.

Every character Python does not call printable (controls, bidi and other format characters,
lone surrogates, separators other than the space, unassigned and private-use code points) is
shown as a visible ASCII token, so a capture cannot move the cursor, reorder a line or hide a
difference. The tokens (``<LF>``, ``<U+202E>``, ``<0xFF>``) cannot be mistaken for JSON escapes,
which matters when a report shows ``\\u00e9`` beside ``é``.
"""

from __future__ import annotations

_NAMED = {"\n": "<LF>", "\r": "<CR>", "\t": "<TAB>"}
#: surrogateescape maps an undecodable byte 0xNN to U+DCNN; shown as the byte it stands for.
_BYTE_ESCAPES = range(0xDC80, 0xDD00)


def _token(ch: str, *, raw_bytes: bool) -> str:
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    if raw_bytes and code in _BYTE_ESCAPES:
        return f"<0x{code - 0xDC00:02X}>"
    return f"<U+{code:04X}>"


def safe_text(text: str) -> str:
    """``text`` with every non-printable character replaced by a visible ASCII token."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _token(ch, raw_bytes=False) for ch in text)


def safe_bytes(data: bytes) -> str:
    """``data`` as UTF-8 text made safe to print; an invalid byte shows as ``<0xNN>``."""
    text = data.decode("utf-8", "surrogateescape")
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _token(ch, raw_bytes=True) for ch in text)


def clip(text: str, limit: int = 120) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (apply before :func:`safe_text`)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
