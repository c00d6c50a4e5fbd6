"""Read a small UTF-8 text file a setting points at, or say exactly what is wrong with it.

Used for ``PROTOCOLS_FILE`` and ``LEAK_DETECTOR_PROMPT_FILE``: every failure is a
``ConfigError`` naming the setting, the file, the problem and the fix — never a traceback.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from oracleproto.errors import ConfigError
from oracleproto.primitives.oserrors import describe_os_error

#: Upper bound on a text file read through a setting: prompts are kilobytes; this is a typo guard.
MAX_TEXT_FILE_BYTES = 1024 * 1024
_BOM = "\ufeff"


def read_text_file(path: Path, *, setting: str, max_bytes: int = MAX_TEXT_FILE_BYTES) -> str:
    """The text of ``path`` (a leading BOM dropped); ConfigError naming ``setting`` and the file."""
    where = f"{setting} {path}"
    # An environment variable can be unset; a command-line option (``--protocols``) just left out.
    unset = f", or unset {setting}" if not setting.startswith("-") else ""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such file; check the path{unset}") from None
    except OSError as exc:
        raise ConfigError(f"{setting}: cannot read {describe_os_error(exc, path)}") from None
    if stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"{where}: is a directory; point {setting} at a file") from None
    if not stat.S_ISREG(info.st_mode):
        # A FIFO or device would block or never end: only regular files are read.
        raise ConfigError(f"{where}: not a regular file; point {setting} at a regular file")
    if info.st_size > max_bytes:
        raise ConfigError(
            f"{where}: {info.st_size} bytes, more than the {max_bytes} bytes allowed; "
            "point it at the intended file (prompt texts are a few kilobytes)"
        )
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise ConfigError(f"{setting}: cannot read {describe_os_error(exc, path)}") from None
    if len(data) > max_bytes:
        raise ConfigError(f"{where}: more than the {max_bytes} bytes allowed; point it at the intended file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            f"{where}: not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} (line {line}); "
            "re-save the file as UTF-8"
        ) from None
    return text[1:] if text.startswith(_BOM) else text
