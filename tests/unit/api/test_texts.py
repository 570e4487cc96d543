"""Data made safe to show (``api.texts``, issue 21 item 8).

Behaviours covered:
- the hidden characters are every Cc, Cf, Cs, Zl and Zp character of the running Python's Unicode (and the
  invisible fillers): a new Unicode version that adds one fails here;
- ``visible`` leaves no hidden character but those kept (newline and tab for a terminal; a CRLF line end
  with the newline, never a lone CR), changes nothing else, and shows each as its ``\\uXXXX`` escape;
- the escape is JSON's own: a JSON text made visible reads back to the very same value; YAML's escape
  form likewise inside a double-quoted scalar;
- ``md_code`` is one code span whose content is the data (on one line), whatever backticks, pipes or
  Markdown it holds, in a paragraph and in a table cell;
- ``md_text`` shows the data's text and makes no link, image, HTML, mention, reference or autolink of it,
  and no block (heading, list) at the start of a list item.
"""

from __future__ import annotations

import json
import re
import unicodedata

import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nova_gitops.api import texts
from tests.unit.rendering import markdowncheck

HIDDEN_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}
ATTACKS = [
    "\x1b[2J\x1b[H",
    "\x1b]0;pwned\x07",
    "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
    "\x1b]52;c;ZWNobyBwd25lZA==\x07",
    "\x9b31m\x9d0;t\x9c",
    "wlc-1\u202e2-clw",
    "a\u2066b\u2069\u200e\u200f\u061c\u200b\ufeff",
    "\U000e0041\U000e0042",
    "line\rover",
    "@alice @org/team ![px](https://t.example/p.png) [ok](https://evil.example) <img src=x> <b>b</b>",
    "www.evil.example http://e.example mailto:a@b.c owner/repo#12 #3 GH-4 a@b.example",
    "# heading",
    "- item",
    "1. item",
    "`code` ``two`` ```` | pipe \\| back\\slash *em* _em_ ~~s~~ $x$ &amp; &#64;",
]
attacks = st.sampled_from(ATTACKS)
mixed = st.lists(st.one_of(attacks, st.text(max_size=3))).map("".join)
text_with_attacks = st.one_of(st.text(), attacks, mixed)


def test_the_hidden_characters_cover_unicodes_control_and_format_categories() -> None:
    missing = [
        f"U+{point:04X} {unicodedata.category(chr(point))}"
        for point in range(0x110000)
        if unicodedata.category(chr(point)) in HIDDEN_CATEGORIES and not texts.has_hidden(chr(point), keep="")
    ]
    assert missing == [], f"add them to api.texts._HIDDEN_RANGES (Unicode {unicodedata.unidata_version})"


@settings(max_examples=300)
@given(text_with_attacks)
@example("a\r\nb\rc\n\td")
def test_visible_leaves_nothing_hidden_but_what_it_keeps(text: str) -> None:
    for keep in ("", "\n", "\n\t"):
        shown = texts.visible(text, keep=keep)
        left = {char for char in shown.replace("\r\n", "\n") if texts.has_hidden(char, keep="")}
        assert left <= set(keep), (text, shown)
        assert "\r" not in shown.replace("\r\n", "") and ("\r\n" not in shown or "\n" in keep)
    if not texts.has_hidden(text):
        assert texts.visible(text) is text


def test_each_hidden_character_shows_as_its_escape() -> None:
    assert texts.visible("a\x1b[2Jb\u202ec\x85d\n\te") == "a\\u001b[2Jb\\u202ec\\u0085d\n\te"
    assert texts.one_line("x\ny\tz\r\n") == "x\\u000ay\\u0009z\\u000d\\u000a"
    assert texts.visible("\U000e0041") == "\\udb40\\udc41"
    assert texts.visible("a\r\nb\rc") == "a\r\nb\\u000dc"


@settings(max_examples=300)
@given(
    st.recursive(text_with_attacks, lambda inner: st.lists(inner) | st.dictionaries(text_with_attacks, inner))
)
def test_json_made_visible_reads_back_the_same(value: object) -> None:
    for ascii_only in (False, True):
        shown = texts.visible(json.dumps(value, ensure_ascii=ascii_only), keep="\n")
        assert not texts.has_hidden(shown, keep="\n")
        assert json.loads(shown) == value


@settings(max_examples=200)
@given(text_with_attacks.filter(lambda text: not re.search("[\ud800-\udfff]", text)))
def test_a_yaml_escape_in_a_double_quoted_scalar_reads_back_the_same(text: str) -> None:
    quoted = yaml.dump(text, Dumper=yaml.CSafeDumper, default_style='"', allow_unicode=True)
    shown = texts.visible(quoted, keep="\n", escape=texts.yaml_escape)
    assert not texts.has_hidden(shown, keep="\n")
    assert yaml.safe_load(shown) == text


def spaced(text: str) -> str:
    """``text`` as the Markdown helpers show it: runs of spaces, tabs and newlines as one space."""
    return texts.one_line(re.sub(r"[ \t\n]+", " ", text).strip(" "))


@settings(max_examples=300)
@given(text_with_attacks)
def test_a_code_span_holds_exactly_the_data(text: str) -> None:
    expected = spaced(text) or " "
    paragraph = f"before {texts.md_code(text)} after"
    [inline] = [token for token in markdowncheck.tokens(paragraph) if token.type == "inline"]
    codes = [child for child in inline.children or () if child.type == "code_inline"]
    assert [code.content for code in codes] == [expected], paragraph
    row = f"| a | {texts.md_code(text, table=True)} |\n| --- | --- |\n| x | y |\n"
    cells = [token for token in markdowncheck.tokens(row) if token.type == "th_open"]
    assert len(cells) == 2, row
    head_codes = [t.content for t in markdowncheck.tokens(row) if t.type == "code_inline"]
    assert head_codes == [expected], row


@settings(max_examples=300)
@given(text_with_attacks)
def test_prose_says_the_data_and_does_nothing_of_it(text: str) -> None:
    for markdown in (f"- :warning: {texts.md_text(text)}\n", f"- {texts.md_text(text)}\n"):
        assert not texts.has_hidden(markdown)
        assert markdowncheck.active_parts(markdown) == [], markdown
        # markdown-it-py strips a paragraph's Unicode whitespace (a no-break space, say) where CommonMark
        # and GitHub strip only spaces and tabs: compare what both show.
        shown = markdowncheck.shown_text(markdown).removeprefix(":warning:")
        assert shown.strip() == spaced(text).strip()
        if not spaced(text):
            continue
        blocks = [token.type for token in markdowncheck.tokens(markdown) if token.nesting == 1]
        assert blocks == ["bullet_list_open", "list_item_open", "paragraph_open"], markdown
    row = f"| a | {texts.md_text(text, table=True)} |\n| --- | --- |\n"
    assert len([token for token in markdowncheck.tokens(row) if token.type == "th_open"]) == 2, row
    assert markdowncheck.active_parts(row) == [], row
