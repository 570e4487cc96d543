"""The validated contents of a source: policies, clusters and workloads, classified and checked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import itemgetter

from nova_gitops.api import (
    fieldlines,
    kinds,
    labels,
    placeholders,
    podshapes,
    rollouts,
    selectors,
)
from nova_gitops.api.classifying import (
    OBJECT_CLAIM,
    Classified,
    ClassifiedMemo,
    ObjectKeyFields,
    Role,
    classify_document,
    key_fields,
)
from nova_gitops.api.clusters import Cluster
from nova_gitops.api.objects import (
    Document,
    Manifest,
    ObjectKey,
    cluster_relation_warnings,
)
from nova_gitops.api.policies import SchedulePolicy
from nova_gitops.api.problems import (
    Problem,
    SourceLocation,
    excerpt,
    quotable_lines,
    quoted_line,
    shortened,
)
from nova_gitops.api.unmatchedpolicies import unmatched_policy_warnings
from nova_gitops.errors import InputError


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
    pod_shapes: Mapping[kinds.GroupKind, podshapes.PodControllerShape] = field(
        default_factory=lambda: podshapes.BUILTIN_SHAPES
    )
    """Where the pods of kinds not shaped like a Deployment live: the built-in shapes, and the source's
    PodControllerShape documents (which are read, never rendered)."""
    rollout: rollouts.RolloutStrategy | None = None
    """The source's RolloutStrategy (at most one; read, never rendered); None: every cluster is released at
    once, as without rollouts (docs/rollouts.md)."""


def with_warnings(source_set: SourceSet, found: Sequence[Problem]) -> SourceSet:
    """``source_set`` with the warnings among ``found`` (what reading its files said: a linked directory,
    say) added to its own, sorted by place as the load sorts them; ``source_set`` itself when none."""
    extra = [problem for problem in found if not problem.is_error]
    if not extra:
        return source_set
    merged = sorted(dict.fromkeys((*extra, *source_set.warnings)), key=lambda problem: problem.location)
    return replace(source_set, warnings=tuple(merged))


def build_source_set(
    documents: Sequence[Document],
    *,
    texts: Mapping[str, str] | None = None,
    namespace: str | None = None,
    memo: ClassifiedMemo | None = None,
) -> SourceSet:
    """Classify and validate documents; raise ``errors.InputError`` listing every problem.

    SchedulePolicies (``policy.elotl.co/*``) and Clusters (``cluster.elotl.co/*``) are parsed, and so are our
    own PodControllerShape and RolloutStrategy documents (at most one strategy); ScheduleGroups
    are ignored with a warning (the scheduler makes them); everything else is a workload. ``texts`` (file name
    → YAML text) is optional: when given, each problem that names a field is pointed at that field's line
    instead of its document's first line. The error lists errors and warnings, sorted by file and line.

    ``namespace`` is ``kubectl apply -n``'s: the namespace of namespaced objects that name none (``default``
    when None); an explicit ``metadata.namespace`` always wins, and cluster-scoped kinds are untouched. It
    also makes a custom resource of an unknown kind namespaced (``kinds.scope_of``).

    ``memo`` hands back each document's ``Classified`` from an earlier load and is given the new ones: a
    document is classified again only when it is new or what its classification depends on changed (the
    checks across documents — CRD scopes, duplicates, the RolloutStrategy count, unmatched policies — always
    run). The result is the same with or without it.
    """
    if namespace is not None and not selectors.is_dns1123_label(namespace):
        raise ValueError(f"namespace {namespace!r} is not a DNS-1123 label")
    problems: list[Problem] = []
    crds = kinds.crd_scopes(documents, problems)
    found = _Found(problems)
    for document in documents:
        classified = memo.get(document) if memo is not None else None
        if classified is None or not _still_holds(classified, document, crds, namespace):
            classified = classify_document(document, crds, namespace)
            if memo is not None:
                memo.put(document, classified)
        found.add(document, classified)
    return found.source_set(texts)


@dataclass(slots=True)
class _Found:
    """What ``build_source_set`` collects of a source's documents, one by one, and the problems found."""

    problems: list[Problem]
    policies: list[SchedulePolicy] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    workloads: list[Manifest] = field(default_factory=list)
    workload_keys: list[ObjectKeyFields] = field(default_factory=list)  # the key each one claims
    shapes: dict[kinds.GroupKind, podshapes.PodControllerShape] = field(
        default_factory=lambda: dict(podshapes.BUILTIN_SHAPES)
    )
    strategies: list[rollouts.RolloutStrategy] = field(default_factory=list)
    seen: dict[tuple[str, object], SourceLocation] = field(default_factory=dict)

    def add(self, document: Document, classified: Classified) -> None:
        """One document's classification, checked against the documents before it for duplicates."""
        role, value, claim = classified.role, classified.value, classified.claim
        duplicate = False
        if claim is not None and role is not Role.SHAPE:  # a shape's duplicate is told after its problems
            duplicate = _note_duplicate(claim[0], claim[1], document, self.seen, self.problems)
        self.problems += classified.problems
        if value is None:
            return
        if role is Role.WORKLOAD:
            if not duplicate:
                self.workloads.append(value)  # type: ignore[arg-type]
                key = claim[1] if claim is not None else key_fields(value.key)  # type: ignore[union-attr]
                self.workload_keys.append(key)  # type: ignore[arg-type]
        elif role is Role.POLICY:
            self.policies.append(value)  # type: ignore[arg-type]
        elif role is Role.CLUSTER:
            self.clusters.append(value)  # type: ignore[arg-type]
        elif role is Role.SHAPE:
            shape: podshapes.PodControllerShape = value  # type: ignore[assignment]
            _note_duplicate(podshapes.KIND, (shape.group, shape.kind), document, self.seen, self.problems)
            self.shapes[(shape.group, shape.kind)] = shape
        elif role is Role.STRATEGY:
            self.strategies.append(value)  # type: ignore[arg-type]

    def source_set(self, texts: Mapping[str, str] | None) -> SourceSet:
        """The source set, after the checks across documents; raises ``InputError`` listing every problem
        when one is an error."""
        problems = self.problems + _extra_strategies(self.strategies)
        namespace_labels = _namespace_labels(self.workloads)
        if not any(problem.is_error for problem in problems):  # with errors, some objects were not read
            problems += unmatched_policy_warnings(self.policies, self.workloads, namespace_labels)
        problems += cluster_relation_warnings(self.workloads)  # stripped by the render: said once
        if texts:
            problems = _point_at_fields(problems, texts)
        problems = placeholders.noted_all(problems)  # a template's ${VAR} says so first (issue 22)
        problems.sort(key=lambda problem: problem.location)
        if any(problem.is_error for problem in problems):
            raise InputError(problems)
        # by key (what ObjectKey's order is), compared as plain tuples: cheaper than ObjectKeys
        ordered = sorted(zip(self.workload_keys, self.workloads, strict=True), key=itemgetter(0))
        return SourceSet(
            policies=tuple(sorted(self.policies, key=lambda policy: policy.name)),
            clusters=tuple(sorted(self.clusters, key=lambda cluster: cluster.name)),
            workloads=tuple(manifest for _, manifest in ordered),
            namespace_labels=namespace_labels,
            warnings=tuple(problems),
            pod_shapes=self.shapes,
            rollout=self.strategies[0] if self.strategies else None,
        )


def _still_holds(
    classified: Classified, document: Document, crds: Mapping[kinds.GroupKind, bool], namespace: str | None
) -> bool:
    """Whether a kept classification is what classifying ``document`` now would give: the same default
    namespace, and for a workload the same CRD scope of its kind."""
    if classified.namespace != namespace:
        return False
    if classified.role is not Role.WORKLOAD:
        return True
    if classified.kind_key is None:
        return False
    return (crds.get(classified.kind_key) if crds else None) == classified.crd_scope


def _extra_strategies(found: Sequence[rollouts.RolloutStrategy]) -> list[Problem]:
    """An error at every RolloutStrategy after the first: two would order the same clusters twice, and
    picking one silently would roll out differently from what a reviewer of the other one read."""
    if len(found) < 2:
        return []
    first = found[0]
    return [
        Problem(
            extra.location or first.location or SourceLocation("", 0),
            f"a source holds at most one RolloutStrategy: {first.name} is at {first.location}",
            "metadata.name",
            subject=f"{rollouts.KIND} {extra.name}",
        )
        for extra in found[1:]
    ]


def _note_duplicate(
    what: str,
    key: object,
    document: Document,
    seen: dict[tuple[str, object], SourceLocation],
    problems: list[Problem],
) -> bool:
    """True (with an error naming both places) when ``key`` was already defined; else remember it."""
    if key is None:
        return False
    location = document.location
    first = seen.setdefault((what, key), location)
    if first is location or first == location:  # ``is``: the usual answer, without a dataclass __eq__
        return False
    if what == OBJECT_CLAIM and isinstance(key, tuple):
        key = ObjectKey(*key)  # named as ObjectKey shows itself: Kind.group/namespace/name
    shown = f"{what} {excerpt(key)}" if isinstance(key, str) else f"{what} {shortened(str(key))}"
    problems.append(
        Problem(document.location, f"duplicate {shown}: also defined at {first}", "metadata.name")
    )
    return True


def _namespace_labels(workloads: Sequence[Manifest]) -> dict[str, Mapping[str, str]]:
    """Each source Namespace's labels, with the implied ``kubernetes.io/metadata.name``."""
    return {
        manifest.name: {**manifest.labels, labels.METADATA_NAME: manifest.name}
        for manifest in workloads
        if manifest.kind == "Namespace" and manifest.group == ""
    }


def _point_at_fields(problems: list[Problem], texts: Mapping[str, str]) -> list[Problem]:
    """Problems that name a field, moved to that field's line (each file composed once, only if needed)."""
    locators: dict[str, fieldlines.FieldLocator] = {}
    lines: dict[str, list[str] | None] = {}
    pointed: list[Problem] = []
    for problem in problems:
        text = texts.get(problem.location.file)
        if problem.field is None or text is None:
            pointed.append(problem)
            continue
        locator = locators.get(problem.location.file)
        if locator is None:
            locator = locators[problem.location.file] = fieldlines.FieldLocator(text)
        line, column = locator.position_of(problem.location.line, problem.field)
        if problem.location.file not in lines:
            lines[problem.location.file] = quotable_lines(text)
        quoted = quoted_line(lines[problem.location.file], line)
        at = replace(problem.location, line=line)
        pointed.append(replace(problem, location=at, column=column, quoted=quoted))
    return pointed
