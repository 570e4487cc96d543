"""The reference fleet of the benchmarks: N clusters and M workloads (Deployment + Service + ConfigMap each)
under policies that mix single placement, groups, Divide over 2–4 clusters and Duplicate over all clusters.

At the reference size (100 clusters, 2,000 workloads) about 100,000 objects are rendered. Deterministic for
a given seed, so two runs measure the same work.

``scale=K`` writes K copies of the reference fleet side by side in one source (K × the clusters, workloads and
policies; ~K × 100,000 rendered objects): shard ``s`` has clusters ``wlc-{s*100}`` on, workloads
``svc-{s*2000}`` on and its own policies, which select only the shard's clusters and workloads (label
``fleet-shard``), so every group has the reference's number of candidates and a Duplicate spreads over 100
clusters, not K × 100. ``scale=1`` writes exactly the reference fleet, byte for byte (no shard labels).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import yaml

REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "ap-south-1")
PROVIDERS = ("aws", "gce", "azure")
NAMESPACES = 20
# Shares of workloads by placement style; Duplicate is what multiplies the rendered object count.
STYLES = (("single", 40), ("grouped", 25), ("divide", 20), ("duplicate", 15))


def _dump_all(path: Path, documents: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False), encoding="utf-8")


SHARD_LABEL = "fleet-shard"


def _shard_labels(shard: str | None) -> dict[str, str]:
    """The label that keeps a shard's policies to its own clusters and workloads (none at scale 1)."""
    return {} if shard is None else {SHARD_LABEL: shard}


def _cluster(index: int, shard: str | None = None) -> dict[str, object]:
    name = f"wlc-{index:03d}"
    nodes = {f"{name}-node-{n}": {"cpu": "32", "memory": "128Gi", "pods": "110"} for n in range(8)}
    labels = {"spread-set": f"set-{index // 4:02d}", "fleet": "reference", **_shard_labels(shard)}
    return {
        "apiVersion": "cluster.elotl.co/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "name": name,
            "provider": PROVIDERS[index % len(PROVIDERS)],
            "region": REGIONS[index % len(REGIONS)],
            "zone": f"{REGIONS[index % len(REGIONS)]}{'abc'[index % 3]}",
            "kubernetesversion": "1.32",
        },
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "capacityResources": nodes,
            "availableResources": nodes,
            "autoscaled": index % 10 == 0,
        },
    }


def _sharded(spec: dict[str, object], shard: str | None) -> dict[str, object]:
    """A policy spec kept to one shard: its clusters (clusterSelector) and its workloads (one more label)."""
    if shard is None:
        return spec
    selectors = spec["resourceSelectors"]
    assert isinstance(selectors, dict)
    labels = [
        {"matchLabels": {**entry["matchLabels"], SHARD_LABEL: shard}} for entry in selectors["labelSelectors"]
    ]
    return {
        "clusterSelector": {"matchLabels": {SHARD_LABEL: shard}},
        **spec,
        "resourceSelectors": {"labelSelectors": labels},
    }


def _policies(
    clusters: int, shard: str | None = None, first_cluster: int = 0, first_set: int = 0
) -> list[dict[str, object]]:
    suffix = "" if shard is None else f"-{shard}"
    policies: list[dict[str, object]] = [
        {
            "name": f"single{suffix}",
            "spec": _sharded(
                {"resourceSelectors": {"labelSelectors": [{"matchLabels": {"style": "single"}}]}}, shard
            ),
        },
        {
            "name": f"grouped{suffix}",
            "spec": _sharded(
                {
                    "groupBy": {"labelKey": "app-group"},
                    "resourceSelectors": {"labelSelectors": [{"matchLabels": {"style": "grouped"}}]},
                },
                shard,
            ),
        },
        {
            "name": f"duplicate{suffix}",
            "spec": _sharded(
                {
                    "groupBy": {"labelKey": "app"},
                    "spreadConstraints": {
                        "spreadMode": "Duplicate",
                        "topologyKey": "kubernetes.io/metadata.name",
                    },
                    "resourceSelectors": {"labelSelectors": [{"matchLabels": {"style": "duplicate"}}]},
                },
                shard,
            ),
        },
    ]
    for local_set in range((clusters + 3) // 4):
        set_index = first_set + local_set  # divide sets name their clusters: no shard label needed
        first = first_cluster + local_set * 4
        members = [
            f"wlc-{i:03d}" for i in range(first, min(first_cluster + clusters, first + 2 + local_set % 3))
        ]
        weights = [100 // len(members)] * len(members)
        weights[0] += 100 - sum(weights)
        policies.append(
            {
                "name": f"divide-set-{set_index:02d}",
                "spec": {
                    "clusterSelector": {
                        "matchExpressions": [
                            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": members}
                        ]
                    },
                    "groupBy": {"labelKey": "app"},
                    "spreadConstraints": {
                        "spreadMode": "Divide",
                        "topologyKey": "kubernetes.io/metadata.name",
                        "percentageSplit": [
                            {"topologyValue": member, "percentage": weight}
                            for member, weight in zip(members, weights, strict=True)
                        ],
                    },
                    "resourceSelectors": {
                        "labelSelectors": [
                            {"matchLabels": {"style": "divide", "spread-set": f"set-{set_index:02d}"}}
                        ]
                    },
                },
            }
        )
    return [
        {
            "apiVersion": "policy.elotl.co/v1alpha1",
            "kind": "SchedulePolicy",
            "metadata": {"name": p["name"]},
            "spec": p["spec"],
        }
        for p in policies
    ]


def _workload(
    index: int, style: str, spread_set: int, rng: random.Random, shard: str | None = None
) -> list[dict[str, object]]:
    name = f"svc-{index:05d}"
    namespace = f"team-{index % NAMESPACES:02d}"
    labels = {
        "app": name,
        "style": style,
        "app-group": f"group-{index // 5:04d}",
        "spread-set": f"set-{spread_set:02d}",
        **_shard_labels(shard),
    }
    replicas = rng.randint(2, 6)
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name, "version": "v1"}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": f"registry.example.com/team/{name}:1.{index % 17}.0",
                            "ports": [{"containerPort": 8080, "name": "http"}],
                            "env": [
                                {"name": "LOG_LEVEL", "value": "info"},
                                {"name": "SERVICE", "value": name},
                            ],
                            "resources": {
                                "requests": {"cpu": f"{rng.choice((50, 100, 200))}m", "memory": "128Mi"},
                                "limits": {"cpu": "1", "memory": "512Mi"},
                            },
                            "readinessProbe": {
                                "httpGet": {"path": "/healthz", "port": "http"},
                                "periodSeconds": 10,
                            },
                        }
                    ]
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"selector": {"app": name}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
    }
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{name}-config", "namespace": namespace, "labels": labels},
        "data": {"settings.yaml": f"service: {name}\nreplicas: {replicas}\nfeatures:\n  cache: true\n"},
    }
    return [deployment, service, config]


def generate_fleet(
    root: Path, clusters: int = 100, workloads: int = 2000, seed: int = 0, *, scale: int = 1
) -> None:
    """Write a source directory for ``scale`` × the reference fleet into ``root`` (see the module doc)."""
    if scale < 1:
        raise ValueError(f"scale must be at least 1, not {scale}")
    rng = random.Random(seed)
    sets = (clusters + 3) // 4
    shards = [None] if scale == 1 else [f"shard-{s}" for s in range(scale)]
    _dump_all(
        root / "clusters.yaml",
        [
            _cluster(s * clusters + index, shard)
            for s, shard in enumerate(shards)
            for index in range(clusters)
        ],
    )
    _dump_all(
        root / "policies.yaml",
        [
            policy
            for s, shard in enumerate(shards)
            for policy in _policies(clusters, shard, first_cluster=s * clusters, first_set=s * sets)
        ],
    )
    _dump_all(
        root / "namespaces.yaml",
        [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"team-{n:02d}"}}
            for n in range(NAMESPACES)
        ],
    )
    styles = [style for style, share in STYLES for _ in range(share)]
    for s, shard in enumerate(shards):
        for local in range(workloads):
            index = s * workloads + local
            spread_set = s * sets + local % sets
            documents = _workload(index, styles[local % len(styles)], spread_set, rng, shard)
            path = root / "workloads" / f"team-{index % NAMESPACES:02d}" / f"svc-{index:05d}.yaml"
            _dump_all(path, documents)


def change_one_workload(source: Path) -> str:
    """Bump the replicas of the first Deployment in the fleet (one workload, one file): the change the
    publish, reconcile and load benchmarks time."""
    for path in sorted(source.rglob("*.yaml")):
        text = path.read_text()
        if "kind: Deployment" in text and "replicas: " in text:
            head, _, tail = text.partition("replicas: ")
            number, _, rest = tail.partition("\n")
            path.write_text(f"{head}replicas: {int(number) + 1}\n{rest}")
            return str(path.relative_to(source))
    raise SystemExit("no Deployment with replicas in the fleet")


REPOSITORY_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
)
"""What points git at one repository whatever the working directory."""


def forget_outer_repository() -> None:
    """Drop ``REPOSITORY_VARIABLES`` from this process's environment: a benchmark makes its scratch
    repositories by working directory, and a ``GIT_DIR`` left exported in the shell (say, for a ``git
    archive``) once made one commit its scratch render onto the checkout's own branch."""
    for name in REPOSITORY_VARIABLES:
        os.environ.pop(name, None)
