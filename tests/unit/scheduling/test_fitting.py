"""Per-node fit of a group's pods, and what a user is told when they do not fit.

Behaviours covered:
- packing: pods land on nodes, not cluster totals (three 2-cpu pods on three 1.5-cpu nodes do not fit); room
  is consumed (``after``); a resource a node does not list is 0 there; a pod requesting nothing fits on any
  eligible node; an empty demand always fits, even with no nodes; a pod needs a node even when it asks
  nothing; a multi-resource case that cpu-first packing misses is packed;
- eligibility: nodeSelector; required node affinity (In, NotIn, Exists, DoesNotExist, Gt, Lt, matchFields,
  ORed terms, an empty term matches nothing); taints (NoSchedule and NoExecute need a toleration,
  PreferNoSchedule does not; Equal/Exists; empty key with Exists tolerates all; empty effect matches all);
- shortfall wording: resource, largest pod's need and best node's room; pods of a shape vs room for them;
  nodeSelector, affinity and taint that no node satisfies; extended resources a node lacks; no nodes;
- rooms() from Node.available in name order;
- properties: never oversubscribes a node, consumes exactly the demand; deterministic and independent of the
  order of demands and nodes; adding pods no larger than every pod already there, or pods no node can hold,
  never turns a failing set into a fitting one; more replicas of one shape never fit where fewer did not;
- the ledger's path: ``fit_in_name_order`` on rooms in name order with ``prepare``d demands decides as
  ``fit`` does; ``prepare`` drops shapes without pods and knows the least every pod asks, so a node with
  less is passed by whatever the pods' selectors; the node a shortfall names is the closest to holding a
  pod, compared exactly; the size orders rank shapes by exact shares of the free room.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nova_gitops.api import clusters
from nova_gitops.scheduling import demand, fitting


def shape(
    cpu: int = 0,
    memory: int = 0,
    selector: dict[str, str] | None = None,
    affinity: tuple[demand.NodeSelectorTerm, ...] = (),
    tolerations: tuple[demand.Toleration, ...] = (),
    gpu: int = 0,
) -> demand.PodShape:
    requests = {"cpu": cpu, "memory": memory, "nvidia.com/gpu": gpu}
    return demand.PodShape(
        {name: milli for name, milli in sorted(requests.items()) if milli},
        dict(sorted((selector or {}).items())),
        affinity,
        tolerations,
    )


def pods(count: int, pod: demand.PodShape) -> demand.PodDemand:
    return demand.PodDemand(pod, count)


def node(
    name: str,
    cpu: int = 0,
    memory: int = 0,
    labels: dict[str, str] | None = None,
    taints: tuple[clusters.Taint, ...] = (),
) -> fitting.NodeRoom:
    free = {"cpu": cpu, "memory": memory}
    return fitting.NodeRoom(name, free, labels or {}, taints)


GIB = 1024**3 * 1000
GPU_TAINT = clusters.Taint("dedicated", "gpu", "NoSchedule")


def test_pods_must_each_fit_on_one_node() -> None:
    rooms = [node("n1", cpu=1500), node("n2", cpu=1500), node("n3", cpu=1500)]
    result = fitting.fit(rooms, [pods(3, shape(cpu=2000))])
    assert not result.ok
    assert result.shortfall == "needs 2000m cpu on one node, best node has 1500m"
    assert result.after == tuple(rooms)


def test_room_is_consumed_first_fit_by_name() -> None:
    rooms = [node("b", cpu=4000, memory=8 * GIB), node("a", cpu=3000, memory=8 * GIB)]
    result = fitting.fit(rooms, [pods(3, shape(cpu=1000, memory=GIB)), pods(1, shape(cpu=2000))])
    assert result.ok and result.shortfall == ""
    after = {room.name: dict(room.free) for room in result.after}
    # the 2-cpu pod is the largest (2/7 of the cpu); it goes to "a", which then holds one small pod
    assert after == {"a": {"cpu": 0, "memory": 7 * GIB}, "b": {"cpu": 2000, "memory": 6 * GIB}}
    assert [room.name for room in result.after] == ["b", "a"]


def test_count_shortfall_names_pods_and_room() -> None:
    result = fitting.fit([node("n1", cpu=4000), node("n2", cpu=1000)], [pods(3, shape(cpu=2000))])
    assert result.shortfall == "needs 3 pods of 2000m cpu, room for 2"


@pytest.mark.parametrize(
    ("rooms", "pod", "shortfall"),
    [
        (
            [node("n1", cpu=8000)],
            shape(cpu=1000, gpu=1000),
            "needs 1 nvidia.com/gpu on one node, best node has 0",
        ),
        (
            [node("n1", cpu=900, memory=GIB), node("n2", cpu=500, memory=GIB)],
            shape(cpu=1500, memory=2 * GIB),
            "needs 1500m cpu and 2Gi memory on one node, best node has 900m cpu and 1Gi memory",
        ),
        (
            [node("n1", cpu=8000, labels={"gpu": "t4"})],
            shape(selector={"gpu": "a100"}),
            "no node matches nodeSelector gpu=a100",
        ),
        (
            [node("n1", cpu=8000, taints=(GPU_TAINT,))],
            shape(cpu=1),
            "no node tolerates taint dedicated=gpu:NoSchedule",
        ),
        (
            [node("n1", cpu=8000, labels={"gpu": "a100"}, taints=(GPU_TAINT,)), node("n2", cpu=9000)],
            shape(cpu=1, selector={"gpu": "a100"}),
            "no node matching nodeSelector gpu=a100 tolerates taint dedicated=gpu:NoSchedule",
        ),
        (
            [node("n1", cpu=8000, labels={"cores": "4"})],
            shape(
                affinity=(demand.NodeSelectorTerm((demand.NodeSelectorRequirement("cores", "Gt", ("8",)),)),)
            ),
            "no node matches the required node affinity cores > 8",
        ),
        ([], shape(), "the cluster reports no nodes"),
    ],
    ids=[
        "extended-missing",
        "two-resources",
        "selector",
        "taint",
        "selector-then-taint",
        "affinity",
        "no-nodes",
    ],
)
def test_shortfall_wording(rooms: list[fitting.NodeRoom], pod: demand.PodShape, shortfall: str) -> None:
    result = fitting.fit(rooms, [pods(1, pod)])
    assert (result.ok, result.shortfall) == (False, shortfall)


def test_empty_demand_always_fits_and_requestless_pods_need_a_node() -> None:
    assert fitting.fit([], []) == fitting.Fit(True, (), "")
    assert fitting.fit([], [pods(0, shape(cpu=1000))]).ok
    full = node("n1", cpu=0)
    assert fitting.fit([full], [pods(50, shape())]).ok
    assert not fitting.fit([full], [pods(1, shape(cpu=1))]).ok


def test_a_packing_cpu_first_misses_is_found() -> None:
    # cpu-first puts (3 cpu, 4 mem) on n1 and strands the (0, 6) pod; packing memory first fits both.
    rooms = [node("n1", cpu=8, memory=6), node("n2", cpu=10, memory=5)]
    assert fitting.fit(rooms, [pods(1, shape(cpu=3, memory=4)), pods(1, shape(memory=6))]).ok


def requirement(
    key: str, operator: demand.NodeSelectorOperator, *values: str
) -> demand.NodeSelectorRequirement:
    return demand.NodeSelectorRequirement(key, operator, values)


LABELS = {"zone": "a", "cores": "16", "gpu": "a100"}


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        ((), True),
        ((demand.NodeSelectorTerm((requirement("zone", "In", "a", "b"),)),), True),
        ((demand.NodeSelectorTerm((requirement("zone", "In", "b"),)),), False),
        ((demand.NodeSelectorTerm((requirement("zone", "NotIn", "b"),)),), True),
        ((demand.NodeSelectorTerm((requirement("spot", "NotIn", "yes"),)),), True),
        ((demand.NodeSelectorTerm((requirement("gpu", "Exists"),)),), True),
        ((demand.NodeSelectorTerm((requirement("gpu", "DoesNotExist"),)),), False),
        ((demand.NodeSelectorTerm((requirement("cores", "Gt", "8"),)),), True),
        ((demand.NodeSelectorTerm((requirement("cores", "Lt", "8"),)),), False),
        ((demand.NodeSelectorTerm((requirement("zone", "Gt", "8"),)),), False),
        ((demand.NodeSelectorTerm((requirement("zone", "In", "a"), requirement("gpu", "In", "t4"))),), False),
        (
            (
                demand.NodeSelectorTerm((requirement("gpu", "In", "t4"),)),
                demand.NodeSelectorTerm((requirement("zone", "In", "a"),)),
            ),
            True,
        ),
        ((demand.NodeSelectorTerm(),), False),
        ((demand.NodeSelectorTerm((), (requirement("metadata.name", "In", "n1"),)),), True),
        ((demand.NodeSelectorTerm((), (requirement("metadata.name", "NotIn", "n1"),)),), False),
    ],
)
def test_required_node_affinity(terms: tuple[demand.NodeSelectorTerm, ...], expected: bool) -> None:
    assert fitting.eligible(node("n1", labels=LABELS), shape(affinity=terms)) is expected


@pytest.mark.parametrize(
    ("taint", "tolerations", "expected"),
    [
        (GPU_TAINT, (), False),
        (clusters.Taint("dedicated", "gpu", "PreferNoSchedule"), (), True),
        (clusters.Taint("dedicated", "gpu", "NoExecute"), (), False),
        (GPU_TAINT, (demand.Toleration("dedicated", "Equal", "gpu", "NoSchedule"),), True),
        (GPU_TAINT, (demand.Toleration("dedicated", "Equal", "tpu", "NoSchedule"),), False),
        (GPU_TAINT, (demand.Toleration("dedicated", "Equal", "gpu", "NoExecute"),), False),
        (GPU_TAINT, (demand.Toleration("dedicated", "Equal", "gpu", ""),), True),
        (GPU_TAINT, (demand.Toleration("dedicated", "Exists", "", ""),), True),
        (GPU_TAINT, (demand.Toleration("other", "Exists", "", ""),), False),
        (GPU_TAINT, (demand.Toleration("", "Exists", "", ""),), True),
        (GPU_TAINT, (demand.Toleration("", "Exists", "", "NoExecute"),), False),
    ],
)
def test_taints_and_tolerations(
    taint: clusters.Taint, tolerations: tuple[demand.Toleration, ...], expected: bool
) -> None:
    assert fitting.eligible(node("n1", taints=(taint,)), shape(tolerations=tolerations)) is expected


def test_node_selector_needs_every_label() -> None:
    room = node("n1", labels={"zone": "a", "gpu": "a100"})
    assert fitting.eligible(room, shape(selector={"zone": "a", "gpu": "a100"}))
    assert not fitting.eligible(room, shape(selector={"zone": "a", "gpu": "t4"}))


def test_rooms_come_from_available_in_name_order() -> None:
    nodes = [
        clusters.Node("n2", {"cpu": 4000}, {"cpu": 1000}, {"a": "b"}, ()),
        clusters.Node("n1", {"cpu": 4000}, {"cpu": 3000}, {}, (GPU_TAINT,)),
    ]
    assert fitting.rooms(nodes) == (
        fitting.NodeRoom("n1", {"cpu": 3000}, {}, (GPU_TAINT,)),
        fitting.NodeRoom("n2", {"cpu": 1000}, {"a": "b"}, ()),
    )


# --- properties -------------------------------------------------------------------------------------------

RESOURCES = ("cpu", "memory", "nvidia.com/gpu")
requests_strategy = st.dictionaries(
    st.sampled_from(RESOURCES), st.integers(min_value=1, max_value=8), max_size=3
)
shape_strategy = st.builds(
    lambda requests, selector, tolerate: demand.PodShape(
        dict(sorted(requests.items())),
        {"zone": selector} if selector else {},
        (),
        (demand.Toleration("dedicated", "Exists"),) if tolerate else (),
    ),
    requests_strategy,
    st.sampled_from(["", "", "a", "b"]),
    st.booleans(),
)
demands_strategy = st.lists(st.builds(demand.PodDemand, shape_strategy, st.integers(0, 4)), max_size=5)
rooms_strategy = st.lists(
    st.builds(
        lambda index, free, zone, tainted: fitting.NodeRoom(
            f"n{index}", free, {"zone": zone}, (GPU_TAINT,) if tainted else ()
        ),
        st.integers(0, 50),
        st.dictionaries(st.sampled_from(RESOURCES), st.integers(min_value=0, max_value=16), max_size=3),
        st.sampled_from(["a", "b"]),
        st.booleans(),
    ),
    max_size=4,
    unique_by=lambda room: room.name,
)


@settings(max_examples=200)
@given(rooms=rooms_strategy, demands=demands_strategy)
def test_fit_never_oversubscribes_and_consumes_exactly_the_demand(
    rooms: list[fitting.NodeRoom], demands: list[demand.PodDemand]
) -> None:
    result = fitting.fit(rooms, demands)
    if not result.ok:
        assert result.after == tuple(rooms) and result.shortfall
        return
    consumed: Counter[str] = Counter()
    for before, after in zip(rooms, result.after, strict=True):
        assert after.name == before.name
        for resource in RESOURCES:
            assert 0 <= after.free.get(resource, 0) <= before.free.get(resource, 0)
            consumed[resource] += before.free.get(resource, 0) - after.free.get(resource, 0)
    assert {name: milli for name, milli in consumed.items() if milli} == demand.total_requests(demands)


@settings(max_examples=200)
@given(rooms=rooms_strategy, demands=demands_strategy, data=st.data())
def test_fit_is_independent_of_input_order(
    rooms: list[fitting.NodeRoom], demands: list[demand.PodDemand], data: st.DataObject
) -> None:
    result = fitting.fit(rooms, demands)
    shuffled = fitting.fit(data.draw(st.permutations(rooms)), data.draw(st.permutations(demands)))
    assert (shuffled.ok, shuffled.shortfall) == (result.ok, result.shortfall)
    assert sorted(shuffled.after, key=repr) == sorted(result.after, key=repr)


@settings(max_examples=100)
@given(rooms=rooms_strategy, demands=demands_strategy, extra=shape_strategy, count=st.integers(1, 3))
def test_adding_smaller_pods_never_rescues_a_failing_set(
    rooms: list[fitting.NodeRoom], demands: list[demand.PodDemand], extra: demand.PodShape, count: int
) -> None:
    present = [item.shape.requests for item in demands if item.count]
    smaller = all(
        extra.requests != requests and all(extra.requests.get(r, 0) <= requests.get(r, 0) for r in RESOURCES)
        for requests in present
    )
    if not fitting.fit(rooms, demands).ok and smaller:
        assert not fitting.fit(rooms, [*demands, pods(count, extra)]).ok


@settings(max_examples=100)
@given(rooms=rooms_strategy, demands=demands_strategy, extra=shape_strategy)
def test_adding_a_pod_no_node_can_hold_never_fits(
    rooms: list[fitting.NodeRoom], demands: list[demand.PodDemand], extra: demand.PodShape
) -> None:
    too_big = demand.PodShape({**extra.requests, "cpu": 17}, extra.node_selector, (), extra.tolerations)
    assert not fitting.fit(rooms, [*demands, pods(1, too_big)]).ok


@settings(max_examples=100)
@given(rooms=rooms_strategy, pod=shape_strategy, count=st.integers(0, 20))
def test_more_replicas_never_fit_where_fewer_did_not(
    rooms: list[fitting.NodeRoom], pod: demand.PodShape, count: int
) -> None:
    if not fitting.fit(rooms, [pods(count, pod)]).ok:
        assert not fitting.fit(rooms, [pods(count + 1, pod)]).ok


def test_equal_shapes_pack_as_one_whatever_their_mapping_order() -> None:
    first = demand.PodShape({"cpu": 1000, "memory": GIB}, {"a": "1", "b": "2"}, (), ())
    second = demand.PodShape({"memory": GIB, "cpu": 1000}, {"b": "2", "a": "1"}, (), ())
    rooms = [node("n1", cpu=3000, memory=8 * GIB, labels={"a": "1", "b": "2"})]
    assert fitting.fit(rooms, [pods(2, first), pods(1, second)]) == fitting.fit(rooms, [pods(3, first)])
    assert fitting.fit(rooms, [pods(2, first), pods(2, second)]).shortfall == (
        "needs 4 pods of 1000m cpu, 1Gi memory, room for 3"
    )


def test_several_untolerated_taints_are_all_named() -> None:
    rooms = [
        node("n1", cpu=8000, taints=(GPU_TAINT,)),
        node("n2", cpu=8000, taints=(clusters.Taint("spot", "", "NoExecute"),)),
    ]
    assert fitting.fit(rooms, [pods(1, shape(cpu=1))]).shortfall == (
        "no node tolerates any of the taints dedicated=gpu:NoSchedule, spot:NoExecute"
    )


def first_fit(
    rooms: list[fitting.NodeRoom], ordered: list[tuple[demand.PodShape, int]]
) -> dict[str, dict[str, int]] | None:
    """First fit, one pod at a time in ``ordered``'s order, each onto the first node by name that takes it
    (the module docstring's definition); each node's free room after, or None when a pod finds no node."""
    by_name = sorted(rooms, key=lambda room: room.name)
    free = {room.name: dict(room.free) for room in by_name}
    for pod, count in ordered:
        for _ in range(count):
            room = next(
                (
                    room
                    for room in by_name
                    if fitting.eligible(room, pod) and fitting.within(pod.requests, free[room.name])
                ),
                None,
            )
            if room is None:
                return None
            for resource, milli in pod.requests.items():
                free[room.name][resource] = free[room.name].get(resource, 0) - milli
    return {name: {key: value for key, value in room.items() if value} for name, room in free.items()}


def free_after(result: fitting.Fit) -> dict[str, dict[str, int]]:
    return {room.name: {key: value for key, value in room.free.items() if value} for room in result.after}


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_fit_packs_pods_largest_first_each_onto_the_first_node_with_room(data: st.DataObject) -> None:
    """With one resource, "largest first" has one meaning: ``fit`` packs as first fit does in that order,
    whether the group fits whole on the first node that takes any of it or has to be spread over nodes."""
    nodes = [
        fitting.NodeRoom(
            f"n{i}", {"cpu": data.draw(st.integers(0, 4000)), "memory": 8 * 2**30 * 1000}, {}, ()
        )
        for i in range(data.draw(st.integers(1, 4)))
    ]
    counts = Counter[int]()
    for _ in range(data.draw(st.integers(1, 3))):
        counts[data.draw(st.integers(1, 1500))] += data.draw(st.integers(0, 3))
    demands = [
        demand.PodDemand(demand.PodShape({"cpu": cpu}, {}, (), ()), count) for cpu, count in counts.items()
    ]
    expected = first_fit(
        nodes,
        [(item.shape, item.count) for item in sorted(demands, key=lambda item: -item.shape.requests["cpu"])],
    )
    result = fitting.fit(nodes, demands)
    assert result.ok == (expected is not None)
    if expected is not None:
        assert free_after(result) == expected


@settings(max_examples=150, deadline=None)
@given(rooms=rooms_strategy, demands=demands_strategy)
def test_fit_in_name_order_gives_what_fit_gives(
    rooms: list[fitting.NodeRoom], demands: list[demand.PodDemand]
) -> None:
    """The ledger's path (rooms already in name order, demands prepared once) decides as ``fit`` does."""
    in_order = sorted(rooms, key=lambda room: room.name)
    expected = fitting.fit(rooms, demands)
    result = fitting.fit_in_name_order(in_order, fitting.prepare(demands))
    assert (result.ok, result.shortfall) == (expected.ok, expected.shortfall)
    assert [room.name for room in result.after] == [room.name for room in in_order]
    assert {room.name: room.free for room in result.after} == {
        room.name: room.free for room in expected.after
    }


def test_prepare_drops_empty_shapes_and_knows_the_least_every_pod_asks() -> None:
    small, large = shape(cpu=100, memory=50), shape(cpu=300, gpu=1000, selector={"zone": "a"})
    pods_ = fitting.prepare([pods(2, small), pods(0, shape(cpu=5)), pods(1, large)])
    assert pods_.demands == (pods(2, small), pods(1, large))
    assert dict(pods_.total) == {"cpu": 500, "memory": 100, "nvidia.com/gpu": 1000}
    assert dict(pods_.smallest) == {"cpu": 100}  # memory and gpu: some pod asks none
    assert pods_.constrained
    assert not fitting.prepare([pods(1, small)]).constrained
    assert fitting.prepare([]) == fitting.Pods((), {}, {}, False)


def test_a_node_too_small_for_every_pod_is_passed_by_whatever_the_constraints() -> None:
    rooms = [node("a", cpu=50, memory=10**6), node("b", cpu=1000, memory=10**6, labels={"zone": "a"})]
    result = fitting.fit(rooms, [pods(2, shape(cpu=100, memory=1, selector={"zone": "a"}))])
    assert result.ok
    assert [dict(room.free) for room in result.after] == [
        {"cpu": 50, "memory": 10**6},
        {"cpu": 800, "memory": 10**6 - 2},
    ]


@settings(max_examples=150, deadline=None)
@given(rooms=rooms_strategy.filter(bool), pod=shape_strategy.filter(lambda found: bool(found.requests)))
def test_shortfall_names_the_node_closest_to_holding_a_pod(
    rooms: list[fitting.NodeRoom], pod: demand.PodShape
) -> None:
    """Closest, of the nodes the pod may go to: fewest short resources, then the greatest sum over them of
    free / need, then the name. The shortfall is the one that node alone gives."""
    allowed = [room for room in rooms if fitting.eligible(room, pod)]
    result = fitting.fit(rooms, [pods(1, pod)])
    assume(allowed and not result.ok)

    def exact(room: fitting.NodeRoom) -> tuple[int, Fraction, str]:
        short = [name for name, milli in pod.requests.items() if room.free.get(name, 0) < milli]
        parts = [Fraction(max(0, room.free.get(name, 0)), pod.requests[name]) for name in short]
        closeness = sum(parts, Fraction(0))
        return (len(short), -closeness, room.name)

    closest = min(allowed, key=exact)
    assert result.shortfall == fitting.fit([closest], [pods(1, pod)]).shortfall


@settings(max_examples=150, deadline=None)
@given(rooms=rooms_strategy, demands=demands_strategy)
def test_fit_tries_the_dominant_share_order_then_the_sum_of_shares(
    rooms: list[fitting.NodeRoom], demands: list[demand.PodDemand]
) -> None:
    """``fit`` packs first fit largest first by the dominant share (the largest exact fraction a pod takes
    of the nodes' free room in any resource); when that fails, by the sum of those fractions. Shapes are
    told apart by what they ask, so that no tie between them is broken by anything else."""
    shapes: dict[object, tuple[demand.PodShape, int]] = {}
    for item in demands:
        if item.count:
            key = (
                sorted(item.shape.requests.items()),
                sorted(item.shape.node_selector.items()),
                item.shape.tolerations,
            )
            found, count = shapes.get(repr(key), (item.shape, 0))
            shapes[repr(key)] = (found, count + item.count)
    names = {resource for pod, _ in shapes.values() for resource in pod.requests}
    resources = [name for name in ("cpu", "memory") if name in names] + sorted(names - {"cpu", "memory"})
    totals = {name: sum(max(0, room.free.get(name, 0)) for room in rooms) or 1 for name in resources}

    def amounts(pod: demand.PodShape) -> tuple[int, ...]:
        return tuple(pod.requests.get(name, 0) for name in resources)

    assume(len({amounts(pod) for pod, _ in shapes.values()}) == len(shapes))

    def exact(pod: demand.PodShape) -> list[Fraction]:
        return [Fraction(pod.requests.get(name, 0), totals[name]) for name in resources]

    def dominant(found: tuple[demand.PodShape, int]) -> tuple[object, ...]:
        return (max(exact(found[0]), default=0), amounts(found[0]))

    def summed(found: tuple[demand.PodShape, int]) -> tuple[object, ...]:
        return (sum(exact(found[0]), Fraction(0)), amounts(found[0]))

    result = fitting.fit(rooms, demands)
    for size in (dominant, summed):
        expected = first_fit(rooms, sorted(shapes.values(), key=size, reverse=True))
        if expected is not None:
            assert result.ok
            assert free_after(result) == {
                name: free for name, free in expected.items() if name in {room.name for room in rooms}
            }
            return
