"""``nova-gitops report SOURCE -o fleet.html`` (issue 27): one self-contained HTML file of the plan, written
whole; agents' reports given with ``--clusters`` show their fields; bad input exits 2 and writes nothing."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from tests.builders import cluster, deployment, policy

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "repo-layout" / "source"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_the_report_of_the_example_holds_its_clusters_groups_and_verdicts(tmp_path: Path) -> None:
    output = tmp_path / "out" / "fleet.html"
    code, _, err = run("report", str(EXAMPLE), "-o", str(output))
    assert code == 0, err
    assert f"wrote {output}" in err
    html = output.read_text()
    clusters = yaml.safe_load_all((EXAMPLE / "clusters" / "clusters.yaml").read_text())
    for document in clusters:
        assert f">{document['metadata']['name']}" in html
    assert "Every candidate's verdict" in html and "Picked cluster" in html
    assert "<link" not in html and "https://" not in html


def test_agents_reports_give_the_report_age_and_synced_commit(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    documents = [policy("p", clusterSelector={}), deployment("web")]
    (source / "source.yaml").write_text(yaml.safe_dump_all(documents))
    report = cluster("wlc-1")
    report["status"]["syncedRevision"] = "0123456789abcdef0123456789abcdef01234567"
    report["status"]["rescheduleRequests"] = []
    status = tmp_path / "status"
    status.mkdir()
    (status / "wlc-1.yaml").write_text(yaml.safe_dump(report))
    output = tmp_path / "fleet.html"
    code, _, err = run("report", str(source), "--clusters", str(status), "-o", str(output), "--quiet")
    assert code == 0, err
    assert err == ""
    assert "0123456" in output.read_text()


def test_an_invalid_source_exits_2_with_its_problem_and_writes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    (source / "bad.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: [\n")
    output = tmp_path / "fleet.html"
    code, _, err = run("report", str(source), "-o", str(output))
    assert code == 2
    assert "bad.yaml:" in err and "Traceback" not in err
    assert not output.exists()


def test_a_secrets_data_never_reaches_the_report(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "db-password", "namespace": "demo", "labels": {"app": "demo"}},
        "type": "Opaque",
        "data": {"password": "aHVudGVyMi1kYXRh"},
        "stringData": {"token": "hunter2-string-data"},
    }
    documents = [cluster("wlc-1"), policy("p", clusterSelector={}), deployment("web"), secret]
    (source / "source.yaml").write_text(yaml.safe_dump_all(documents))
    output = tmp_path / "fleet.html"
    code, _, err = run("report", str(source), "-o", str(output), "--quiet")
    assert code == 0, err
    html = output.read_text()
    assert "db-password" in html, "the Secret is listed by name, as a group's object"
    assert "aHVudGVyMi1kYXRh" not in html and "hunter2" not in html
