"""Text that came from data, made safe to show: on a terminal, in a CI log, in a pull-request comment.

Names, reasons and messages reach people from places nobody here controls: a source file, an agent's status
report, a Kubernetes condition message an operator wrote. Printed raw, an ESC sequence in one of them clears a
reviewer's screen, sets the terminal's title, plants an OSC 8 hyperlink or writes the clipboard (OSC 52); a
U+202E bidi override shows ``wlc-1`` where the bytes say something else; in a GitHub comment ``@team`` pings
people, ``![](https://…)`` is a tracking pixel and ``[ok](https://…)`` a link that says what it is not.

So every character that moves the cursor, changes the terminal or the direction of text, or cannot be seen —
controls (C0 but the newline and tab where a format has them, DEL, C1), Unicode format characters (bidi
controls and isolates, zero-width spaces and joiners, the BOM, tag characters), line and paragraph separators,
lone surrogates and the invisible fillers — is shown as its escape ``\\uXXXX`` instead (``\\u001b``,
``\\u202e``; a character beyond the BMP as its two surrogate escapes, as JSON writes it). Shown, not dropped:
the reviewer sees that something is off. The escape is JSON's own, so ``visible`` leaves a JSON text valid and
meaning the same (controls can only sit inside its strings, where ``\\uXXXX`` is a legal escape); the CLI
relies on that to guard everything it writes (``nova_gitops.cli.guarding``), logs included.

Markdown (``md_code``, ``md_text``) also neutralises what GitHub would act on: mentions, issue references,
links and autolinks, images, HTML, emphasis and table syntax that come from data. Identifiers go in code
spans (fenced with more backticks than they hold, so nothing closes them early); prose is escaped where
Markdown would read it, and each word that GitHub would turn into a mention, reference or link goes in a
code span of its own (GitHub neither mentions nor links inside code, as Dependabot relies on).

Pure: ``nova_agent`` may use it too (it shares ``nova_gitops.api``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

_HIDDEN_RANGES: Final = (
    (0x0000, 0x001F),  # C0 controls
    (0x007F, 0x009F),  # DEL and C1 controls (0x9B is CSI, 0x9D OSC on terminals that read 8-bit controls)
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x0600, 0x0605),  # Arabic number signs (format characters)
    (0x061C, 0x061C),  # Arabic letter mark (bidi)
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),  # Hangul choseong and jungseong fillers: blank
    (0x17B4, 0x17B5),  # Khmer inherent vowels: blank
    (0x180B, 0x180F),  # Mongolian variation selectors and vowel separator
    (0x200B, 0x200F),  # zero-width space, non-joiner, joiner; left-to-right and right-to-left marks
    (0x2028, 0x202E),  # line and paragraph separators; bidi embeddings and overrides (U+202E)
    (0x2060, 0x2064),  # word joiner, invisible operators
    (0x2066, 0x206F),  # bidi isolates; deprecated format characters
    (0x3164, 0x3164),  # Hangul filler
    (0xD800, 0xDFFF),  # surrogates (lone ones, from undecodable bytes)
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFEFF, 0xFEFF),  # zero-width no-break space (BOM)
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF9, 0xFFFB),  # interlinear annotation
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),  # Egyptian hieroglyph format controls
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol format controls
    (0xE0001, 0xE0001),  # language tag
    (0xE0020, 0xE007F),  # tag characters: invisible ASCII ("ASCII smuggling")
    (0xE0100, 0xE01EF),  # variation selectors supplement
)
"""Every character ``visible`` escapes: Unicode's Cc, Cf, Cs, Zl and Zp categories (a test checks this table
covers them for the running Python's Unicode version) and the invisible fillers and variation selectors."""


def _char_class(ranges: tuple[tuple[int, int], ...], but: str = "") -> str:
    parts = []
    for start, end in ranges:
        for low, high in _without(start, end, {ord(char) for char in but}):
            parts.append(re.escape(chr(low)) + ("-" + re.escape(chr(high)) if high > low else ""))
    return "[" + "".join(parts) + "]"


def _without(start: int, end: int, holes: set[int]) -> list[tuple[int, int]]:
    pieces: list[tuple[int, int]] = []
    low = start
    for hole in sorted(point for point in holes if start <= point <= end):
        if hole > low:
            pieces.append((low, hole - 1))
        low = hole + 1
    if low <= end:
        pieces.append((low, end))
    return pieces


_PATTERNS: dict[tuple[str, bool], re.Pattern[str]] = {}


def _pattern(keep: str, *, ascii_only: bool = False) -> re.Pattern[str]:
    """The hidden characters but those in ``keep``; with the newline kept, a carriage return right before
    one is kept too (a CRLF line end moves nothing on a terminal; a lone CR returns over the line).
    ``ascii_only``: the same for a text known to be ASCII (C0 and DEL), a set re tests much faster."""
    pattern = _PATTERNS.get((keep, ascii_only))
    if pattern is None:
        ranges = _HIDDEN_RANGES[:2] if ascii_only else _HIDDEN_RANGES
        hidden = _char_class(ranges, but=keep + ("\r" if "\n" in keep else ""))
        pattern = re.compile(r"\r(?!\n)|" + hidden if "\n" in keep else hidden)
        _PATTERNS[(keep, ascii_only)] = pattern
    return pattern


def escape(char: str) -> str:
    """``\\uXXXX`` for one character (two surrogate escapes beyond the BMP, as JSON writes them)."""
    point = ord(char)
    if point <= 0xFFFF:
        return f"\\u{point:04x}"
    point -= 0x10000
    return f"\\u{0xD800 + (point >> 10):04x}\\u{0xDC00 + (point & 0x3FF):04x}"


def yaml_escape(char: str) -> str:
    """``\\uXXXX``, or ``\\UXXXXXXXX`` beyond the BMP: YAML's escapes in a double-quoted string."""
    point = ord(char)
    return f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}"


TERMINAL_KEEPS: Final = "\n\t"
"""What text for a terminal keeps as it is: its lines and tabs (and CRLF line ends)."""


def visible(text: str, *, keep: str = TERMINAL_KEEPS, escape: Callable[[str], str] = escape) -> str:
    """``text`` with every hidden character (see the module docstring) but those in ``keep`` shown as its
    ``\\uXXXX`` escape (or as ``escape`` writes it). The same object when there is none (the common case
    costs one scan)."""
    pattern = _pattern(keep, ascii_only=text.isascii())
    if not pattern.search(text):
        return text
    return pattern.sub(lambda match: escape(match.group()), text)


def one_line(text: str) -> str:
    """``visible`` keeping nothing, the newline included: a field shown inside a line of our own (a name, a
    reason) cannot start a line that looks like ours."""
    return visible(text, keep="")


def has_hidden(text: str, *, keep: str = TERMINAL_KEEPS) -> bool:
    """Whether ``visible`` would change ``text``."""
    return _pattern(keep, ascii_only=text.isascii()).search(text) is not None


# Markdown (CommonMark and GitHub's extensions)

_SPACES: Final = re.compile(r"[ \t\n]+")
_BACKTICKS: Final = re.compile(r"`+")
_HAZARD: Final = re.compile(r"@|://|www\.|#\d|(?:mailto|xmpp|javascript|data):|GH-\d", re.IGNORECASE)
"""What GitHub acts on in a word: a mention (``@user``, ``@org/team``) or an e-mail address, a URL or
``www.`` autolink, an issue reference (``#12``, ``owner/repo#12``, ``GH-12``). The whole word (up to the
spaces around it) goes in a code span."""
_MARKDOWN_SPECIAL: Final = re.compile(r"[\\`*_\[\]~|$&<>]")
_ENTITIES: Final = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_BLOCK_START: Final = re.compile(r"[#+=-]|\d{1,9}[.)](?= |\Z)")
"""What, at the start of a line's content, would make a heading, a list or a setext underline."""


def md_code(value: str, *, table: bool = False) -> str:
    """``value`` as one inline code span that nothing in it can end or escape: on one line (collapsed
    spaces, every hidden character and newline escaped), fenced with one backtick more than its longest
    run, padded when it starts or ends with a backtick. ``table``: it sits in a table cell, where GitHub
    splits cells at any ``|`` not escaped, code spans included."""
    text = one_line(_SPACES.sub(" ", value).strip(" "))
    if not text:
        return "` `"
    if table:
        text = text.replace("|", "\\|")
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_text(value: str, *, table: bool = False) -> str:
    """``value`` as Markdown prose that says exactly that text, on one line: spaces collapsed, hidden
    characters escaped, every character Markdown or GitHub gives a meaning (emphasis, code, links and
    images, HTML and entities, math, strikethrough, table pipes) escaped, a line start that would make a
    block escaped, and each word GitHub would make a mention, reference or link put in a code span."""
    text = one_line(_SPACES.sub(" ", value).strip(" "))
    out: list[str] = []
    end = 0
    for start, stop in _hazard_words(text):
        out.append(_escaped_prose(text[end:start]))
        out.append(md_code(text[start:stop], table=table))
        end = stop
    out.append(_escaped_prose(text[end:]))
    shown = "".join(out)
    marker = _BLOCK_START.match(shown)
    if marker is not None:  # escape the marker: its last character (`#`, `-`, or the `.` after digits)
        shown = f"{shown[: marker.end() - 1]}\\{shown[marker.end() - 1 :]}"
    return shown


def _hazard_words(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each space-separated word of ``text`` holding a ``_HAZARD``, in order."""
    words: list[tuple[int, int]] = []
    for match in _HAZARD.finditer(text):
        if words and match.start() < words[-1][1]:
            continue  # in the word already found
        start = text.rfind(" ", 0, match.start()) + 1
        stop = text.find(" ", match.end())
        words.append((start, len(text) if stop < 0 else stop))
    return words


def _escaped_prose(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(lambda match: _ENTITIES.get(match.group()) or "\\" + match.group(), text)
