"""Label and annotation keys of the Nova API, shared by the scheduler, the renderer and the agent."""

from typing import Final

METADATA_NAME: Final = "kubernetes.io/metadata.name"
"""Every Namespace and Cluster implicitly carries its own name under this label."""

TARGET_CLUSTER: Final = "nova.elotl.co/target-cluster"
"""Label on every rendered object: the cluster it was placed on."""
RENDERED_REPOSITORY: Final = "gitops.nova.elotl.co/repository"
"""Label nova-agent stamps on every object it applies: a short hash of the rendered repository's URL and the
cluster's directory in it (which fleet applied the object). Renders must not set it: the agent overrides it,
and never adopts nor deletes a live object carrying another repository's value."""
MATCHING_POLICY: Final = "nova.elotl.co/matching-policy"
"""Annotation on rendered objects (label on ScheduleGroups): the SchedulePolicy that placed it."""
SCHEDULE_GROUP: Final = "nova.elotl.co/schedule-group"
"""Annotation on rendered objects: the ScheduleGroup the object belongs to."""
TARGET_CLUSTERS: Final = "nova.elotl.co/target-clusters"
"""Annotation ``c1,c2`` on a control-plane object or ScheduleGroup spread over several clusters (a label value
cannot hold a list)."""
SCHEDULE: Final = "nova.elotl.co/schedule"
"""Label ``"true"`` on objects an external orchestrator applied (delegated mode)."""

CLUSTER_PIN: Final = "nova.elotl.co/cluster"
"""Annotation users put on a workload to pin it to one cluster; beats any policy."""
SPREAD_ONTO: Final = "nova.elotl.co/spread-onto"
"""Annotation ``"c1,c2[::Duplicate]"`` to spread a workload over named clusters; beats any policy."""

CORDONED: Final = "nova.elotl.co/cordoned"
"""Label ``"true"`` on a Cluster (``nova-gitops cordon``): no new or moved group is placed there; groups the
previous render placed there stay, and pins and spread-onto annotations that name it are honoured."""

CLUSTER_PROVIDER: Final = "nova.elotl.co/cluster.provider"
CLUSTER_REGION: Final = "nova.elotl.co/cluster.region"
CLUSTER_ZONE: Final = "nova.elotl.co/cluster.zone"
CLUSTER_VERSION: Final = "nova.elotl.co/cluster.version"

LUNA_MANAGED: Final = "elotl-luna"
"""Pod-template label that hands pods to the Luna autoscaler (added with --luna-management)."""

POLICY_API_VERSION: Final = "policy.elotl.co/v1alpha1"
CLUSTER_API_VERSION: Final = "cluster.elotl.co/v1alpha1"
PLACEMENT_API_VERSION: Final = "gitops.nova.elotl.co/v1alpha1"
