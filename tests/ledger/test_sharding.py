"""Which models a shard records: for every N, the shards are disjoint, cover the experiment, differ
in size by at most one, and do not depend on the order the models were listed in."""

from __future__ import annotations

import random

import pytest

from oracleproto.errors import ConfigError
from oracleproto.runner.sharding import ShardSpec, assign, chosen_subset

SLUGS = [f"vendor-{chr(97 + i % 5)}/model-{i:02d}" for i in range(13)]


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5, 7, 13, 20])
@pytest.mark.parametrize("size", [0, 1, 2, 5, 13])
def test_shards_are_disjoint_cover_all_and_are_balanced(count: int, size: int) -> None:
    models = SLUGS[:size]
    shards = [assign(models, index, count) for index in range(count)]
    seen = [slug for shard in shards for slug in shard]
    assert sorted(seen) == sorted(models)  # every model once: disjoint and covering
    sizes = [len(shard) for shard in shards]
    assert max(sizes) - min(sizes) <= 1
    shuffled = list(models)
    random.Random(count * 100 + size).shuffle(shuffled)
    for index in range(count):
        assert set(assign(shuffled, index, count)) == set(shards[index])  # the listing order is irrelevant
        assert assign(shuffled, index, count) == [m for m in shuffled if m in set(shards[index])]


def test_shard_i_takes_the_sorted_positions_i_i_plus_n() -> None:
    models = ["z/last", "a/first", "m/middle", "b/second"]
    assert assign(models, 0, 2) == ["a/first", "m/middle"]  # sorted: a, b, m, z
    assert assign(models, 1, 2) == ["z/last", "b/second"]  # in the configured order
    assert assign(models, 3, 5) == ["z/last"] and assign(models, 4, 5) == []


def test_shard_specs() -> None:
    assert ShardSpec.parse("2/5") == ShardSpec(2, 5) and ShardSpec.parse(" auto / 3 ") == ShardSpec(None, 3)
    assert ShardSpec.parse("auto/3").text == "auto/3"
    assert ShardSpec(None, 3).resolved({"JOB_COMPLETION_INDEX": "1"}) == ShardSpec(1, 3)
    assert (
        ShardSpec(None, 3).resolved({"ORACLEPROTO_SHARD_INDEX": "0", "JOB_COMPLETION_INDEX": "2"}).index == 0
    )
    assert ShardSpec(1, 3).resolved({}) == ShardSpec(1, 3)
    for text, said in [("3/3", "must be below N"), ("1/0", "N must be from 1"), ("-1/2", "is not I/N")]:
        with pytest.raises(ValueError, match=said):
            ShardSpec.parse(text)
    with pytest.raises(ConfigError, match=r"ORACLEPROTO_SHARD_INDEX='x' is not a shard index \(0 to 2\)"):
        ShardSpec(None, 3).resolved({"ORACLEPROTO_SHARD_INDEX": "x"})


def test_an_explicit_subset_keeps_the_experiment_order_and_refuses_strangers() -> None:
    assert chosen_subset(["b", "a", "c"], ["c", "b"]) == ["b", "c"]
    with pytest.raises(ConfigError, match=r"--shard-models: d not among the experiment's models \(a, b, c;"):
        chosen_subset(["b", "a", "c"], ["d"])
