"""Exit statuses of the command line, in one place (README and docs/design.md list them)."""

from __future__ import annotations

#: A check failed: a replay did not reproduce its recording, verify found a difference, a diff drifted.
EXIT_FAILED = 1
#: Bad input or an error the tool reports with one message (what, where, how to fix).
EXIT_INVALID = 2
#: A run or refresh aborted by an authentication failure (401/403); it is resumable.
EXIT_AUTH = 3
#: The user interrupted a run or refresh (Ctrl-C, as shells report SIGINT); it is resumable.
EXIT_INTERRUPTED = 130
#: An internal error (a bug): one line asks for a report; the traceback went to a log file.
EXIT_INTERNAL = 70
