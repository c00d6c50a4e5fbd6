"""``--allow-errors N|FRACTION``: how many samples of a recording may end in a call error.

A recording whose samples ended in call errors used to exit 0 ("samples errored 6 (network 6)")
whenever the circuit breaker had not seen enough calls to trip: CI passed a dead run (issue 28 §2).
Now such a run exits ``EXIT_SAMPLE_ERRORS`` (6) unless the errors are within what the user allows:
none by default, ``N`` samples, or a fraction of the run's admitted samples (``0.05`` or ``5%``)
for who wants a partial run. The run itself is complete on disk either way; rerunning it with
``--run-id`` redoes exactly the errored samples (the resume rule), which is what the summary says.

The count is this session's: at the end of a session every errored sample of the run was redone
in it (errored slots are never "done"), so it is also the run's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class AllowedErrors:
    """At most ``count`` errored samples, or at most ``fraction`` of the admitted ones."""

    count: int | None = 0
    fraction: float | None = None
    #: As the user wrote it (for messages).
    text: str = "0"

    @classmethod
    def parse(cls, text: str) -> AllowedErrors:
        """``N`` (a count), ``0.05`` or ``5%`` (a fraction); ``ValueError`` saying what is expected."""
        value = text.strip()
        expected = (
            f"--allow-errors {text!r}: expected a number of samples (e.g. 3) or a fraction of the run's "
            "admitted samples (e.g. 0.05 or 5%)"
        )
        try:
            if value.endswith("%"):
                fraction = float(value[:-1]) / 100
            elif value.isdigit():
                return cls(count=int(value), text=value)
            else:
                fraction = float(value)
        except ValueError:
            raise ValueError(expected) from None
        if not math.isfinite(fraction) or not 0 <= fraction <= 1:
            raise ValueError(f"{expected}; a fraction lies between 0 and 1 (0% and 100%)")
        return cls(count=None, fraction=fraction, text=value)

    def limit(self, admitted: int) -> int:
        """The most errored samples allowed in a run of ``admitted`` samples."""
        if self.count is not None:
            return self.count
        assert self.fraction is not None
        # Rounded down: "5%" of 10 samples allows none (an error is never rounded into a pass).
        return math.floor(self.fraction * admitted + 1e-9)

    def exceeded(self, errored: int, admitted: int) -> bool:
        """True when ``errored`` samples are more than this allows."""
        return errored > self.limit(admitted)


#: The default: a recording with any errored sample fails.
NO_ERRORS = AllowedErrors()
