"""Pure: which lines of two versions of a text are the same line, in time about linear in their length.

``splicing`` aligns a file with ruamel.yaml's dump of it, and that dump with the edited dump. The two sides of
each are mostly the same lines in the same order, with a few places that differ (a re-indented block, a
dropped ``...``, the edit itself). ``difflib.SequenceMatcher`` over whole files costs about the product of
their lengths when lines repeat, as YAML's do (issue 21: a large file took many seconds), so the alignment is
built in steps that each cost about the length of what is left:

1. the common first and last lines are matched as they are;
2. what remains, when small, is matched by ``difflib`` (the result it always gave);
3. when large, lines that occur exactly once on each side anchor the alignment (the longest run of them in
   the same order on both sides, as patience diff takes it), and the stretches between anchors are aligned
   the same way, a bounded number of levels deep; a stretch still large and without anchors stays
   unmatched, so an edit there is refused rather than placed by guess.
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter
from collections.abc import Sequence

SMALL = 40_000
"""Largest product of the two lengths still handed to ``difflib`` (about 200 lines a side)."""
LEVELS = 4
"""How many times a stretch between anchors is anchored again."""

Pairs = list[tuple[int, int]]
Hunk = tuple[int, int, int, int]
"""``a[a_start:a_end]`` is replaced by ``b[b_start:b_end]`` (one side may be empty)."""


def matched(a: Sequence[str], b: Sequence[str]) -> Pairs:
    """Pairs ``(i, j)`` with ``a[i] == b[j]``, increasing in both, of the lines the two sides share."""
    pairs: Pairs = []
    stretches = [(0, len(a), 0, len(b), 0)]
    while stretches:
        a_start, a_end, b_start, b_end, level = stretches.pop()
        while a_start < a_end and b_start < b_end and a[a_start] == b[b_start]:
            pairs.append((a_start, b_start))
            a_start, b_start = a_start + 1, b_start + 1
        while a_start < a_end and b_start < b_end and a[a_end - 1] == b[b_end - 1]:
            a_end, b_end = a_end - 1, b_end - 1
            pairs.append((a_end, b_end))
        if a_start == a_end or b_start == b_end:
            continue
        if (a_end - a_start) * (b_end - b_start) <= SMALL:
            matcher = difflib.SequenceMatcher(None, a[a_start:a_end], b[b_start:b_end], autojunk=False)
            for block in matcher.get_matching_blocks():
                pairs += [(a_start + block.a + step, b_start + block.b + step) for step in range(block.size)]
            continue
        if level >= LEVELS:
            continue
        anchors = _anchors(a, a_start, a_end, b, b_start, b_end)
        previous = (a_start - 1, b_start - 1)
        for anchor in [*anchors, (a_end, b_end)]:
            if anchor[0] > previous[0] + 1 and anchor[1] > previous[1] + 1:
                stretches.append((previous[0] + 1, anchor[0], previous[1] + 1, anchor[1], level + 1))
            if anchor != (a_end, b_end):
                pairs.append(anchor)
            previous = anchor
    pairs.sort()
    return pairs


def _anchors(a: Sequence[str], a_start: int, a_end: int, b: Sequence[str], b_start: int, b_end: int) -> Pairs:
    """The longest run, in order on both sides, of lines that occur once in each stretch."""
    in_a = Counter(a[a_start:a_end])
    in_b = Counter(b[b_start:b_end])
    where_b = {b[j]: j for j in range(b_start, b_end) if in_b[b[j]] == 1 and in_a[b[j]] == 1}
    candidates = [(i, where_b[a[i]]) for i in range(a_start, a_end) if a[i] in where_b and in_a[a[i]] == 1]
    # longest increasing subsequence of the b positions (patience sorting): O(n log n)
    tails: list[int] = []  # tails[k]: the smallest b position ending a run of k + 1
    tail_index: list[int] = []
    before: list[int] = []
    for index, (_, j) in enumerate(candidates):
        k = bisect.bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            tail_index.append(index)
        else:
            tails[k] = j
            tail_index[k] = index
        before.append(tail_index[k - 1] if k else -1)
    run: Pairs = []
    index = tail_index[-1] if tail_index else -1
    while index >= 0:
        run.append(candidates[index])
        index = before[index]
    run.reverse()
    return run


def hunks(pairs: Pairs, a_length: int, b_length: int) -> list[Hunk]:
    """The stretches between ``pairs`` where the sides differ, in order."""
    found: list[Hunk] = []
    previous = (-1, -1)
    for pair in [*pairs, (a_length, b_length)]:
        if pair[0] > previous[0] + 1 or pair[1] > previous[1] + 1:
            found.append((previous[0] + 1, pair[0], previous[1] + 1, pair[1]))
        previous = pair
    return found
