"""Per-node fit: can a cluster's nodes hold every pod of a group, as the Kubernetes scheduler places them?

Comparing cluster totals says yes to three 2-cpu pods on three nodes with 1.5 cpu free each; the pods would
stay Pending. So a group fits only when each pod can be packed onto one node whose labels satisfy the pod's
nodeSelector and required node affinity and whose NoSchedule/NoExecute taints it tolerates. Packing is
first-fit decreasing: pods by decreasing size, each onto the first node by name with room for every resource
it asks. With several resources "decreasing size" has more than one meaning, so a few deterministic orders
are tried in turn (``_size_orders``) and the first that packs wins. Identical pods are placed in bulk per
node, which gives the same packing as one at a time but costs O(shapes × nodes), not O(pods × nodes).

First-fit decreasing is a heuristic: like every bin-packing heuristic it can fail where an exhaustive
search would succeed, and so, rarely, adding a pod can turn a failing set into a packing one (it changes the
order). Adding pods no larger in any resource than every pod already there never does.

When a group does not fit, ``Fit.shortfall`` says why in a user's words: the resource, the largest pod's
need and the best node's free room, or the nodeSelector, affinity or taint that no node satisfies.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from nova_gitops.api import clusters, quantities
from nova_gitops.scheduling import demand

_HARD_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True, slots=True)
class NodeRoom:
    """A node's free room (milli-units; a resource not listed is 0), labels and taints. ``labels_known``
    False: the cluster reports no node labels, and the node is assumed to satisfy every nodeSelector and
    required node affinity (docs/design.md §3 "Capacity and fit")."""

    name: str
    free: Mapping[str, int]
    labels: Mapping[str, str]
    taints: tuple[clusters.Taint, ...]
    labels_known: bool = True


@dataclass(frozen=True, slots=True)
class Fit:
    ok: bool
    after: tuple[NodeRoom, ...]  # nodes' free room after packing, in input order (== input when not ok)
    shortfall: str  # "" when ok


def rooms(nodes: Sequence[clusters.Node]) -> tuple[NodeRoom, ...]:
    """Each node's room from what it has available, in name order."""
    return tuple(
        NodeRoom(node.name, dict(node.available), node.labels, node.taints, node.labels_known)
        for node in sorted(nodes, key=lambda node: node.name)
    )


@dataclass(frozen=True, slots=True)
class Pods:
    """A group's demands prepared once (``prepare``) for fitting on many clusters. ``smallest``: a node with
    less of one of these resources has room for no pod at all, whatever the pods' constraints."""

    demands: tuple[demand.PodDemand, ...]  # the shapes that have pods
    total: Mapping[str, int]  # their summed requests, resources in order of first appearance
    smallest: Mapping[str, int]  # per resource every shape asks for, the least any asks
    constrained: bool  # some shape has a nodeSelector or required affinity (else only taints can refuse)


def prepare(demands: Sequence[demand.PodDemand]) -> Pods:
    pods = tuple(item for item in demands if item.count > 0)
    total: dict[str, int] = {}
    for item in pods:
        for resource, milli in item.shape.requests.items():
            total[resource] = total.get(resource, 0) + milli * item.count
    common = set(total).intersection(*(item.shape.requests for item in pods))
    smallest = {resource: min(item.shape.requests[resource] for item in pods) for resource in sorted(common)}
    constrained = any(item.shape.node_selector or item.shape.required_affinity for item in pods)
    return Pods(pods, total, smallest, constrained)


def fit(rooms: Sequence[NodeRoom], demands: Sequence[demand.PodDemand]) -> Fit:
    """Pack every pod of ``demands`` onto ``rooms`` first-fit decreasing, trying the size orders of
    ``_size_orders`` in turn; deterministic and independent of the order of ``demands`` and ``rooms``."""
    return _fit(rooms, sorted(range(len(rooms)), key=lambda index: rooms[index].name), prepare(demands))


def fit_in_name_order(rooms: Sequence[NodeRoom], pods: Pods) -> Fit:
    """``fit`` for rooms already in name order (as ``rooms()`` gives and ``Fit.after`` keeps them; unsorted
    rooms pack wrongly) and prepared demands: the Ledger's hot path, tens of thousands of fits a plan."""
    return _fit(rooms, range(len(rooms)), pods)


def _fit(rooms: Sequence[NodeRoom], by_name: Sequence[int], pods: Pods) -> Fit:
    if (on_first_node := _all_on_first_node(rooms, by_name, pods)) is not None:
        return on_first_node
    shapes = _merged(pods.demands)
    allowed = {key: [i for i in by_name if eligible(rooms[i], shape)] for key, (shape, _) in shapes.items()}
    first_failure: _Failure | None = None
    tried: set[tuple[str, ...]] = set()
    for order in _size_orders(rooms, shapes):
        if order in tried:
            continue
        tried.add(order)
        packed = _pack(rooms, [(key, *shapes[key]) for key in order], allowed)
        if isinstance(packed, _Failure):
            first_failure = first_failure or packed
            continue
        after = tuple(
            NodeRoom(room.name, packed[index], room.labels, room.taints, room.labels_known)
            for index, room in enumerate(rooms)
        )
        return Fit(True, after, "")
    assert first_failure is not None  # the loop returns on success and there is at least one order
    shape, count, placed, key = first_failure
    return Fit(False, tuple(rooms), _shortfall(rooms, allowed[key], shape, count, placed))


def _all_on_first_node(rooms: Sequence[NodeRoom], by_name: Sequence[int], pods: Pods) -> Fit | None:
    """The packing when the first node (by name) that can take any pod at all can take all of them together.

    First fit skips a node where no pod of any shape fits (or is allowed), so every pod lands on that first
    node whatever the size order: the same result as packing, without sorting or packing — the common case of
    small groups on roomy clusters. None when it does not hold (then the caller packs)."""
    demands, total, smallest = pods.demands, pods.total, pods.smallest
    for index in by_name:
        room = rooms[index]
        free = room.free
        if not within(smallest, free):
            continue  # no pod fits: first fit passes this node by (a full node, on the hot path)
        # On an open node (untainted; no selector or affinity) each pod fits when the total does, asking less
        if room.taints or pods.constrained or not within(total, free):
            takes_one = [eligible(room, item.shape) and within(item.shape.requests, free) for item in demands]
            if demands and not any(takes_one):
                continue  # first fit passes this node by for every pod
            if not all(takes_one) or not within(total, free):
                return None
        after_free = dict(free)
        for resource, amount in total.items():
            after_free[resource] = after_free.get(resource, 0) - amount
        placed = NodeRoom(room.name, after_free, room.labels, room.taints, room.labels_known)
        return Fit(True, (*rooms[:index], placed, *rooms[index + 1 :]), "")
    return None


def within(asked: Mapping[str, int], free: Mapping[str, int]) -> bool:
    """Every amount ``asked`` is at most what is ``free`` of its resource (a resource not listed is 0)."""
    for resource, amount in asked.items():  # noqa: SIM110 -- twice as fast as all(...): runs for every node tried
        if amount > free.get(resource, 0):
            return False
    return True


def eligible(room: NodeRoom, shape: demand.PodShape) -> bool:
    """The node satisfies the pod's nodeSelector and required node affinity and tolerates its hard taints."""
    if not room.taints and not shape.node_selector and not shape.required_affinity:
        return True  # the common case, on the hot path of every fit
    return (
        not room.labels_known or (_matches_selector(room, shape) and _matches_affinity(room, shape))
    ) and not _untolerated_taints(room, shape)


class _Failure(NamedTuple):
    """Where a packing stopped: the shape, its pod count, how many were placed, and the shape's key."""

    shape: demand.PodShape
    pods: int
    placed: int
    key: str


def _pack(
    rooms: Sequence[NodeRoom],
    ordered: Sequence[tuple[str, demand.PodShape, int]],
    candidates: Mapping[str, Sequence[int]],
) -> list[dict[str, int]] | _Failure:
    """First fit of each shape's pods in ``ordered``, in bulk per node (the same packing as one at a time:
    a node that cannot take one more pod of a shape never can later, room only shrinks)."""
    free = [dict(room.free) for room in rooms]
    for key, shape, count in ordered:
        remaining = count
        for index in candidates[key]:
            take = _pods_that_fit(free[index], shape.requests, remaining)
            for resource, milli in shape.requests.items():
                free[index][resource] = free[index].get(resource, 0) - milli * take
            remaining -= take
            if not remaining:
                break
        if remaining:
            return _Failure(shape, count, count - remaining, key)
    return free


def _merged(demands: Sequence[demand.PodDemand]) -> dict[str, tuple[demand.PodShape, int]]:
    """Pod counts by shape (keyed by ``_shape_key``); shapes with no pod dropped."""
    merged: dict[str, tuple[demand.PodShape, int]] = {}
    for item in demands:
        if item.count > 0:
            key = _shape_key(item.shape)
            shape, count = merged.get(key, (item.shape, 0))
            merged[key] = (shape, count + item.count)
    return dict(sorted(merged.items()))


def _shape_key(shape: demand.PodShape) -> str:
    """A text equal for equal shapes whatever the order of their mappings: merges and the last tie-break."""
    return repr(
        (
            sorted(shape.requests.items()),
            sorted(shape.node_selector.items()),
            shape.required_affinity,
            shape.tolerations,
        )
    )


def _size_orders(
    rooms: Sequence[NodeRoom], shapes: Mapping[str, tuple[demand.PodShape, int]]
) -> Iterator[tuple[str, ...]]:
    """Shape keys largest first, by several measures of size, the best packer first.

    Multi-resource first-fit decreasing has no single right notion of "larger"; on random small cases the
    dominant share (the largest fraction a pod takes of the cluster's free room in any resource) misses
    ~40% fewer packings than cpu-first, and trying the sum of shares and each resource first after it
    finds all but ~0.6% of what an exhaustive search finds. Every order ends with the cpu, memory, others
    tuple and the shape's repr, so each is total and deterministic.
    """
    if len(shapes) <= 1:
        yield tuple(shapes)
        return
    names = {resource for shape, _ in shapes.values() for resource in shape.requests}
    resources = [name for name in ("cpu", "memory") if name in names] + sorted(names - {"cpu", "memory"})
    totals = {resource: sum(max(0, room.free.get(resource, 0)) for room in rooms) for resource in resources}

    def amounts(key: str) -> tuple[int, ...]:
        return tuple(shapes[key][0].requests.get(resource, 0) for resource in resources)

    # Shares request / total as integers over one denominator (the lcm of the totals): the same order as
    # exact fractions, at a fraction of their cost.
    scale = math.lcm(*(totals[resource] or 1 for resource in resources))
    weights = [scale // (totals[resource] or 1) for resource in resources]

    def shares(key: str) -> list[int]:
        requests = shapes[key][0].requests
        return [
            requests.get(resource, 0) * weight for resource, weight in zip(resources, weights, strict=True)
        ]

    def largest_first(size: Callable[[str], tuple[object, ...]]) -> tuple[str, ...]:
        return tuple(sorted(shapes, key=lambda key: (*size(key), amounts(key), key), reverse=True))

    yield largest_first(lambda key: (max(shares(key), default=0),))
    yield largest_first(lambda key: (sum(shares(key)),))

    def resource_first(position: int) -> Callable[[str], tuple[object, ...]]:
        return lambda key: (amounts(key)[position],)

    for position in range(len(resources)):
        yield largest_first(resource_first(position))


def _pods_that_fit(free: Mapping[str, int], requests: Mapping[str, int], wanted: int) -> int:
    """How many of ``wanted`` pods of ``requests`` fit in ``free`` (all of them when the pod asks nothing)."""
    counts = [max(0, free.get(resource, 0) // milli) for resource, milli in requests.items() if milli > 0]
    return min([wanted, *counts])


def _matches_selector(room: NodeRoom, shape: demand.PodShape) -> bool:
    return all(room.labels.get(key) == value for key, value in shape.node_selector.items())


def _matches_affinity(room: NodeRoom, shape: demand.PodShape) -> bool:
    if not shape.required_affinity:
        return True
    fields = {"metadata.name": room.name}
    return any(
        (term.match_expressions or term.match_fields)
        and all(_requirement_matches(requirement, room.labels) for requirement in term.match_expressions)
        and all(_requirement_matches(requirement, fields) for requirement in term.match_fields)
        for term in shape.required_affinity
    )


def _requirement_matches(requirement: demand.NodeSelectorRequirement, labels: Mapping[str, str]) -> bool:
    value = labels.get(requirement.key)
    operator = requirement.operator
    if operator == "In":
        return value is not None and value in requirement.values
    if operator == "NotIn":
        return value is None or value not in requirement.values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if value is None:
        return False
    try:
        number, bound = int(value), int(requirement.values[0])
    except (ValueError, IndexError):
        return False
    return number > bound if operator == "Gt" else number < bound


def _untolerated_taints(room: NodeRoom, shape: demand.PodShape) -> list[clusters.Taint]:
    return [
        taint
        for taint in room.taints
        if taint.effect in _HARD_EFFECTS
        and not any(_tolerates(toleration, taint) for toleration in shape.tolerations)
    ]


def _tolerates(toleration: demand.Toleration, taint: clusters.Taint) -> bool:
    """Kubernetes ``Toleration.ToleratesTaint``: empty effect matches all effects, empty key with Exists
    matches every key."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    return toleration.operator == "Exists" or toleration.value == taint.value


def _shortfall(
    rooms: Sequence[NodeRoom], candidates: Sequence[int], shape: demand.PodShape, count: int, placed: int
) -> str:
    if not candidates:
        return _why_no_node(rooms, shape)
    scale = math.lcm(*shape.requests.values())  # free / need for every resource, over one denominator
    weights = {resource: scale // milli for resource, milli in shape.requests.items()}
    best = min((rooms[index] for index in candidates), key=lambda room: _closeness(room, shape, weights))
    short = _short_resources(best, shape)
    if short:
        needs = " and ".join(_amount(resource, shape.requests[resource]) for resource in short)
        if len(short) == 1:
            has = quantities.in_words(short[0], max(0, best.free.get(short[0], 0)))
        else:
            has = " and ".join(_amount(resource, max(0, best.free.get(resource, 0))) for resource in short)
        return f"needs {needs} on one node, best node has {has}"
    size = ", ".join(_amount(resource, milli) for resource, milli in shape.requests.items())
    pods = "pod" if count == 1 else "pods"
    return f"needs {count} {pods} of {size}, room for {placed}"


def _short_resources(room: NodeRoom, shape: demand.PodShape) -> list[str]:
    return [resource for resource, milli in shape.requests.items() if room.free.get(resource, 0) < milli]


def _closeness(room: NodeRoom, shape: demand.PodShape, weights: Mapping[str, int]) -> tuple[int, int, str]:
    """Sort key of the best node to name in a shortfall: the fewest short resources, then the closest to
    holding one pod — the most of the sum over short resources of free / need — then the name. The sum is
    kept in integers over the least common multiple of the pod's requests (``weights`` = lcm / need): the
    same order as exact fractions, without their cost (tight fleets explain tens of thousands of fits)."""
    short = _short_resources(room, shape)
    score = sum(max(0, room.free.get(resource, 0)) * weights[resource] for resource in short)
    return (len(short), -score, room.name)


def _why_no_node(rooms: Sequence[NodeRoom], shape: demand.PodShape) -> str:
    if not rooms:
        return "the cluster reports no nodes"
    selected = [room for room in rooms if _matches_selector(room, shape)]
    selector = ",".join(f"{key}={value}" for key, value in shape.node_selector.items())
    if not selected:
        return f"no node matches nodeSelector {selector}"
    qualifier = f" matching nodeSelector {selector}" if selector else ""
    affine = [room for room in selected if _matches_affinity(room, shape)]
    if not affine:
        return f"no node{qualifier} matches the required node affinity {_format_affinity(shape)}"
    if shape.required_affinity:
        qualifier += " and" if qualifier else ""
        qualifier += " matching the required node affinity"
    taints = sorted({_format_taint(taint) for room in affine for taint in _untolerated_taints(room, shape)})
    noun = "taint" if len(taints) == 1 else "any of the taints"
    return f"no node{qualifier} tolerates {noun} {', '.join(taints)}"


def _format_affinity(shape: demand.PodShape) -> str:
    terms = []
    for term in shape.required_affinity:
        parts = [_format_requirement(r) for r in (*term.match_expressions, *term.match_fields)]
        terms.append(", ".join(parts) if parts else "(empty term)")
    return " or ".join(f"({term})" if len(terms) > 1 else term for term in terms)


def _format_requirement(requirement: demand.NodeSelectorRequirement) -> str:
    key, operator, values = requirement.key, requirement.operator, requirement.values
    if operator == "Exists":
        return key
    if operator == "DoesNotExist":
        return f"!{key}"
    if operator in ("Gt", "Lt"):
        return f"{key} {'>' if operator == 'Gt' else '<'} {values[0]}"
    return f"{key} {operator.lower()} ({','.join(values)})"


def _format_taint(taint: clusters.Taint) -> str:
    return f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"


def _amount(resource: str, milli: int) -> str:
    return f"{quantities.in_words(resource, milli)} {resource}"
