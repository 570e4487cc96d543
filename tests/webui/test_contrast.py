"""The web view's colours meet WCAG 2.1 AA (issue 27): every text colour on the backgrounds it is drawn on
has a contrast ratio of at least 4.5:1 (1.4.3), and the bars' colours and the focus outline at least 3:1
against what surrounds them (1.4.11). The colours are read from the stylesheet the pages use."""

from __future__ import annotations

import re

import pytest

from nova_gitops.webui import pages

TEXT_PAIRS = (
    ("text", "page"),
    ("text", "panel"),
    ("muted", "page"),
    ("muted", "panel"),
    ("link", "page"),
    ("link", "panel"),
    ("bad-text", "page"),
    ("ok-text", "ok-bg"),
    ("bad-text", "bad-bg"),
    ("warn-text", "warn-bg"),
    ("info-text", "info-bg"),
)
GRAPHIC_PAIRS = (
    ("ours", "page"),
    ("ours", "free"),
    ("others", "page"),
    ("others", "free"),
    ("over", "page"),
    ("over", "free"),
    ("focus", "page"),
    ("focus", "panel"),
)


def colours() -> dict[str, str]:
    css = pages.static("ui.css").decode()
    return dict(re.findall(r"--([a-z-]+):\s*(#[0-9a-fA-F]{6});", css))


def luminance(colour: str) -> float:
    channels = [int(colour[index : index + 2], 16) / 255 for index in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(first: str, second: str) -> float:
    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_the_formula_is_wcags() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


@pytest.mark.parametrize(("text", "background"), TEXT_PAIRS)
def test_text_has_at_least_4_5_to_1(text: str, background: str) -> None:
    found = colours()
    assert contrast(found[text], found[background]) >= 4.5


@pytest.mark.parametrize(("graphic", "background"), GRAPHIC_PAIRS)
def test_bars_and_the_focus_outline_have_at_least_3_to_1(graphic: str, background: str) -> None:
    found = colours()
    assert contrast(found[graphic], found[background]) >= 3.0
