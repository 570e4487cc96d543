"""A new version of a big blob stored as a git delta against its old version, written without git's search.

Why: placement.yaml is one file for the whole fleet (~5 MB per 100 clusters) and changes with every
decision. Pushing it, ``git pack-objects`` searches a delta of the new version against the old one the
remote has: an index of the old bytes, then a scan of the new ones, ~0.1 s at 100 clusters and ~0.75 s at
500 — the largest part of a one-change push. Yet the render knows which parts of the new file are the old
file's (``increments.placement_segments``: the group entries both renders hold). So the new version is
written here as that delta — copies of the old file's ranges and the new text — in a one-object thin pack
that ``git index-pack --fix-thin`` completes with its base; pack-objects then reuses the delta (its base
is an object the remote has) instead of searching one.

Nothing rests on the delta being right: ``index-pack`` stores the object under the id of the bytes it
resolves to, so a wrong delta stores some other object, the expected id is missing, and the caller writes
the file in full as before (``RenderedRepo.store_delta`` says which).

Formats (git's ``Documentation/gitformat-pack.txt``): a delta is the base's size and the result's size as
little-endian base-128 numbers, then instructions — a copy (high bit set; bits 0-3 say which offset bytes
follow, bits 4-6 which size bytes, a size of 0 meaning 0x10000) or an insert of 1-127 literal bytes
(the instruction byte is their count). A pack is ``PACK``, version 2 and the object count (big-endian), each
object as a header (type and size, base-128) and, for a ``REF_DELTA`` (type 7), the base's id and the
zlib-compressed delta; then the SHA-1 of all of it.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable, Sequence

Segment = tuple[int, int] | bytes
"""A range of the old blob to copy, as (offset, length), or bytes to insert."""

COPY_LIMIT = 0xFFFFFF  # the most one copy instruction names with three size bytes (0x10000 is written as 0)
INSERT_LIMIT = 0x7F
REF_DELTA = 7


def _size(value: int) -> bytes:
    """A delta header size: little-endian base-128, high bit set on all but the last byte."""
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _copy(offset: int, length: int) -> bytes:
    """One copy instruction: only the non-zero bytes of offset and size are written."""
    command, arguments = 0x80, bytearray()
    for index in range(4):
        byte = (offset >> (8 * index)) & 0xFF
        if byte:
            command |= 1 << index
            arguments.append(byte)
    size = 0 if length == 0x10000 else length
    for index in range(3):
        byte = (size >> (8 * index)) & 0xFF
        if byte:
            command |= 0x10 << index
            arguments.append(byte)
    return bytes([command]) + bytes(arguments)


def merged(segments: Iterable[Segment]) -> list[Segment]:
    """The segments with adjacent copies of adjacent ranges joined and adjacent inserts joined, empty ones
    dropped: an unchanged run of group entries becomes one copy."""
    out: list[Segment] = []
    inserts: list[bytes] = []  # a run of inserts, joined once when it ends
    for segment in segments:
        if isinstance(segment, bytes):
            inserts.append(segment)
            continue
        offset, length = segment
        if length <= 0:
            continue
        if inserts and (joined := b"".join(inserts)):
            out.append(joined)
        inserts = []
        if out and not isinstance(out[-1], bytes) and out[-1][0] + out[-1][1] == offset:
            out[-1] = (out[-1][0], out[-1][1] + length)
        else:
            out.append(segment)
    if inserts and (joined := b"".join(inserts)):
        out.append(joined)
    return out


def delta(base_size: int, segments: Sequence[Segment]) -> bytes:
    """The git delta that turns a blob of ``base_size`` bytes into the concatenation of ``segments``;
    ValueError when a copy reaches outside the base."""
    instructions: list[bytes] = []
    result_size = 0
    for segment in merged(segments):
        if isinstance(segment, bytes):
            result_size += len(segment)
            for start in range(0, len(segment), INSERT_LIMIT):
                piece = segment[start : start + INSERT_LIMIT]
                instructions.append(bytes([len(piece)]) + piece)
            continue
        offset, length = segment
        if offset < 0 or offset + length > base_size or offset > 0xFFFFFFFF:
            raise ValueError(f"copy of {length} bytes at {offset} is outside a base of {base_size} bytes")
        result_size += length
        while length:
            step = min(length, COPY_LIMIT)
            instructions.append(_copy(offset, step))
            offset, length = offset + step, length - step
    return b"".join([_size(base_size), _size(result_size), *instructions])


def thin_pack(base_id: str, delta_bytes: bytes) -> bytes:
    """A pack of one object: ``delta_bytes`` as a REF_DELTA against the object ``base_id`` (not in the pack:
    a thin pack, which ``index-pack --fix-thin`` completes)."""
    size = len(delta_bytes)
    header = bytearray([(REF_DELTA << 4) | (size & 0x0F)])
    size >>= 4
    while size:
        header[-1] |= 0x80
        header.append(size & 0x7F)
        size >>= 7
    body = b"".join(
        [
            b"PACK",
            (2).to_bytes(4, "big"),
            (1).to_bytes(4, "big"),
            bytes(header),
            bytes.fromhex(base_id),
            zlib.compress(delta_bytes, 1),
        ]
    )
    return body + hashlib.sha1(body, usedforsecurity=False).digest()
