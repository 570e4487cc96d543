"""The controller's read-only web view over real HTTP (issue 27), on a real controller over real git.

Behaviours covered:
- before the first reconcile the view says so (503); after it, the fleet page lists the clusters and the
  groups page the groups; a group's page has every candidate's verdict; an unknown group is 404;
- each reconcile is a new version (``/api/state``), and the pages then show what it changed: a group that
  moved is on its new cluster;
- a failed reconcile is listed with its problem on the reconciles page;
- every answer carries the Content-Security-Policy (no inline script) and ``nosniff``; our script and CSS
  are served, nothing else under /static/; writing methods are refused (405): the view changes nothing;
- bound to a loopback address, a request for another host (DNS rebinding) is refused (421);
- ``--ui-listen 8081`` binds 127.0.0.1.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from nova_gitops.cli.controller import _ui_address
from nova_gitops.controller import looping, uihistory, uiserving, uistate
from nova_gitops.controller.serving import Server
from nova_gitops.controller.settings import Address
from nova_gitops.webui import pages
from tests.controller.helpers import Fleet, cluster_report, deployment, policy


def request(server: Server, path: str, method: str = "GET", host: str | None = None) -> tuple[int, dict, str]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        headers = {"Host": host} if host is not None else {}
        connection.request(method, path, headers=headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode()
    finally:
        connection.close()


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    fleet = Fleet(tmp_path)
    fleet.write_source("policy.yaml", policy())
    fleet.write_source("apps.yaml", deployment("web", cpu="1"), deployment("api", cpu="1"))
    fleet.report(cluster_report("wlc-1", cpu="4"), cluster_report("wlc-2", cpu="2"))
    return fleet


@pytest.fixture
def served(fleet: Fleet) -> Iterator[tuple[looping.Controller, uistate.FleetView, Server]]:
    view = uistate.FleetView(title="demo", where="--repo file:///r.git --source ./fleet")
    controller = fleet.controller(observers=[view])
    controller.journal = view
    server = uiserving.ui_server(Address("127.0.0.1", 0), view).start()
    yield controller, view, server
    server.close()


def test_the_pages_show_the_fleet_after_the_first_reconcile(
    served: tuple[looping.Controller, uistate.FleetView, Server],
) -> None:
    controller, view, server = served
    code, _, waiting = request(server, "/")
    assert code == 503 and "first reconcile" in waiting and "data-reload" in waiting
    controller.reconcile_once()
    code, headers, html = request(server, "/")
    assert code == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert ">wlc-1" in html and ">wlc-2" in html and 'data-version="1"' in html
    code, _, groups = request(server, "/groups")
    assert code == 200 and "2 groups" in groups
    name = view.snapshot().model.groups[0].name  # type: ignore[union-attr]
    code, _, page = request(server, pages.group_href(name))
    assert code == 200 and "Every candidate" in page and "Picked cluster" in page
    assert request(server, "/groups/no-such-group")[0] == 404
    assert request(server, "/groups?q=no-such-thing")[2].count("<tr>") == 1  # the header row alone
    assert "published" in request(server, "/reconciles")[2]


def test_each_reconcile_is_a_new_version_and_the_pages_follow_it(
    fleet: Fleet, served: tuple[looping.Controller, uistate.FleetView, Server]
) -> None:
    controller, _view, server = served
    controller.reconcile_once()
    assert json.loads(request(server, "/api/state")[2]) == {"version": 1}
    fleet.write_source("apps.yaml", deployment("web", cpu="1"), deployment("api", cpu="1"), deployment("db"))
    controller.reconcile_once()
    assert json.loads(request(server, "/api/state")[2]) == {"version": 2}
    assert "3 groups" in request(server, "/groups")[2]


def test_a_reconcile_that_changed_nothing_reuses_the_rows_the_view_built(
    served: tuple[looping.Controller, uistate.FleetView, Server],
) -> None:
    controller, view, server = served
    controller.reconcile_once()
    controller.reconcile_once()  # after its own commit the controller plans once on its head
    before = view.snapshot().model
    assert before is not None and request(server, "/groups")[0] == 200
    outcome = controller.reconcile_once()
    assert outcome.skipped
    after = view.snapshot().model
    assert after is not None and after is not before and after.facts.reconciles != before.facts.reconciles
    assert after.groups is before.groups, "a skip builds no group rows again"
    assert [row.name for row in after.clusters] == [row.name for row in before.clusters]


def test_a_groups_page_has_its_history_from_the_rendered_repositorys_log(
    fleet: Fleet, served: tuple[looping.Controller, uistate.FleetView, Server]
) -> None:
    controller, view, server = served
    uihistory.attach(view, controller)
    controller.reconcile_once()
    first = fleet.head()
    fleet.write_source("apps.yaml", deployment("web", cpu="1"), deployment("api", cpu="1"), deployment("db"))
    controller.reconcile_once()
    assert fleet.head() != first
    model = view.snapshot().model
    assert model is not None
    web = next(group for group in model.facts.plan.groups if group.objects[0].manifest.name == "web")
    page = request(server, pages.group_href(web.name))[2]
    assert "Its history" in page and first[:12] in page and f"group {web.name} placed on" in page
    assert uihistory.group_history(controller.publisher.repo, "", None, web.name) == ()  # type: ignore[attr-defined]


def test_a_failed_reconcile_is_listed_with_its_problem(
    fleet: Fleet, served: tuple[looping.Controller, uistate.FleetView, Server]
) -> None:
    controller, _view, server = served
    controller.reconcile_once()
    (fleet.source / "broken.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: [\n")
    with pytest.raises(Exception):  # noqa: B017  the loop logs it; the view lists it
        controller.reconcile_once()
    html = request(server, "/reconciles")[2]
    assert "failed" in html and "broken.yaml" in html


def test_errors_are_shown_redacted_as_the_log_redacts_them(fleet: Fleet) -> None:
    from datetime import UTC, datetime

    from nova_gitops import errors
    from nova_gitops.controller.logs import JsonLog

    log = JsonLog(secrets=["s3cret-token"])
    view = uistate.FleetView(title="demo", where="", redact=log.redact)
    controller = fleet.controller(observers=[view])
    controller.journal = view
    controller.reconcile_once()
    failure = errors.RepoError(
        "git failed: https://bot:s3cret-token@git.example/fleet.git: s3cret-token refused"
    )
    view.failed(failure, datetime(2026, 1, 1, tzinfo=UTC))
    server = uiserving.ui_server(Address("127.0.0.1", 0), view).start()
    try:
        html = request(server, "/reconciles")[2]
    finally:
        server.close()
    assert "git failed: https://git.example/fleet.git" in html and "s3cret-token" not in html


def test_answers_are_locked_down_and_read_only(
    served: tuple[looping.Controller, uistate.FleetView, Server],
) -> None:
    controller, _view, server = served
    controller.reconcile_once()
    code, headers, _ = request(server, "/")
    assert (
        headers["Content-Security-Policy"] == pages.SERVER_CSP and "'unsafe-inline'" not in pages.SERVER_CSP
    )
    assert headers["X-Content-Type-Options"] == "nosniff" and headers["Cache-Control"] == "no-store"
    code, headers, script = request(server, "/static/ui.js")
    assert code == 200 and headers["Content-Type"].startswith("text/javascript") and "poll" in script
    assert request(server, "/static/../settings.py")[0] == 404
    assert request(server, "/groups?" + "&".join(f"f{n}=1" for n in range(20)))[0] == 400
    assert request(server, "/groups/%ff%fe")[0] == 404
    assert request(server, "/static/other.js")[0] == 404
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        assert request(server, "/", method)[0] == 405
    assert request(server, "/", "HEAD")[0] == 200


def test_an_answer_over_the_bound_is_refused_with_a_hint(
    served: tuple[looping.Controller, uistate.FleetView, Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    controller, _view, server = served
    controller.reconcile_once()
    monkeypatch.setattr(uiserving, "MAX_RESPONSE_BYTES", 100)
    code, _, text = request(server, "/")
    assert code == 507 and "narrow it with a search" in text


def test_a_request_for_another_host_is_refused_on_loopback(
    served: tuple[looping.Controller, uistate.FleetView, Server],
) -> None:
    controller, _view, server = served
    controller.reconcile_once()
    assert request(server, "/", host="attacker.example:8081")[0] == 421
    assert request(server, "/", host=f"localhost:{server.port}")[0] == 200
    assert request(server, "/", host=f"[::1]:{server.port}")[0] == 200


def test_a_port_alone_binds_the_loopback_address() -> None:
    context = click.Context(click.Command("controller"))
    option = click.Option(["--ui-listen"])
    assert _ui_address(context, option, "8081") == Address("127.0.0.1", 8081)
    assert _ui_address(context, option, ":8081") == Address("127.0.0.1", 8081)
    assert _ui_address(context, option, "0.0.0.0:8081") == Address("0.0.0.0", 8081)
    with pytest.raises(click.BadParameter):
        _ui_address(context, option, "nonsense")
