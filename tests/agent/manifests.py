"""Rendered manifests for agent tests, as YAML text, in the layout of docs/design.md §4."""

from __future__ import annotations

from typing import Any

import yaml

from nova_gitops.api import labels as nova_labels


def dump(body: dict[str, Any]) -> str:
    return str(yaml.dump(body, Dumper=yaml.CSafeDumper, sort_keys=False))


def rendered(cluster: str, body: dict[str, Any], group: str = "demo-policy-1a2b3c4d") -> dict[str, Any]:
    metadata = body.setdefault("metadata", {})
    metadata.setdefault("labels", {})[nova_labels.TARGET_CLUSTER] = cluster
    metadata.setdefault("annotations", {})[nova_labels.SCHEDULE_GROUP] = group
    return body


def configmap(cluster: str, namespace: str, name: str, value: str = "1") -> dict[str, Any]:
    return rendered(
        cluster,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace},
            "data": {"v": value},
        },
    )


def deployment(
    cluster: str, namespace: str, name: str, replicas: int = 1, cpu: str = "100m"
) -> dict[str, Any]:
    return rendered(
        cluster,
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {
                        "containers": [
                            {
                                "name": "app",
                                "image": "registry.example/app:1",
                                "resources": {"requests": {"cpu": cpu}},
                            }
                        ]
                    },
                },
            },
        },
    )


def widget_crd(cluster: str, group: str = "example.com") -> dict[str, Any]:
    return rendered(
        cluster,
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"widgets.{group}"},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {
                    "plural": "widgets",
                    "singular": "widget",
                    "kind": "Widget",
                    "listKind": "WidgetList",
                },
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "properties": {
                                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}
                                },
                            }
                        },
                    }
                ],
            },
        },
    )


def widget(
    cluster: str, namespace: str, name: str, size: Any = 1, group: str = "example.com"
) -> dict[str, Any]:
    return rendered(
        cluster,
        {
            "apiVersion": f"{group}/v1",
            "kind": "Widget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"size": size},
        },
    )


EMPTY_KUSTOMIZATION = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"


def layout(cluster: str, *bodies: dict[str, Any]) -> dict[str, str | None]:
    """Files of ``clusters/<cluster>/`` for these objects (one per file, as the renderer lays them out), and a
    ``kustomization.yaml``, which the renderer writes in every cluster's directory: removing the objects'
    files later leaves an empty cluster, not a missing directory (an error, docs/agent.md). The agent never
    reads it, so it lists nothing."""
    files: dict[str, str | None] = {f"clusters/{cluster}/kustomization.yaml": EMPTY_KUSTOMIZATION}
    for body in bodies:
        namespace = body["metadata"].get("namespace") or "_cluster"
        files[f"clusters/{cluster}/{namespace}/{body['kind'].lower()}-{body['metadata']['name']}.yaml"] = (
            dump(body)
        )
    return files
