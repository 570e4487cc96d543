"""The fleet's pages as HTML (issue 27), read back with the standard library's HTML parser: every probe from
data is text, never markup, an attribute or a URL; scripts are ours alone; the report references nothing
outside itself and its policy allows exactly its own style and script."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser

from nova_gitops.webui import pages
from tests.webui import fleets


class Elements(HTMLParser):
    """Every start tag with its attributes, the text of each <script> and <style>, and all text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.inline: dict[str, list[str]] = {"script": [], "style": []}
        self.text: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in = tag if tag in self.inline else None

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in is not None:
            self.inline[self._in].append(data)
        else:
            self.text.append(data)


def parsed(html: str) -> Elements:
    elements = Elements()
    elements.feed(html)
    elements.close()
    return elements


def _all_pages(model: pages.FleetModel) -> list[str]:  # type: ignore[name-defined]
    group = model.facts.plan.groups[0].name
    return [
        pages.fleet_page(model, stamp="now", version=1),
        pages.groups_page(model, pages.GroupsQuery(), stamp="now", version=1),
        pages.group_page(model, group, stamp="now", version=1)[1],
        pages.rollout_page(model, stamp="now", version=1),
        pages.reconciles_page(model, stamp="now", version=1),
        pages.report(model, stamp="now"),
    ]


def test_hostile_names_are_text_in_every_page_never_markup_attributes_or_urls() -> None:
    shown = []
    for html in _all_pages(fleets.hostile_model()):
        elements = parsed(html)
        tags = {tag for tag, _ in elements.tags}
        assert "img" not in tags and "iframe" not in tags, "a probe became an element"
        for tag, attributes in elements.tags:
            assert not any(name.startswith("on") for name in attributes), (tag, attributes)
            assert "data-probe" not in attributes, "a probe closed an attribute and opened another"
            for name in ("href", "src", "action"):
                value = attributes.get(name)
                if value is not None:
                    assert value.startswith(("/", "#")), (tag, name, value)
            if tag == "script":
                assert attributes.get("src") in ("/static/ui.js", None)
        scripts = "".join(elements.inline["script"])
        assert "__xss" not in scripts and "alert(" not in scripts
        text = "".join(elements.text)
        assert "<script>window.__xss=1" in text, "the probe is shown, as text"
        assert "\u202e" not in html and "\u200f" not in html
        shown.append(text)
    assert "\\u202egnp.exe\\u200f" in "".join(shown), "a bidi control is shown as its escape"


def test_group_links_quote_the_name_and_find_the_group() -> None:
    model = fleets.hostile_model()
    html = pages.groups_page(model, pages.GroupsQuery(), stamp="now", version=1)
    links = [
        attrs["href"]
        for tag, attrs in parsed(html).tags
        if tag == "a" and "/groups/" in (attrs["href"] or "")
    ]
    assert links and all(re.fullmatch(r"/groups/[A-Za-z0-9%._~-]+", link or "") for link in links)
    name = model.groups[0].name
    code, page = pages.group_page(model, name, stamp="now", version=1)
    assert code == 200 and "Every candidate" in page
    assert pages.group_page(model, "no-such", stamp="now", version=1)[0] == 404


def test_the_report_is_self_contained_and_allows_only_its_own_style_and_script() -> None:
    html = pages.report(fleets.model(), stamp="now")
    elements = parsed(html)
    policy = next(
        attrs["content"] for tag, attrs in elements.tags if tag == "meta" and attrs.get("http-equiv")
    )
    assert policy is not None
    for kind, body in (("style", elements.inline["style"]), ("script", elements.inline["script"])):
        [text] = body
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert f"{kind}-src 'sha256-{digest}'" in policy
    assert "default-src 'none'" in policy
    assert not any(tag in ("link", "img", "iframe") for tag, _ in elements.tags)
    assert not any(attrs.get("src") for _, attrs in elements.tags), "nothing is loaded from outside the file"
    assert "http://" not in html and "https://" not in html


def test_the_groups_table_is_paged_and_searched_on_the_server() -> None:
    model = fleets.model()
    html = pages.groups_page(model, pages.GroupsQuery.of("no-such-thing", "1"), stamp="now", version=1)
    assert "0 groups match" in html
    found = pages.matching(model.groups, model.groups[0].name.upper())
    assert [row.name for row in found] == [model.groups[0].name]
    assert pages.GroupsQuery.of("q" * 1000, "99999999999") == pages.GroupsQuery("q" * pages.MAX_QUERY, 1)
