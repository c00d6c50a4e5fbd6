"""A session's requests per channel, and how they were served; mergeable across processes.

A replay split over several processes (``runner/replay_shards.py``) has one ``RecordReplay`` per
process; their traffic adds up to the single process's exactly: counts are summed and the
distinct keys are a union (a key two processes both used is one key).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class SessionTraffic:
    """Request counters (``"<channel>:<what>"``) and, per channel, the keys used this session."""

    counts: Counter[str] = field(default_factory=Counter)
    keys: dict[str, set[str]] = field(default_factory=dict)

    def absorb(self, other: SessionTraffic) -> None:
        """Add ``other``'s requests to these (another process's share of the same session)."""
        self.counts.update(other.counts)
        for channel, keys in other.keys.items():
            self.keys.setdefault(channel, set()).update(keys)

    def stats(self) -> dict[str, dict[str, int]]:
        """Per channel: requests seen, served from cassette, sent live, distinct keys, and how many
        waited for an identical call in flight (and were then served its final outcome)."""
        return {
            channel: {
                "requests": self.counts[f"{channel}:requests"],
                "from_cassette": self.counts[f"{channel}:hits"],
                "live": self.counts[f"{channel}:live"],
                "distinct_keys": len(keys),
                "waited": self.counts[f"{channel}:waited"],
            }
            for channel, keys in sorted(self.keys.items())
        }
