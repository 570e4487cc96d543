"""Real Nova inputs at the command line: exported Clusters, and policies whose mistakes would widen them.

Behaviours covered (inputs written here, shaped as Nova's CRDs and docs show them):
- a ``kubectl get clusters -o yaml`` export (a ``List``; ``spec.kubernetescluster``, ``spec.novacreated``,
  ``status.nodeGroupsConfigs``, Ready/Idle/Standby conditions with reason, message and times,
  ``lastUpdateTime``) validates with ``--strict``: no warning at all;
- ``get clusters`` shows IDLE and STANDBY from those conditions and K8S-CLUSTER from
  ``spec.kubernetescluster``;
- a misspelled policy field exits 2 at the field's ``file:line``, naming the policy, with a suggestion, and
  writes nothing; so does a null selector;
- a policy that matches no object is a warning naming it at its ``file:line``; ``--strict`` fails on it;
- a v1.5 map split without ``topologyKey`` renders the documented replicas per cluster.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from nova_gitops.api.problems import UNKNOWN_FIELD_REJECTED
from nova_gitops.api.unmatchedpolicies import UNMATCHED_POLICY
from nova_gitops.cli.main import cli
from tests.builders import deployment, policy


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def condition(kind: str, status: str, reason: str) -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": f"cluster is {reason.lower()}",
        "lastHeartbeatTime": "2026-11-20T10:00:00Z",
        "lastTransitionTime": "2026-11-19T08:30:00Z",
        "observedGeneration": 3,
    }


def exported_cluster(name: str, *, idle: str, standby: str) -> dict[str, Any]:
    """A Cluster as ``kubectl get clusters -o yaml`` prints it from a Nova control plane."""
    return {
        "apiVersion": "cluster.elotl.co/v1alpha1",
        "kind": "Cluster",
        "metadata": {
            "name": name,
            "uid": "0b7e6f0e-5c8f-4d0f-9a53-2f6d0c3f1a11",
            "resourceVersion": "48213",
            "generation": 3,
            "creationTimestamp": "2026-11-01T12:00:00Z",
            "labels": {"nova.elotl.co/cluster.provider": "aws", "env": "prod"},
        },
        "spec": {
            "name": name,
            "kubernetescluster": f"eks-{name}",
            "kubernetesversion": "1.31",
            "novacreated": False,
            "provider": "aws",
            "region": "us-west-2",
            "zone": "us-west-2a",
        },
        "status": {
            "conditions": [
                condition("Ready", "True", "Ready"),
                condition("Idle", idle, "Idle" if idle == "True" else "Busy"),
                condition("Standby", standby, "Standby" if standby == "True" else "Awake"),
            ],
            "lastUpdateTime": "2026-11-20T10:00:05Z",
            "autoscaled": False,
            "capacityResources": {"ip-10-0-1-5.us-west-2.compute.internal": {"cpu": "4", "memory": "16Gi"}},
            "availableResources": {
                "ip-10-0-1-5.us-west-2.compute.internal": {"cpu": "3500m", "memory": "14Gi"}
            },
            "nodeTaints": {"ip-10-0-1-5.us-west-2.compute.internal": []},
            "nodeGroupsConfigs": {
                "general": {
                    "instanceType": "m5.xlarge",
                    "minSize": 1,
                    "maxSize": 4,
                    "desiredCapacity": 1,
                    "nodeGroupType": "managed",
                },
                "gpu": {"instanceType": "g5.xlarge", "accelType": "A10G", "accelCount": "1", "maxSize": 2},
            },
        },
    }


def write(root: Path, name: str, *documents: dict[str, Any]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False))


def nova_source(root: Path) -> Path:
    exported = {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": [
            exported_cluster("wlc-1", idle="False", standby="False"),
            exported_cluster("wlc-2", idle="True", standby="True"),
        ],
    }
    write(root, "clusters.yaml", exported)
    write(root, "app.yaml", policy("demo"), deployment("web"))
    return root


def test_a_cluster_list_exported_from_nova_validates_strictly(tmp_path: Path) -> None:
    code, stdout, stderr = run("validate", str(nova_source(tmp_path / "src")), "--strict")
    assert (code, stderr) == (0, "")
    assert "2 clusters" in stdout and "0 warnings" in stdout


def test_get_clusters_shows_novas_idle_and_standby_conditions(tmp_path: Path) -> None:
    code, stdout, stderr = run("get", "clusters", str(nova_source(tmp_path / "src")))
    assert code == 0, stderr
    header, *rows = stdout.splitlines()
    table = [dict(zip(header.split(), row.split(), strict=False)) for row in rows]
    assert [(r["NAME"], r["K8S-CLUSTER"], r["READY"], r["IDLE"], r["STANDBY"]) for r in table] == [
        ("wlc-1", "eks-wlc-1", "True", "False", "False"),
        ("wlc-2", "eks-wlc-2", "True", "True", "True"),
    ]


POLICY_WITH_TYPO = """\
apiVersion: policy.elotl.co/v1alpha1
kind: SchedulePolicy
metadata:
  name: web-policy
spec:
  clusterSelecter:
    matchLabels:
      env: prod
  resourceSelectors:
    labelSelectors:
    - matchLabels: {app: demo}
"""


def test_a_misspelled_policy_field_exits_2_at_its_line_with_a_suggestion(tmp_path: Path) -> None:
    source = nova_source(tmp_path / "src")
    (source / "policy.yaml").write_text(POLICY_WITH_TYPO)
    output = tmp_path / "out"
    code, _, stderr = run("render", str(source), "-o", str(output))
    assert code == 2
    assert (
        f"policy.yaml:6:3: SchedulePolicy web-policy: spec.clusterSelecter: {UNKNOWN_FIELD_REJECTED}; "
        "did you mean clusterSelector?"
    ) in stderr
    assert not output.exists() or not any(output.iterdir())


def test_a_null_selector_exits_2(tmp_path: Path) -> None:
    source = nova_source(tmp_path / "src")
    (source / "policy.yaml").write_text(
        POLICY_WITH_TYPO.replace(
            "  clusterSelecter:\n    matchLabels:\n      env: prod\n", "  clusterSelector:\n"
        )
    )
    code, _, stderr = run("validate", str(source))
    assert code == 2
    assert "policy.yaml:6:3: SchedulePolicy web-policy: spec.clusterSelector: is null" in stderr


def test_a_policy_matching_no_object_is_a_warning_naming_it(tmp_path: Path) -> None:
    source = nova_source(tmp_path / "src")
    unused = policy("unused", resourceSelectors={"labelSelectors": [{"matchLabels": {"app": "demoo"}}]})
    write(source, "unused.yaml", unused)
    code, _, stderr = run("validate", str(source))
    assert code == 0
    assert f"unused.yaml:1: warning: SchedulePolicy unused: {UNMATCHED_POLICY}" in stderr
    code, _, _ = run("validate", str(source), "--strict")
    assert code == 1


def test_a_v15_map_split_without_topology_key_divides_by_cluster(tmp_path: Path) -> None:
    source = nova_source(tmp_path / "src")
    write(
        source,
        "app.yaml",
        policy("demo", spreadConstraints={"percentageSplit": {"wlc-1": 20, "wlc-2": 80}}),
        deployment("web", replicas=5, cpu="10m"),
    )
    code, stdout, stderr = run("get", "placements", str(source), "-o", "yaml")
    assert code == 0, stderr
    (item,) = [item for item in yaml.safe_load(stdout)["items"] if item["name"] == "web"]
    assert item["replicas"] == {"wlc-1": 1, "wlc-2": 4}
