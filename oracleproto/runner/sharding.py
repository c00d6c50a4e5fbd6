"""Which model configurations one shard of an experiment records (``run --shard I/N``).

The unit is a model configuration, a real model slug with every grid cell it runs in: the unit of
a leaderboard row. The experiment's models are sorted by slug (code point order, independent of
how they were listed) and shard ``I`` of ``N`` takes those at sorted positions ``I, I+N, I+2N, …``:
every model lands in exactly one shard, whatever order the shards start in or which machine runs
them. ``--shard auto/N`` reads ``I`` from the environment: ``ORACLEPROTO_SHARD_INDEX``, else
``JOB_COMPLETION_INDEX`` (what a Kubernetes Indexed Job sets in each pod).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from oracleproto.errors import ConfigError

#: Where ``--shard auto/N`` reads its index from, first found wins.
INDEX_VARIABLES = ("ORACLEPROTO_SHARD_INDEX", "JOB_COMPLETION_INDEX")
#: The largest N: far above any panel (the paper's has 30 models); keeps a typo from meaning 10^9.
MAX_SHARDS = 10_000
_SHARD = re.compile(r"^\s*(auto|\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class ShardSpec:
    """``--shard I/N``: shard ``index`` (None: from the environment) of ``count``."""

    index: int | None
    count: int

    @classmethod
    def parse(cls, text: str) -> ShardSpec:
        """``I/N`` or ``auto/N``; ``ValueError`` with the reason otherwise."""
        match = _SHARD.match(text)
        if match is None:
            raise ValueError(f"{text!r} is not I/N or auto/N (e.g. 0/4: the first of four shards)")
        count = int(match.group(2))
        if not 1 <= count <= MAX_SHARDS:
            raise ValueError(f"{text!r}: N must be from 1 to {MAX_SHARDS}")
        index = None if match.group(1) == "auto" else int(match.group(1))
        if index is not None and index >= count:
            raise ValueError(f"{text!r}: I counts from 0 and must be below N (0…{count - 1})")
        return cls(index, count)

    def resolved(self, env: Mapping[str, str]) -> ShardSpec:
        """This spec with its index read from ``env`` when it is ``auto``."""
        if self.index is not None:
            return self
        for name in INDEX_VARIABLES:
            raw = env.get(name, "").strip()
            if not raw:
                continue
            if not raw.isdigit() or int(raw) >= self.count:
                raise ConfigError(
                    f"--shard auto/{self.count}: {name}={raw!r} is not a shard index (0 to {self.count - 1})"
                )
            return ShardSpec(int(raw), self.count)
        raise ConfigError(
            f"--shard auto/{self.count} reads the shard index from the environment, but neither "
            f"{' nor '.join(INDEX_VARIABLES)} is set; set one (0…{self.count - 1}), or pass "
            f"--shard I/{self.count}"
        )

    @property
    def text(self) -> str:
        """``I/N`` (``auto/N`` before it is resolved)."""
        return f"{'auto' if self.index is None else self.index}/{self.count}"


def assign(models: Sequence[str], index: int, count: int) -> list[str]:
    """The models shard ``index`` of ``count`` records, in the experiment's configured order."""
    ordered = sorted(set(models))
    mine = {slug for position, slug in enumerate(ordered) if position % count == index}
    return [slug for slug in models if slug in mine]


def chosen_subset(models: Sequence[str], chosen: Sequence[str]) -> list[str]:
    """``--shard-models``: the chosen models in the experiment's order; each must be one of its models."""
    unknown = [slug for slug in chosen if slug not in models]
    if unknown:
        raise ConfigError(
            f"--shard-models: {', '.join(unknown)} not among the experiment's models "
            f"({', '.join(sorted(models))}; MODELS, --models or the config file); a shard records a part "
            "of the experiment's models"
        )
    wanted = set(chosen)
    return [slug for slug in models if slug in wanted]
