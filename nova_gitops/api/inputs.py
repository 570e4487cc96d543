"""The validated contents of a source: policies, clusters and workloads, classified and checked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from nova_gitops.api.clusters import Cluster
from nova_gitops.api.objects import Document, Manifest
from nova_gitops.api.policies import SchedulePolicy
from nova_gitops.api.problems import Problem


@dataclass(frozen=True, slots=True)
class SourceSet:
    """Everything a plan needs from a source, validated.

    ``workloads`` holds every object that is neither a SchedulePolicy nor a Cluster (Namespaces and CRDs
    included), sorted by ``ObjectKey``. ``namespace_labels`` maps each Namespace defined in the source to its
    labels (with the implied ``kubernetes.io/metadata.name``). ``warnings`` are problems that do not block.
    """

    policies: tuple[SchedulePolicy, ...]
    clusters: tuple[Cluster, ...]
    workloads: tuple[Manifest, ...]
    namespace_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    warnings: tuple[Problem, ...] = ()


def build_source_set(documents: Sequence[Document]) -> SourceSet:
    """Classify and validate documents; raise ``errors.InputError`` listing every problem."""
    raise NotImplementedError
