"""A Nova user's first hour with try-nova's tutorials and examples: what a first render says (issue 22).

Each case is written from the try-nova case that showed it, in the shape of its files (not copied):

- the guestbook as shipped (``examples/sample-policy``: no ``metadata.namespace``, applied with
  ``kubectl apply -n guestbook``) rendered without ``-n``: ``render``, ``publish``, ``diff`` and ``validate``
  name each unscheduled object with its reason on stderr (``render``/``publish``/``diff`` the first 20 and
  how many more), count them among the warnings as ``validate`` does, and say that ``-n guestbook`` would
  let the policy select them; ``diff``'s and ``publish``'s stdout are what they were;
- the ferretdb/percona disaster-recovery and fill-and-spill policies, whose cluster names are
  ``${NOVA_WORKLOAD_CLUSTER_1}`` placeholders: every problem they cause first says that the file holds an
  unexpanded variable and that Nova's examples pass through envsubst, and the expanded files render;
- the pgvector disaster-recovery example's ``RecoveryPlan`` and ``ReceivedAlert``: named as Nova's own kinds,
  left to Nova's control plane, and never rendered, even where a policy would select everything;
- the smart-scheduling tutorial's two equally free clusters: the tie goes to the first name, and the reason
  says so (docs/migrating-from-nova.md);
- percona disaster recovery's haproxy, meant for ``default`` beside an operator in ``psql-operator``: each
  kustomize directory's ``namespace:`` puts its objects in their namespace, and ``-n`` reaches only objects
  that still name none (docs/migrating-from-nova.md, "One source, several namespaces").
"""

from __future__ import annotations

import json
import shutil
import string
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli import notices
from nova_gitops.cli.main import cli
from tests import placements
from tests.cli.test_nova_tutorials import (
    in_namespace,
    kind_clusters,
    nova_cluster,
    plain,
    schedule_policy,
    service,
    workload,
)

Doc = dict[str, Any]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def write(root: Path, documents: list[Doc], name: str = "source.yaml") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return root


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


# --- item 2: the guestbook as shipped, without -n ----------------------------------------------------------


def guestbook() -> list[Doc]:
    """examples/sample-policy: the Namespace (labelled app=guestbook), the policy selecting namespace
    guestbook for kind-workload-1, and six objects naming no namespace."""
    app, redis = {"app": "guestbook"}, {"app": "redis"}
    return [
        *kind_clusters(),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "guestbook", "labels": app}},
        schedule_policy(
            "app-guestbook",
            {
                "namespaceSelector": in_namespace("guestbook"),
                "clusterSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kind-workload-1"}},
                "resourceSelectors": {"labelSelectors": [{"matchLabels": redis}, {"matchLabels": app}]},
            },
        ),
        workload("redis-leader", redis),
        service("redis-leader", redis),
        workload("redis-follower", redis, replicas=2),
        service("redis-follower", redis),
        workload("frontend", app, replicas=3),
        service("frontend", app),
    ]


UNSCHEDULED = [
    "Service/default/frontend",
    "Service/default/redis-follower",
    "Service/default/redis-leader",
    "Deployment.apps/default/frontend",
    "Deployment.apps/default/redis-follower",
    "Deployment.apps/default/redis-leader",
]
HINT = (
    "hint: 6 unscheduled objects name no namespace; SchedulePolicy app-guestbook would select them in "
    "namespace guestbook: give -n guestbook (as kubectl apply -n guestbook)"
)


def told_about_the_guestbook(stderr: str) -> None:
    lines = stderr.splitlines()
    named = [line for line in lines if "is not scheduled" in line]
    assert named == [f"warning: {key} is not scheduled: no SchedulePolicy matches" for key in UNSCHEDULED]
    assert HINT in lines


def test_render_names_the_unscheduled_guestbook_and_suggests_its_namespace(tmp_path: Path) -> None:
    source = write(tmp_path / "src", guestbook())
    code, stdout, stderr = run("render", str(source), "-o", str(tmp_path / "out"))
    assert code == 0 and stdout == ""
    told_about_the_guestbook(stderr)
    assert "(6 unscheduled, 6 warnings)" in stderr.splitlines()[-1]  # counted as validate counts them
    code, stdout, stderr = run("validate", str(source))
    assert code == 0
    told_about_the_guestbook(stderr)
    assert stdout.endswith("6 unscheduled, 6 warnings\n")

    code, _, stderr = run("render", str(source), "-o", str(tmp_path / "out"), "-n", "guestbook")
    assert code == 0
    assert "hint:" not in stderr and "(0 unscheduled, 0 warnings)" in stderr


def test_publish_and_diff_name_them_on_stderr_and_keep_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = write(tmp_path / "src", guestbook()[:3])  # clusters and the Namespace: nothing unscheduled
    git("init", "--quiet", "--initial-branch=main", cwd=source)
    git("add", "-A", cwd=source)
    git("commit", "--quiet", "-m", "clusters", cwd=source)
    write(source, guestbook())
    code, stdout, stderr = run("diff", "--source", str(source), "--base", "main", "--format", "json")
    assert code == 1
    json.loads(stdout)  # stdout is the diff, as scripts read it
    assert "not scheduled" not in stdout and "hint" not in stdout
    told_about_the_guestbook(stderr)
    assert stderr.splitlines()[-1] == "the work tree: 6 unscheduled, 6 warnings"

    git("add", "-A", cwd=source)
    git("commit", "--quiet", "-m", "guestbook", cwd=source)
    remote = tmp_path / "rendered.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote), cwd=tmp_path)
    publish = ["publish", str(source), "--repo", f"file://{remote}", "--cache-dir", str(tmp_path / "c")]
    code, stdout, stderr = run(*publish)
    assert code == 0 and stdout == ""
    told_about_the_guestbook(stderr)
    assert stderr.splitlines()[-1].startswith("published ")
    assert stderr.splitlines()[-1].endswith("(6 unscheduled, 6 warnings)")
    code, _, stderr = run(*publish)  # nothing new to commit: still told
    assert code == 0
    told_about_the_guestbook(stderr)
    assert stderr.splitlines()[-1].endswith("already holds this render (6 unscheduled, 6 warnings)")


def test_render_names_the_first_twenty_and_counts_the_rest(tmp_path: Path) -> None:
    documents = [
        *kind_clusters(),
        *(plain("ConfigMap", f"settings-{n:02}", {"app": "none"}) for n in range(25)),
    ]
    source = write(tmp_path / "src", documents)
    code, _, stderr = run("render", str(source), "-o", str(tmp_path / "out"))
    assert code == 0
    named = [line for line in stderr.splitlines() if "is not scheduled" in line]
    assert len(named) == notices.MAX_UNSCHEDULED_SHOWN == 20
    assert named[-1] == "warning: ConfigMap/default/settings-19 is not scheduled: no SchedulePolicy matches"
    assert (
        "… and 5 more unscheduled objects (nova-gitops validate names every one, with its reason)" in stderr
    )
    assert "(25 unscheduled, 25 warnings)" in stderr
    _, _, stderr = run("validate", str(source))
    assert len([line for line in stderr.splitlines() if "is not scheduled" in line]) == 25


# --- item 3: ${VAR} placeholders ---------------------------------------------------------------------------

FERRETDB_POLICIES = """\
apiVersion: policy.elotl.co/v1alpha1
kind: SchedulePolicy
metadata:
  name: spread-ferretdb
spec:
  namespaceSelector:
    matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: Exists
  resourceSelectors:
    labelSelectors:
      - matchLabels:
          app: ferretdb
  groupBy:
    labelKey: app
  clusterSelector:
    matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: In
      values:
      - ${NOVA_WORKLOAD_CLUSTER_1}
      - ${NOVA_WORKLOAD_CLUSTER_2}
  spreadConstraints:
    spreadMode: Duplicate
    topologyKey: kubernetes.io/metadata.name
    overrides:
      - topologyValue: ${NOVA_WORKLOAD_CLUSTER_1}
        resources:
          - kind: Deployment
            apiVersion: apps/v1
            name: ferretdb
            namespace: default
            override:
              - fieldPath: spec.template.spec.containers[0].env[0].value
                value:
                  staticValue: postgres://cluster1-ha.psql-operator.svc:5432/zoo
---
apiVersion: policy.elotl.co/v1alpha1
kind: SchedulePolicy
metadata:
  name: psql-cluster-1-ferretdb
spec:
  namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: default
  clusterSelector:
    matchLabels:
      kubernetes.io/metadata.name: ${NOVA_WORKLOAD_CLUSTER_1}
  resourceSelectors:
    labelSelectors:
      - matchLabels:
          psql-cluster: cluster-1
"""
FILL_AND_SPILL = """\
apiVersion: policy.elotl.co/v1alpha1
kind: SchedulePolicy
metadata:
  name: fill-and-spill-policy-1
spec:
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: default}
  groupBy:
    labelKey: test
  orderedClusterSelector:
    matchExpressions:
      - key: kubernetes.io/metadata.name
        operator: In
        values: [${NOVA_WORKLOAD_CLUSTER_2}, ${NOVA_WORKLOAD_CLUSTER_1}]
  resourceSelectors:
    labelSelectors:
      - matchLabels:
          groupingFeatureTest: "true"
"""
NOVA_README_CLUSTERS = {"NOVA_WORKLOAD_CLUSTER_1": "wlc-1", "NOVA_WORKLOAD_CLUSTER_2": "wlc-2"}


def ferretdb() -> Doc:
    document = workload("ferretdb", {"app": "ferretdb"}, replicas=2, namespace="default")
    document["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "FERRETDB_POSTGRESQL_URL"}]
    return document


def test_an_unexpanded_variable_is_named_first_and_envsubst_suggested(tmp_path: Path) -> None:
    source = write(tmp_path / "src", [nova_cluster("wlc-1"), nova_cluster("wlc-2"), ferretdb()])
    (source / "policy-spread-ferretdb.yaml").write_text(FERRETDB_POLICIES)
    code, _, stderr = run("render", str(source), "-o", str(tmp_path / "out"))
    assert code == 2 and not (tmp_path / "out").exists()
    problems = [line for line in stderr.splitlines() if line.startswith("policy-spread-ferretdb.yaml:")]
    assert len(problems) == 4  # two selector values, a topologyValue, a matchLabels value
    for line in problems:
        _, _, message = line.partition(": SchedulePolicy ")  # its name, the field, then what is said
        said = message.split(": ", 2)[2]
        assert said.startswith("the file holds an unexpanded variable ${NOVA_WORKLOAD_CLUSTER_"), line
        assert "Nova's examples pass through envsubst first (envsubst < policy-spread-ferretdb.yaml)" in said
        assert "as written, invalid label value '${NOVA_WORKLOAD_CLUSTER_" in said  # the original follows

    # a flow sequence holding ${...} is not even YAML: the syntax error says the same first
    (source / "policy-spread-ferretdb.yaml").unlink()
    (source / "grp-policy.yaml").write_text(FILL_AND_SPILL)
    code, _, stderr = run("validate", str(source))
    assert code == 2
    assert stderr.startswith(
        "grp-policy.yaml:14:19: the file holds an unexpanded variable ${NOVA_WORKLOAD_CLUSTER_2}: Nova's "
        "examples pass through envsubst first (envsubst < grp-policy.yaml); as written, invalid YAML:"
    )


def test_the_same_files_expanded_as_envsubst_does_render(tmp_path: Path) -> None:
    source = write(tmp_path / "src", [nova_cluster("wlc-1"), nova_cluster("wlc-2"), ferretdb()])
    expanded = string.Template(FERRETDB_POLICIES).substitute(NOVA_README_CLUSTERS)  # envsubst's ${VAR}
    (source / "policy-spread-ferretdb.yaml").write_text(expanded)
    code, _, stderr = run("render", str(source), "-o", str(tmp_path / "out"))
    assert code == 0, stderr
    first = yaml.safe_load((tmp_path / "out/clusters/wlc-1/default/deployment-ferretdb.yaml").read_text())
    env = first["spec"]["template"]["spec"]["containers"][0]["env"][0]
    assert env["value"] == "postgres://cluster1-ha.psql-operator.svc:5432/zoo"
    assert (tmp_path / "out/clusters/wlc-2/default/deployment-ferretdb.yaml").is_file()


def test_a_variable_that_leads_to_no_problem_is_left_alone(tmp_path: Path) -> None:
    """An image tag or an environment value may be meant literally: nothing is said about it."""
    document = ferretdb()
    document["spec"]["template"]["spec"]["containers"][0]["image"] = "ferretdb:${TAG}"
    source = write(tmp_path / "src", [nova_cluster("wlc-1"), document])
    code, _, stderr = run("validate", str(source))
    assert code == 0 and "unexpanded" not in stderr


# --- item 4: Nova's own kinds -----------------------------------------------------------------------------


def recovery_documents() -> list[Doc]:
    """examples/pgvector-disaster-recovery: a RecoveryPlan (its steps patch the databases and the haproxy
    ConfigMap) and a ReceivedAlert that triggers it, both of recovery.elotl.co."""
    step = {
        "type": "patch",
        "patch": {
            "apiVersion": "pgv2.percona.com/v2",
            "resource": "perconapgclusters",
            "namespace": "pgvector-operator",
            "name": "cluster1",
            "override": {"fieldPath": "spec.standby.enabled", "value": {"raw": True}},
            "patchType": "application/merge-patch+json",
        },
    }
    return [
        {
            "apiVersion": "recovery.elotl.co/v1alpha1",
            "kind": "RecoveryPlan",
            "metadata": {"name": "psql-primary-failover-plan"},
            "spec": {"alertLabels": {"app": "example-app"}, "steps": [step]},
        },
        {
            "apiVersion": "recovery.elotl.co/v1alpha1",
            "kind": "ReceivedAlert",
            "metadata": {"name": "testalert"},
            "spec": {"labels": {"alertname": "testalert", "app": "example-app"}},
            "status": {"processed": False},
        },
    ]


NOVAS_OWN = "is Nova's own kind: left to Nova's control plane; a renderer does not act on it"


def test_novas_own_kinds_are_named_as_such_and_never_rendered(tmp_path: Path) -> None:
    everything = schedule_policy(
        "everything-everywhere",
        {"spreadConstraints": {"spreadMode": "Duplicate", "topologyKey": "kubernetes.io/metadata.name"}},
    )
    alerting = workload("example-app", {"app": "example-app"})  # what the plan recovers; selected
    source = write(tmp_path / "src", [*kind_clusters(), everything, alerting, *recovery_documents()])
    code, _, stderr = run("render", str(source), "-o", str(tmp_path / "out"))
    assert code == 0, stderr
    lines = stderr.splitlines()
    assert (
        "source.yaml:82: warning: RecoveryPlan psql-primary-failover-plan: RecoveryPlan.recovery.elotl.co "
        f"{NOVAS_OWN} (nor sends it to a workload cluster)"
    ) in lines
    assert any(
        line.startswith("source.yaml:") and f"ReceivedAlert.recovery.elotl.co {NOVAS_OWN}" in line
        for line in lines
    )
    placement = yaml.safe_load((tmp_path / "out/placement.yaml").read_text())
    assert placement["unscheduled"] == []
    rendered = [path.name for path in (tmp_path / "out/clusters").rglob("*.yaml")]
    assert not [name for name in rendered if "recoveryplan" in name or "receivedalert" in name]
    code, stdout, _ = run("validate", str(source), "--strict")
    assert code == 1 and "0 unscheduled, 2 warnings" in stdout  # kept in view: --strict fails on them


# --- item 5: a tie broken by name -------------------------------------------------------------------------


def test_two_equally_free_clusters_tie_and_the_first_name_wins(tmp_path: Path) -> None:
    """The smart-scheduling tutorial: no clusterSelector, two identical kind clusters; blue (the group
    placed first, by name) goes to kind-workload-1 by name, green then to the freer kind-workload-2."""
    documents: list[Doc] = [
        *kind_clusters(),
        schedule_policy(
            "demo-policy",
            {
                "namespaceSelector": in_namespace("microsvc-demo"),
                "groupBy": {"labelKey": "color"},
                "resourceSelectors": {"labelSelectors": [{"matchLabels": {"microServicesDemo": "yes"}}]},
            },
        ),
    ]
    for color in ("blue", "green"):
        documents.append(workload(f"frontend-{color}", {"color": color, "microServicesDemo": "yes"}, cpu="1"))
    source = write(tmp_path / "src", documents)
    code, _, stderr = run("render", str(source), "-o", str(tmp_path / "out"), "-n", "microsvc-demo")
    assert code == 0, stderr
    groups = {group["name"]: group for group in placements.read(tmp_path / "out")["groups"]}
    blue, green = groups["demo-policy-4f068569"], groups["demo-policy-f73297b2"]
    assert blue["clusters"] == ["kind-workload-1"] and green["clusters"] == ["kind-workload-2"]
    assert (
        "Cluster kind-workload-2 fits, not chosen: kind-workload-1 has as much free capacity and comes first "
        "by name" in blue["reason"]
    )


# --- item 6: one source, several namespaces ---------------------------------------------------------------

needs_kustomize = pytest.mark.skipif(
    shutil.which("kustomize") is None and shutil.which("kubectl") is None,
    reason="neither kustomize nor kubectl is installed",
)


@needs_kustomize
def test_each_kustomize_directory_keeps_its_namespace_and_n_fills_the_rest(tmp_path: Path) -> None:
    """Percona disaster recovery: the database cluster is meant for psql-operator, haproxy for default.
    A kustomization per directory says so; ``-n psql-operator`` reaches only the file naming none."""

    def pinned(name: str, namespace: str, cluster: str, labels: dict[str, str]) -> Doc:
        return schedule_policy(
            name,
            {
                "namespaceSelector": in_namespace(namespace),
                "clusterSelector": {"matchLabels": {"kubernetes.io/metadata.name": cluster}},
                "resourceSelectors": {"labelSelectors": [{"matchLabels": labels}]},
            },
        )

    source = write(
        tmp_path / "src",
        [
            *kind_clusters(),
            pinned("psql-cluster-1", "psql-operator", "kind-workload-1", {"psql-cluster": "cluster-1"}),
            pinned("ha-proxy-cluster", "default", "kind-workload-2", {"cluster": "cluster-ha-proxy"}),
        ],
        "schedule-policies.yaml",
    )
    database = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"role": "primary"}}
    write(
        source / "operator",
        [{**database, "metadata": {"name": "cluster1", "labels": {"psql-cluster": "cluster-1"}}}],
    )
    (source / "operator/kustomization.yaml").write_text(
        "namespace: psql-operator\nresources: [source.yaml]\n"
    )
    write(source / "haproxy", [workload("haproxy", {"cluster": "cluster-ha-proxy"})])
    (source / "haproxy/kustomization.yaml").write_text("namespace: default\nresources: [source.yaml]\n")
    write(source, [plain("ConfigMap", "cluster1-pgbackrest", {"psql-cluster": "cluster-1"})], "backrest.yaml")

    code, _, stderr = run("render", str(source), "-o", str(tmp_path / "out"), "-n", "psql-operator")
    assert code == 0, stderr
    out = tmp_path / "out/clusters"
    assert (out / "kind-workload-1/psql-operator/configmap-cluster1.yaml").is_file()  # its kustomization's
    assert (out / "kind-workload-1/psql-operator/configmap-cluster1-pgbackrest.yaml").is_file()  # -n's
    assert (out / "kind-workload-2/default/deployment-haproxy.yaml").is_file()  # its own, not -n's
    assert not list(out.glob("*/psql-operator/deployment-haproxy.yaml"))
    assert "(0 unscheduled, 0 warnings)" in stderr
