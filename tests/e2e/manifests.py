"""The source repository of the loop's tour, as files: a small platform (a ConfigMap and a node agent that
every cluster runs) and a shop in two colours, each colour a group placed whole on one cluster.

The sizes are chosen so the story is deterministic on two clusters of two 4-cpu nodes: each colour asks for
1 cpu, so the first colour takes one cluster and the second the other (most free capacity wins); when wlc-2's
nodes fill up, its colour fits only on wlc-1. Deleting that colour from wlc-2 prunes 2 of its 7 objects,
within the agent's 30% mass-prune guard.
"""

from __future__ import annotations

PLATFORM_POLICY = """\
# Every cluster runs the platform (Duplicate spread).
apiVersion: policy.elotl.co/v1alpha1
kind: SchedulePolicy
metadata:
  name: platform-everywhere
spec:
  groupBy:
    labelKey: app.kubernetes.io/part-of
  spreadConstraints:
    spreadMode: Duplicate
    topologyKey: kubernetes.io/metadata.name
  resourceSelectors:
    labelSelectors:
    - matchLabels:
        app.kubernetes.io/part-of: platform
"""

SHOP_POLICY = """\
# Each colour of the shop lands whole on the cluster with the most room (group scheduling).
apiVersion: policy.elotl.co/v1alpha1
kind: SchedulePolicy
metadata:
  name: shop
spec:
  namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: shop
  groupBy:
    labelKey: color
  resourceSelectors:
    labelSelectors:
    - matchLabels:
        app.kubernetes.io/part-of: shop
"""

PLATFORM = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: platform-settings
  namespace: platform
  labels: {app.kubernetes.io/part-of: platform}
data:
  log-level: info
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: node-agent
  namespace: platform
  labels: {app.kubernetes.io/part-of: platform}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: node-agent-config
  namespace: platform
  labels: {app.kubernetes.io/part-of: platform}
data:
  interval: 30s
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: node-agent
  namespace: platform
  labels: {app.kubernetes.io/part-of: platform}
spec:
  selector:
    matchLabels: {app: node-agent}
  template:
    metadata:
      labels: {app: node-agent}
    spec:
      serviceAccountName: node-agent
      containers:
      - name: agent
        image: registry.example/node-agent:1.0
        resources:
          requests: {cpu: 10m, memory: 16Mi}
"""


def shop_colour(colour: str, replicas: int = 2, cpu: str = "500m", image_tag: str = "1.0") -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {colour}-web
  namespace: shop
  labels: {{app.kubernetes.io/part-of: shop, color: {colour}}}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {colour}-web}}
  template:
    metadata:
      labels: {{app: {colour}-web, color: {colour}}}
    spec:
      containers:
      - name: web
        image: registry.example/shop-web:{image_tag}
        resources:
          requests: {{cpu: {cpu}, memory: 256Mi}}
"""


APPS = {
    "apps/platform.yaml": PLATFORM,
    "apps/shop-blue.yaml": shop_colour("blue"),
    "apps/shop-green.yaml": shop_colour("green"),
}
POLICIES = {
    "policies/platform.yaml": PLATFORM_POLICY,
    "policies/shop.yaml": SHOP_POLICY,
}
