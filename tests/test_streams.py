"""Named random streams: identity, order independence, seeding and validation."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from lobbysim.streams import Streams


def test_get_returns_the_same_generator_for_the_same_name() -> None:
    streams = Streams(3)
    assert streams.get("arrivals") is streams.get("arrivals")
    assert streams.get("arrivals") is not streams.get("population")
    assert streams.names() == ["arrivals", "population"]


def test_a_stream_does_not_depend_on_the_order_names_are_requested() -> None:
    first = Streams(7)
    expected = first.get("arrivals").random(5)

    second = Streams(7)
    second.get("policy").random(100)  # another component draws first ...
    second.get("population").standard_normal(1000)
    got = second.get("arrivals").random(5)  # ... and "arrivals" is unaffected
    np.testing.assert_array_equal(got, expected)


def test_the_stream_is_the_documented_seed_sequence_of_the_name() -> None:
    # A stable hash (crc32), not Python's per-process salted hash(): the same in every run.
    sequence = np.random.SeedSequence(11, spawn_key=(zlib.crc32(b"quits"),))
    expected = np.random.default_rng(sequence).random(4)
    np.testing.assert_array_equal(Streams(11).get("quits").random(4), expected)


def test_distinct_names_give_different_streams() -> None:
    streams = Streams(0)
    names = ["arrivals", "population", "performance", "quits", "scores", "policy"]
    draws = [streams.get(name).integers(0, 2**62, size=4) for name in names]
    assert len({tuple(d) for d in draws}) == len(names)


def test_same_seed_same_numbers_and_different_seeds_different_numbers() -> None:
    a = Streams(42).get("arrivals").random(8)
    b = Streams(42).get("arrivals").random(8)
    c = Streams(43).get("arrivals").random(8)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_large_and_numpy_integer_seeds_are_accepted() -> None:
    a = Streams(np.int64(5)).get("x").random(3)  # type: ignore[arg-type]
    np.testing.assert_array_equal(a, Streams(5).get("x").random(3))
    assert Streams(2**100).seed == 2**100


def test_spawn_depends_only_on_seed_name_and_index() -> None:
    streams = Streams(9)
    first = streams.spawn("window", 3).random(6)
    streams.get("window").random(50)
    streams.spawn("window", 4).random(50)
    again = streams.spawn("window", 3).random(6)  # a fresh generator at the stream's start
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first, Streams(9).spawn("window", 3).random(6))
    assert not np.array_equal(first, streams.spawn("window", 2).random(6))
    assert not np.array_equal(first, streams.spawn("other", 3).random(6))
    assert not np.array_equal(first, Streams(10).spawn("window", 3).random(6))
    assert not np.array_equal(
        Streams(9).get("window").random(6), Streams(9).spawn("window", 0).random(6)
    )


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True, None])
def test_a_bad_seed_is_rejected_naming_the_value(seed: object) -> None:
    with pytest.raises(ValueError, match=r"seed must be a non-negative integer, got"):
        Streams(seed)  # type: ignore[arg-type]


@pytest.mark.parametrize("index", [-1, 0.5, False])
def test_a_bad_spawn_index_is_rejected(index: object) -> None:
    with pytest.raises(ValueError, match=r"index must be a non-negative integer"):
        Streams(0).spawn("window", index)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["", 3, None])
def test_a_bad_stream_name_is_rejected(name: object) -> None:
    with pytest.raises(ValueError, match=r"stream name must be a non-empty string"):
        Streams(0).get(name)  # type: ignore[arg-type]


def test_names_sharing_a_key_are_rejected_rather_than_sharing_a_stream() -> None:
    assert zlib.crc32(b"plumless") == zlib.crc32(b"buckeroo")  # a known CRC-32 collision
    streams = Streams(0)
    streams.get("plumless")
    with pytest.raises(ValueError, match=r"'plumless' and 'buckeroo' share the key"):
        streams.get("buckeroo")


def test_uniforms_drawn_ahead_are_the_generators_own_draws_in_order() -> None:
    """Uniforms.take(k) against rng.random(k) on a twin generator, over a run of small and
    large takes (across block ends, and larger than a block) mixed with draws of other kinds
    from generator(): the same values, and the generator left where the twin is."""
    from lobbysim.streams import Uniforms

    plan = np.random.default_rng(3)
    ties, twin = Uniforms(np.random.default_rng(11)), np.random.default_rng(11)
    for step in range(3000):
        if plan.random() < 0.03:  # someone else draws from the stream itself
            kind = int(plan.integers(3))
            rng = ties.generator()
            if kind == 0:
                assert rng.permutation(7).tolist() == twin.permutation(7).tolist()
            elif kind == 1:
                assert rng.standard_normal() == twin.standard_normal()
            else:
                assert rng.random(3).tolist() == twin.random(3).tolist()
        else:
            k = int(plan.integers(0, 9)) if step % 500 else 5000
            assert ties.take(k) == twin.random(k).tolist()
    assert ties.generator().bit_generator.state == twin.bit_generator.state
