"""Divide by the quota method, and the per-cluster split of a Divide spread.

Behaviours covered:
- table: 5 at 70/30, 20/80 of 10, equal weights give the extra to the first parties, weight-0 parties get 0,
  170:110:60 from 6 to 7 replicas moves no replica between clusters;
- bad input (no party, all weights 0, negative total or weight) raises ValueError with a reason;
- properties: the parts sum to the total; each part is the floor or ceiling of its exact share; raising the
  total never lowers a part (house monotone); permuting parties of distinct weights permutes the result;
  the heap implementation equals a literal one-seat-at-a-time scan of the method's definition;
- split_replicas: domains by weight then clusters equally (first by name get the extra), 0-replica clusters
  listed, a domain without clusters or a cluster in two domains refused, the split is house monotone;
- speed: 100,000 replicas over 100 parties is computed (sum checked; no timing asserted).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.scheduling import spreading

weights_strategy = st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=12).filter(
    lambda weights: sum(weights) > 0
)


def quota_method_by_scan(total: int, weights: list[int]) -> list[int]:
    """The method exactly as defined, one seat at a time with a full scan: the reference for the heap."""
    weight_sum = sum(weights)
    seats = [0] * len(weights)
    for step in range(total):
        eligible = [i for i, w in enumerate(weights) if w > 0 and seats[i] * weight_sum < w * (step + 1)]
        best = eligible[0]
        for i in eligible[1:]:
            mine, theirs = weights[i] * (seats[best] + 1), weights[best] * (seats[i] + 1)
            if mine > theirs or (mine == theirs and weights[i] > weights[best]):
                best = i
        seats[best] += 1
    return seats


@pytest.mark.parametrize(
    ("total", "weights", "expected"),
    [
        (5, [70, 30], [4, 1]),
        (10, [20, 80], [2, 8]),
        (6, [170, 110, 60], [3, 2, 1]),
        (7, [170, 110, 60], [4, 2, 1]),
        (5, [1, 1, 1], [2, 2, 1]),
        (4, [50, 0, 50], [2, 0, 2]),
        (0, [70, 30], [0, 0]),
        (1, [30, 70], [0, 1]),
        (1, [50, 50], [1, 0]),
        (3, [100], [3]),
    ],
)
def test_divide_table(total: int, weights: list[int], expected: list[int]) -> None:
    assert spreading.divide(total, weights) == expected


def test_scaling_170_110_60_from_6_to_7_moves_nothing() -> None:
    before, after = spreading.divide(6, [170, 110, 60]), spreading.divide(7, [170, 110, 60])
    assert all(b <= a for b, a in zip(before, after, strict=True))
    assert sum(after) - sum(before) == 1


@pytest.mark.parametrize(
    ("total", "weights", "message"),
    [
        (3, [], "no party"),
        (3, [0, 0], "no party"),
        (-1, [1], "negative"),
        (3, [1, -1], "negative"),
    ],
)
def test_divide_refuses_what_has_no_answer(total: int, weights: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        spreading.divide(total, weights)


@settings(max_examples=200)
@given(total=st.integers(min_value=0, max_value=300), weights=weights_strategy)
def test_divide_sums_to_total_within_quota(total: int, weights: list[int]) -> None:
    parts = spreading.divide(total, weights)
    assert sum(parts) == total
    weight_sum = sum(weights)
    for part, weight in zip(parts, weights, strict=True):
        floor = weight * total // weight_sum
        ceiling = -(-weight * total // weight_sum)
        assert floor <= part <= ceiling


@settings(max_examples=100)
@given(total=st.integers(min_value=0, max_value=150), weights=weights_strategy)
def test_divide_is_house_monotone(total: int, weights: list[int]) -> None:
    previous = spreading.divide(0, weights)
    for step in range(1, total + 1):
        current = spreading.divide(step, weights)
        assert all(after >= before for before, after in zip(previous, current, strict=True))
        previous = current


@settings(max_examples=200)
@given(total=st.integers(min_value=0, max_value=200), weights=weights_strategy)
def test_divide_equals_the_definition(total: int, weights: list[int]) -> None:
    assert spreading.divide(total, weights) == quota_method_by_scan(total, weights)


@settings(max_examples=200)
@given(
    total=st.integers(min_value=0, max_value=200),
    weights=st.lists(st.integers(min_value=1, max_value=1000), min_size=1, max_size=10, unique=True),
    data=st.data(),
)
def test_divide_follows_a_permutation_of_distinct_weights(
    total: int, weights: list[int], data: st.DataObject
) -> None:
    order = data.draw(st.permutations(range(len(weights))))
    parts = spreading.divide(total, weights)
    permuted = spreading.divide(total, [weights[i] for i in order])
    assert permuted == [parts[i] for i in order]


def test_divide_handles_a_large_total_over_many_parties() -> None:
    weights = [index % 7 + 1 for index in range(100)]
    parts = spreading.divide(100_000, weights)
    assert sum(parts) == 100_000
    weight_sum = sum(weights)
    for part, weight in zip(parts, weights, strict=True):
        assert weight * 100_000 // weight_sum <= part <= -(-weight * 100_000 // weight_sum)


def test_split_replicas_divides_domains_then_clusters() -> None:
    domains = [("us", 70, ["us-1", "us-2"]), ("eu", 30, ["eu-1", "eu-2", "eu-3"])]
    assert spreading.split_replicas(10, domains) == {"us-1": 4, "us-2": 3, "eu-1": 1, "eu-2": 1, "eu-3": 1}


def test_split_replicas_keeps_clusters_whose_share_is_zero() -> None:
    domains = [("us", 1, ["us-1", "us-2", "us-3"])]
    assert spreading.split_replicas(1, domains) == {"us-1": 1, "us-2": 0, "us-3": 0}


@pytest.mark.parametrize(
    ("domains", "message"),
    [
        ([("us", 50, ["us-1"]), ("eu", 50, [])], "'eu' has no cluster"),
        ([("us", 50, ["c1"]), ("eu", 50, ["c1"])], "more than one topology domain"),
        ([("us", 0, ["c1"])], "no party"),
    ],
)
def test_split_replicas_refuses_bad_domains(domains: list[tuple[str, int, list[str]]], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        spreading.split_replicas(3, domains)


@settings(max_examples=100)
@given(
    total=st.integers(min_value=0, max_value=60),
    sizes=st.lists(
        st.tuples(st.integers(min_value=0, max_value=100), st.integers(min_value=1, max_value=4)),
        min_size=1,
        max_size=5,
    ).filter(lambda sizes: sum(weight for weight, _ in sizes) > 0),
)
def test_split_replicas_sums_and_is_house_monotone(total: int, sizes: list[tuple[int, int]]) -> None:
    domains = [(f"d{d}", weight, [f"d{d}-c{c}" for c in range(n)]) for d, (weight, n) in enumerate(sizes)]
    smaller, larger = spreading.split_replicas(total, domains), spreading.split_replicas(total + 1, domains)
    assert sum(smaller.values()) == total
    assert sum(larger.values()) == total + 1
    assert all(larger[cluster] >= smaller[cluster] for cluster in smaller)


@settings(max_examples=100)
@given(total=st.integers(min_value=0, max_value=300), parties=st.integers(min_value=1, max_value=12))
def test_equal_weights_give_the_extra_to_the_first_parties(total: int, parties: int) -> None:
    domains = [("all", 1, [f"c{index:02}" for index in range(parties)])]
    assert list(spreading.split_replicas(total, domains).values()) == spreading.divide(total, [1] * parties)
