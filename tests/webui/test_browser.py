"""The web view in a real browser (issue 27): headless Chromium from Debian, driven by selenium, against a
running controller on the bundled demo's inputs (tests/webui/demo.py), and against the report file.

Behaviours covered:
- the pages show the fleet: both clusters with their bars, the groups, a group's verdicts, the waves, the
  reconciles; screenshots of each are saved to .ci-artifacts/ui/ (CI keeps it; docs/ui.md shows them);
- the clusters filter hides what does not match and counts what is shown; a column sorts both ways;
- a reconcile shows up without a reload: a cluster fills up, the controller moves its group, and the open
  page (its script's state intact, so it was not reloaded) shows the new version and the move;
- hostile names (``<script>``, ``"onmouseover=``, ``javascript:`` URLs, RTL controls) in every place a page
  shows data run nothing — no dialog, no probe's global set, no element or handler made of them — in the
  served pages and in the report file, hovered and clicked;
- the keyboard reaches everything: the skip link first, then the filter and the sort buttons, which work
  with Enter.

Skipped, with the reason, where /usr/bin/chromium or /usr/bin/chromedriver is absent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nova_gitops.controller import uiserving
from nova_gitops.controller.settings import Address
from nova_gitops.controller.uistate import Snapshot
from nova_gitops.webui import pages
from tests.controller.helpers import cluster_report
from tests.e2e import rollouts
from tests.webui import browser, demo, fleets

pytestmark = pytest.mark.skipif(browser.missing() is not None, reason=browser.missing() or "")

WAIT = 30.0


@pytest.fixture(scope="module")
def chrome() -> Iterator[Any]:
    with browser.chromium() as driver:
        yield driver


@pytest.fixture
def running(tmp_path: Path) -> Iterator[demo.Running]:
    with demo.running(tmp_path) as controller:
        yield controller


def _wait(driver: Any, condition: Any) -> Any:
    """Wait until ``condition``; an element the live update replaced between finding it and reading it
    (stale) is looked for again, as a missing one is."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    ignored = (NoSuchElementException, StaleElementReferenceException)
    return WebDriverWait(driver, WAIT, ignored_exceptions=ignored).until(condition)


def _rows(driver: Any, table: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return [row for row in driver.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr") if row.is_displayed()]


def _open(driver: Any, url: str) -> None:
    driver.get(url)
    _wait(driver, lambda d: d.execute_script("return document.readyState") == "complete")


def test_the_pages_show_the_demo_fleet_and_are_screenshot(chrome: Any, running: demo.Running) -> None:
    from selenium.webdriver.common.by import By

    shots = browser.screenshots()
    _open(chrome, running.url + "/")
    names = [row.find_element(By.CSS_SELECTOR, "td").text.split("\n")[0] for row in _rows(chrome, "clusters")]
    assert names == ["wlc-1", "wlc-2"]
    assert len(chrome.find_elements(By.CSS_SELECTOR, "#clusters svg rect.ours")) >= 2
    chrome.save_screenshot(str(shots / "fleet.png"))
    _open(chrome, running.url + "/groups")
    assert len(_rows(chrome, "groups")) == 3
    chrome.save_screenshot(str(shots / "groups.png"))
    link = next(a for a in chrome.find_elements(By.CSS_SELECTOR, "#groups a") if a.text.startswith("shop"))
    link.click()
    _wait(chrome, lambda d: "Every candidate" in d.page_source)
    verdicts = chrome.find_elements(By.CSS_SELECTOR, "table.verdicts tbody tr")
    assert {row.find_element(By.CSS_SELECTOR, "td").text.split(" ")[0] for row in verdicts} == {
        "wlc-1",
        "wlc-2",
    }
    chrome.save_screenshot(str(shots / "group.png"))
    _open(chrome, running.url + "/rollout")
    assert "nova-gitops rollout abort --repo" in chrome.page_source
    chrome.save_screenshot(str(shots / "rollout.png"))
    _open(chrome, running.url + "/reconciles")
    assert "published" in chrome.find_element(By.ID, "reconciles").text
    chrome.save_screenshot(str(shots / "reconciles.png"))


def test_the_filter_hides_what_does_not_match_and_columns_sort(chrome: Any, running: demo.Running) -> None:
    from selenium.webdriver.common.by import By

    _open(chrome, running.url + "/")
    box = chrome.find_element(By.ID, "clusters-filter")
    box.send_keys("wlc-2")
    _wait(chrome, lambda d: len(_rows(d, "clusters")) == 1)
    assert _rows(chrome, "clusters")[0].text.startswith("wlc-2")
    assert chrome.find_element(By.CSS_SELECTOR, '[data-count-for="clusters"]').text == "1 of 2 shown"
    box.clear()
    box.send_keys(" ")
    _wait(chrome, lambda d: len(_rows(d, "clusters")) == 2)
    header = chrome.find_element(By.CSS_SELECTOR, "#clusters thead th:first-child button")
    header.click()
    header.click()
    assert [row.text.split("\n")[0] for row in _rows(chrome, "clusters")] == ["wlc-2", "wlc-1"]
    th = chrome.find_element(By.CSS_SELECTOR, "#clusters thead th:first-child")
    assert th.get_attribute("aria-sort") == "descending"


def test_a_move_shows_up_without_a_reload(chrome: Any, running: demo.Running) -> None:
    from selenium.webdriver.common.by import By

    _open(chrome, running.url + "/")
    chrome.execute_script("window.__notReloaded = true;")
    version = chrome.find_element(By.TAG_NAME, "body").get_attribute("data-version")
    before = {row.text.split("\n")[0]: row for row in _rows(chrome, "clusters")}
    assert before
    # wlc-2 fills up: its agent reports no cpu left and asks to move its shop colour (step 4 of the demo)
    shop_on_wlc2 = next(
        group.name
        for group in running.view.snapshot().model.facts.plan.groups  # type: ignore[union-attr]
        if group.clusters == ("wlc-2",) and group.name.startswith("shop")
    )
    request = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "namespace": "shop",
        "name": "green-web",
        "group": shop_on_wlc2,
        "reason": "deployment shop/green-web does not have minimum replicas available",
        "since": "2026-01-01T00:00:00Z",
    }
    running.fleet.report(
        cluster_report("wlc-1", cpu="4", nodes=2, labels=dict(rollouts.CANARY_LABELS)),
        cluster_report("wlc-2", cpu="4", available="100m", nodes=2, requests=[request]),
    )
    new = running.reconcile()
    _wait(chrome, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-version") == str(new))
    assert new != int(version or 0)
    assert chrome.execute_script("return window.__notReloaded === true;"), "the page was reloaded"
    groups = {
        row.find_element(By.CSS_SELECTOR, "td:nth-child(4)").text
        for row in _rows(chrome, "clusters")
        if row.text.startswith("wlc-1")
    }
    assert groups == {"3"}, "every group is on wlc-1 after the move"
    browser.screenshots().joinpath("fleet-after-move.png").write_bytes(chrome.get_screenshot_as_png())


class _Hostile:
    """A view whose every name is a probe (our own port's shape: ``version`` and ``snapshot``)."""

    version = 1
    title = fleets.PROBES[0]

    def snapshot(self) -> Snapshot:
        return Snapshot(1, fleets.NOW, fleets.hostile_model(), fleets.PROBES[0])

    def group_history(self, policy: str | None, group: str) -> tuple[tuple[str, str, str], ...]:
        return tuple((probe, probe, probe) for probe in fleets.PROBES)


def _inert(driver: Any) -> None:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    for cell in driver.find_elements(By.CSS_SELECTOR, "td, summary, h1, h2, code")[:200]:
        if cell.is_displayed():
            ActionChains(driver).move_to_element(cell).perform()
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018
    assert driver.execute_script("return typeof window.__xss;") == "undefined"
    made = driver.execute_script(
        "return [document.querySelectorAll('img, iframe, object, embed').length,"
        " Array.from(document.querySelectorAll('*')).filter(e => Array.from(e.attributes)"
        ".some(a => a.name.startsWith('on') || a.name === 'data-probe')).length,"
        " Array.from(document.scripts).filter(s => !s.src.endsWith('/static/ui.js') && s.src).length];"
    )
    assert made == [0, 0, 0]


def test_hostile_names_run_nothing_in_the_served_pages(chrome: Any) -> None:
    from selenium.webdriver.common.by import By

    server = uiserving.ui_server(Address("127.0.0.1", 0), _Hostile()).start()  # type: ignore[arg-type]
    try:
        base = f"http://127.0.0.1:{server.port}"
        for path in ("/", "/groups", "/rollout", "/reconciles"):
            _open(chrome, base + path)
            assert chrome.find_elements(By.ID, "content"), f"{path} is our page, not the browser's error page"
            _inert(chrome)
        _open(chrome, base + "/groups")
        for index in range(len(chrome.find_elements(By.CSS_SELECTOR, "#groups a"))):
            link = chrome.find_elements(By.CSS_SELECTOR, "#groups a")[index]
            link.click()
            _wait(chrome, lambda d: "/groups/" in d.current_url)
            assert chrome.current_url.startswith(base + "/groups/")
            assert "Every candidate" in chrome.page_source, "the link found its group"
            _inert(chrome)
            chrome.back()
        browser.screenshots().joinpath("hostile.png").write_bytes(chrome.get_screenshot_as_png())
    finally:
        server.close()


def test_hostile_names_run_nothing_in_the_report_file(chrome: Any, tmp_path: Path) -> None:
    report = tmp_path / "fleet.html"
    report.write_text(pages.report(fleets.hostile_model(), stamp=fleets.PROBES[1]))
    _open(chrome, report.as_uri())
    _inert(chrome)
    errors = [entry for entry in chrome.get_log("browser") if "Content Security Policy" in entry["message"]]
    assert errors == [], "our own style and script are allowed by their hashes"


def test_the_keyboard_reaches_the_skip_link_the_filter_and_the_sort_buttons(
    chrome: Any, running: demo.Running
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    _open(chrome, running.url + "/")
    body = chrome.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    active = chrome.switch_to.active_element
    assert active.text == "Skip to content" and active.is_displayed()
    active.send_keys(Keys.ENTER)
    assert chrome.switch_to.active_element.get_attribute("id") == "content"
    chrome.switch_to.active_element.send_keys(Keys.TAB)
    active = chrome.switch_to.active_element
    assert active.get_attribute("id") == "clusters-filter"
    active.send_keys("wlc-1")
    _wait(chrome, lambda d: len(_rows(d, "clusters")) == 1)
    active.send_keys(Keys.BACKSPACE * 5)
    _wait(chrome, lambda d: len(_rows(d, "clusters")) == 2)
    for _ in range(10):  # the filter's button, then the first sort button
        chrome.switch_to.active_element.send_keys(Keys.TAB)
        if chrome.switch_to.active_element.text == "Cluster":
            break
    assert chrome.switch_to.active_element.text == "Cluster"
    chrome.switch_to.active_element.send_keys(Keys.ENTER)
    th = chrome.find_element(By.CSS_SELECTOR, "#clusters thead th:first-child")
    assert th.get_attribute("aria-sort") == "ascending"
    outline = chrome.execute_script("return getComputedStyle(document.activeElement).outlineStyle;")
    assert outline == "solid", "the focused control is outlined"


def _watch_demo(
    chrome: Any, tmp_path: Path, page: str, table: str, seen: str, shot: str, *extra: str
) -> None:
    """Run ``python examples/demo/run.py --ui-listen 0`` (and ``extra``), open its view's ``page`` and wait,
    without a reload, until the table ``table`` says ``seen``; a screenshot ``shot``; the demo exits 0."""
    import re
    import subprocess
    import sys

    from selenium.webdriver.common.by import By

    demo_path = browser.ROOT / "examples" / "demo" / "run.py"
    command = [sys.executable, "-u", str(demo_path), "--workdir", str(tmp_path), *extra]
    command += ["--ui-listen", "0", "--ui-step-seconds", "2"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as demo_run:
        assert demo_run.stdout is not None
        url = None
        for line in demo_run.stdout:
            found = re.search(r"the fleet view: (http://127\.0\.0\.1:\d+/)", line)
            if found:
                url = found[1]
                break
        assert url is not None, "the demo said where its view is"
        _open(chrome, url + page)  # before the first reconcile: a page that loads itself again
        _wait(chrome, lambda d: d.find_elements(By.ID, table))
        chrome.execute_script("window.__notReloaded = true;")
        _wait(chrome, lambda d: seen in d.find_element(By.ID, table).text)
        assert chrome.execute_script("return window.__notReloaded === true;")
        browser.screenshots().joinpath(shot).write_bytes(chrome.get_screenshot_as_png())
        rest = demo_run.stdout.read()
        assert demo_run.wait(timeout=180) == 0, rest


def test_the_demo_with_a_view_tells_its_story_in_the_browser(chrome: Any, tmp_path: Path) -> None:
    """``python examples/demo/run.py --ui-listen PORT``: the open page follows the story by itself, up to
    the reschedule's commit quoting the agent's reason."""
    _watch_demo(chrome, tmp_path, "reconciles", "reconciles", "rescheduled", "demo-reconciles.png")


def test_the_waves_demo_with_a_view_shows_the_rollout_in_the_browser(chrome: Any, tmp_path: Path) -> None:
    """``--waves --ui-listen PORT``: the open rollout page follows the waves by itself, up to the abort."""
    _watch_demo(chrome, tmp_path, "rollout", "waves", "aborted", "demo-rollout.png", "--waves")


CONTRAST = """
function channel(c) { c = c / 255; return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); }
function luminance(rgb) {
  return 0.2126 * channel(rgb[0]) + 0.7152 * channel(rgb[1]) + 0.0722 * channel(rgb[2]); }
function parse(text) { const m = text.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
  const p = m[1].split(',').map(Number); return p.length === 4 && p[3] === 0 ? null : p; }
function background(element) {
  for (let e = element; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor);
    if (c) return c; }
  return [255, 255, 255]; }
const failing = [];
for (const element of document.querySelectorAll('body *')) {
  const own = Array.from(element.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
  if (!own || !element.getClientRects().length) continue;
  const style = getComputedStyle(element);
  if (style.visibility === 'hidden') continue;
  const fg = parse(style.color), bg = background(element);
  const [light, dark] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
  const ratio = (light + 0.05) / (dark + 0.05);
  if (ratio < 4.5) failing.push(element.tagName + ' ' + element.className + ': ' + ratio.toFixed(2));
}
return failing;
"""


def test_every_text_on_the_pages_has_aa_contrast(chrome: Any, running: demo.Running) -> None:
    """WCAG 2.1 AA 1.4.3 measured in the browser: each element's own text colour against the background it
    is drawn on (the nearest opaque one), at least 4.5:1, on every page."""
    from selenium.webdriver.common.by import By

    for path in ("/", "/groups", "/rollout", "/reconciles"):
        _open(chrome, running.url + path)
        assert chrome.execute_script(CONTRAST) == [], path
    _open(chrome, running.url + "/groups")
    chrome.find_element(By.CSS_SELECTOR, "#groups a").click()
    _wait(chrome, lambda d: "Every candidate" in d.page_source)
    assert chrome.execute_script(CONTRAST) == []
    faint = "const p = document.createElement('p'); p.textContent = 'faint'; p.className = 'probe';"
    chrome.execute_script(faint + " document.body.append(p);")
    chrome.execute_script("document.querySelector('p.probe').style.color = '#aaaaaa';")
    assert chrome.execute_script(CONTRAST) == ["P probe: 2.32"], "the check finds a faint text"
