"""What a Markdown text does when GitHub shows it, read by a real CommonMark parser (markdown-it-py, with
GitHub's tables and strikethrough): the links, images, HTML, mentions, references and autolinks it holds
outside code, which none of our outputs may take from data."""

from __future__ import annotations

import re
from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.token import Token

OUR_HTML = re.compile(r"<details><summary>Full manifest diff \(\d+ files?\)</summary>\n|</details>\n?")
"""The only HTML our Markdown writes: diff's folded manifest diff."""
GITHUB_ACTS_ON = re.compile(r"@[A-Za-z0-9]|://|www\.|#\d|\bGH-\d", re.IGNORECASE)
"""What GitHub turns into a mention, a link or a reference in text (never inside code)."""

_PARSER = MarkdownIt("commonmark").enable("table").enable("strikethrough")


def tokens(text: str) -> Iterator[Token]:
    for token in _PARSER.parse(text):
        yield token
        yield from token.children or ()


def active_parts(text: str) -> list[str]:
    """Every link, image, HTML piece (but ours), and text GitHub would act on, as found in ``text``."""
    found: list[str] = []
    for token in tokens(text):
        if token.type in ("link_open", "image"):
            found.append(f"{token.type} {token.attrs.get('href') or token.attrs.get('src')}")
        elif token.type in ("html_inline", "html_block") and not OUR_HTML.fullmatch(token.content):
            found.append(f"{token.type} {token.content!r}")
        elif token.type == "text" and GITHUB_ACTS_ON.search(token.content):
            found.append(f"text {token.content!r}")
    return found


def shown_text(text: str) -> str:
    """The text a reader sees: text and code, without the markup."""
    return "".join(token.content for token in tokens(text) if token.type in ("text", "code_inline"))
