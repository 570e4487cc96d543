"""Benchmark: ``rendering.emitting.dump`` against PyYAML's C dumper on typical rendered manifests.

Why: the render budget (whole render ≤ the time the C dumper alone needs to dump every rendered object)
leaves no room for libyaml's emitter on the hot path, so ``emitting.dump`` must be several times faster.
Generates 5,000 manifests of ~1.5 KB (a Deployment / Service / ConfigMap mix, names unique per manifest,
labels and images recurring as in a real fleet), dumps them with both, checks that our output loads back
equal, and prints per-document microseconds and the ratio; the last line is JSON.

``cold`` clears the emitter's caches before the pass (first render of a process); ``warm`` is a second pass
over the same manifests (a controller re-rendering). Run: ``.venv/bin/python -m bench.emit [COUNT]``.
"""

from __future__ import annotations

import gc
import json
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import yaml

from nova_gitops.rendering import emitting

TEAMS = ["payments", "search", "checkout", "ml-serving", "platform", "identity"]
IMAGES = [
    "nginx:1.25.3",
    "registry.example.com/shop/api:v2.14.1",
    "ghcr.io/acme/worker@sha256:9f86d081884c7d65",
]
CLUSTERS = ["wlc-1", "wlc-2", "gpu-us-east-1", "edge-eu-west-3"]


def _common_metadata(rng: random.Random, index: int, kind: str) -> dict[str, Any]:
    team = rng.choice(TEAMS)
    return {
        "name": f"{team}-{kind.lower()}-{index:05d}",
        "namespace": team,
        "labels": {
            "app.kubernetes.io/name": f"{team}-{index:05d}",
            "app.kubernetes.io/part-of": team,
            "app.kubernetes.io/version": rng.choice(["1.0.0", "2.3", "true", "1e3"]),
            "nova.elotl.co/target-cluster": rng.choice(CLUSTERS),
        },
        "annotations": {
            "nova.elotl.co/matching-policy": f"{team}-policy",
            "nova.elotl.co/schedule-group": f"{team}-policy-{rng.getrandbits(32):08x}",
            "description": f"Serves {team} traffic: owned by team {team}, #{index}",
            "prometheus.io/scrape": "true",
            "prometheus.io/port": "9090",
            "prometheus.io/path": "/metrics",
            "owner": f"{team}@example.com",
            "runbook": f"https://runbooks.example.com/{team}/{kind.lower()}",
        },
    }


def _container(rng: random.Random, index: int, team: str) -> dict[str, Any]:
    return {
        "name": "main",
        "image": rng.choice(IMAGES),
        "args": ["--port=8080", "--log-level=info", f"--shard={index % 16}"],
        "ports": [{"containerPort": 8080, "protocol": "TCP", "name": "http"}],
        "env": [
            {"name": "TEAM", "value": team},
            {"name": "RATIO", "value": "0.25"},
            {"name": "DEBUG", "value": "false"},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "OTEL_EXPORTER_OTLP_ENDPOINT", "value": "http://otel-collector:4317"},
        ],
        "volumeMounts": [
            {"name": "config", "mountPath": "/etc/app", "readOnly": True},
            {"name": "cache", "mountPath": "/var/cache/app"},
        ],
        "resources": {
            "requests": {"cpu": f"{rng.choice([100, 250, 500])}m", "memory": "256Mi"},
            "limits": {"memory": "512Mi"},
        },
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 5},
    }


def _deployment(rng: random.Random, index: int) -> dict[str, Any]:
    metadata = _common_metadata(rng, index, "Deployment")
    labels = {"app": metadata["name"]}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "spec": {
            "replicas": rng.randint(0, 12),
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": {**labels, "elotl-luna": "true"}},
                "spec": {
                    "containers": [_container(rng, index, metadata["namespace"])],
                    "volumes": [
                        {"name": "config", "configMap": {"name": f"{metadata['namespace']}-config"}},
                        {"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}},
                    ],
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "tolerations": [
                        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                    ],
                    "securityContext": {"runAsNonRoot": True, "runAsUser": 10001, "fsGroup": 10001},
                },
            },
        },
    }


def _service(rng: random.Random, index: int) -> dict[str, Any]:
    metadata = _common_metadata(rng, index, "Service")
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata,
        "spec": {
            "type": "ClusterIP",
            "selector": {"app": metadata["name"], "tier": "backend"},
            "ports": [
                {"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"},
                {"name": "grpc", "port": 9090, "targetPort": 9090, "protocol": "TCP"},
            ],
            "sessionAffinity": "None",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "internalTrafficPolicy": "Cluster",
            "externalIPs": [f"203.0.113.{index % 250}"],
        },
    }


def _config_map(rng: random.Random, index: int) -> dict[str, Any]:
    metadata = _common_metadata(rng, index, "ConfigMap")
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata,
        "data": {
            "app.yaml": (
                f"server:\n  port: 8080\n  workers: {rng.randint(1, 9)}\nlogging:\n  level: info\n"
                f"  format: json\nfeatures:\n  - checkout\n  - search\n# tenant {index}\n"
                "database:\n  host: postgres.shared.svc.cluster.local\n  port: 5432\n  pool: 20\n"
                "cache:\n  ttl: 300s\n  backend: redis://redis.shared.svc:6379/0\n"
            ),
            "LOG_LEVEL": "info",
            "MAX_CONNECTIONS": str(rng.randint(10, 500)),
            "ENABLED": "yes",
            "FEATURE_FLAGS": "checkout=true,search=false,recommendations=canary",
            "TIMEOUT": "30s",
        },
    }


def generate(count: int, seed: int = 42) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    makers = [_deployment, _service, _config_map]
    return [makers[index % 3](rng, index) for index in range(count)]


def _pyyaml(obj: dict[str, Any]) -> str:
    return yaml.dump(
        obj, Dumper=yaml.CSafeDumper, sort_keys=False, default_flow_style=False, allow_unicode=True
    )


def _time_per_document(dump: Callable[[dict[str, Any]], str], manifests: list[dict[str, Any]]) -> float:
    gc.disable()
    try:
        start = time.perf_counter()
        for manifest in manifests:
            dump(manifest)
        return (time.perf_counter() - start) / len(manifests) * 1e6
    finally:
        gc.enable()


def main(count: int = 5000) -> dict[str, float]:
    manifests = generate(count)
    for manifest in manifests[:300]:
        assert yaml.load(emitting.dump(manifest), Loader=yaml.CSafeLoader) == manifest
    average_kb = sum(len(emitting.dump(m)) for m in manifests) / count / 1024
    pyyaml_us = min(_time_per_document(_pyyaml, manifests) for _ in range(3))
    colds = []
    for _ in range(3):
        emitting._cached_value_text.cache_clear()
        emitting._cached_key_text.cache_clear()
        colds.append(_time_per_document(emitting.dump, manifests))
    cold_us = min(colds)
    warm_us = min(_time_per_document(emitting.dump, manifests) for _ in range(3))
    result = {
        "documents": count,
        "average_kb": round(average_kb, 2),
        "pyyaml_c_us": round(pyyaml_us, 1),
        "emitting_cold_us": round(cold_us, 1),
        "emitting_warm_us": round(warm_us, 1),
        "speedup_cold": round(pyyaml_us / cold_us, 2),
        "speedup_warm": round(pyyaml_us / warm_us, 2),
    }
    print(f"{count} documents, {average_kb:.2f} KB each")
    print(f"PyYAML CSafeDumper      {pyyaml_us:8.1f} µs/doc")
    print(f"emitting.dump (cold)    {cold_us:8.1f} µs/doc   {pyyaml_us / cold_us:5.2f}x faster")
    print(f"emitting.dump (warm)    {warm_us:8.1f} µs/doc   {pyyaml_us / warm_us:5.2f}x faster")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
