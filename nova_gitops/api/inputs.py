"""The validated contents of a source: policies, clusters and workloads, classified and checked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from operator import itemgetter
from typing import Any, Protocol

from nova_gitops.api import (
    clusters,
    kinds,
    labels,
    loading,
    names,
    placeholders,
    podshapes,
    policies,
    rollouts,
    secrets,
    selectors,
)
from nova_gitops.api.clusters import Cluster, is_cluster_name
from nova_gitops.api.objects import (
    Document,
    Manifest,
    ObjectKey,
    cluster_relation_warnings,
    split_api_version,
)
from nova_gitops.api.policies import SchedulePolicy, SpreadMode
from nova_gitops.api.problems import (
    Problem,
    Severity,
    SourceLocation,
    excerpt,
    name_subject,
    quotable_lines,
    quoted_line,
    shortened,
)
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


Classification = (
    SchedulePolicy | Cluster | podshapes.PodControllerShape | rollouts.RolloutStrategy | Manifest | None
)


class Role(Enum):
    """What a document is to a source set."""

    POLICY = "SchedulePolicy"
    CLUSTER = "Cluster"
    SHAPE = "PodControllerShape"
    STRATEGY = "RolloutStrategy"
    WORKLOAD = "workload"
    IGNORED = "ignored"  # a ScheduleGroup (warned about), or a document without apiVersion and kind


@dataclass(frozen=True, slots=True)
class Classified:
    """What ``build_source_set`` makes of one document read alone: its role, the object it validates to
    (None when invalid or ignored), the identity it claims for the duplicate check, and its own problems
    (not yet pointed at their fields' lines).

    It depends on the document, the default namespace (``namespace``, as given to ``build_source_set``) and,
    for a workload, the scope a CRD of the source gives its kind (``crd_scope``: ``crds.get((group, kind))``
    when it was read) — nothing else of the source. So a cache that keeps it with the document's bytes can
    hand it back (``ClassifiedMemo``) and ``build_source_set`` takes it as long as those two still hold,
    which is what lets a load validate only the files that changed."""

    role: Role
    value: Classification
    claim: tuple[str, object] | None
    """(what, key) a second definition of which is a duplicate; an object's key is its ``ObjectKey``'s
    fields as a plain tuple (``ObjectKeyFields``), which is hashed and compared at C speed."""
    problems: tuple[Problem, ...]
    namespace: str | None = None
    crd_scope: bool | None = None
    kind_key: kinds.GroupKind | None = None  # a workload's (group, kind), whose CRD scope ``crd_scope`` is


class ClassifiedMemo(Protocol):
    """Classifications kept from earlier loads, by document (``sources.parsecache`` keeps them on disk)."""

    def get(self, document: Document) -> Classified | None: ...

    def put(self, document: Document, classified: Classified) -> None: ...


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
    found_policies: list[SchedulePolicy] = []
    found_clusters: list[Cluster] = []
    workloads: list[Manifest] = []
    workload_keys: list[tuple[str, str, str, str]] = []  # the key each one claims: its manifest's key
    shapes: dict[kinds.GroupKind, podshapes.PodControllerShape] = dict(podshapes.BUILTIN_SHAPES)
    strategies: list[rollouts.RolloutStrategy] = []
    seen: dict[tuple[str, object], SourceLocation] = {}
    for document in documents:
        classified = memo.get(document) if memo is not None else None
        if classified is None or not _still_holds(classified, document, crds, namespace):
            classified = classify_document(document, crds, namespace)
            if memo is not None:
                memo.put(document, classified)
        role, value, claim = classified.role, classified.value, classified.claim
        duplicate = False
        if claim is not None and role is not Role.SHAPE:  # a shape's duplicate is told after its problems
            duplicate = _note_duplicate(claim[0], claim[1], document, seen, problems)
        problems += classified.problems
        if value is None:
            continue
        if role is Role.WORKLOAD:
            if not duplicate:
                workloads.append(value)  # type: ignore[arg-type]
                key = claim[1] if claim is not None else _key_fields(value.key)  # type: ignore[union-attr]
                workload_keys.append(key)  # type: ignore[arg-type]
        elif role is Role.POLICY:
            found_policies.append(value)  # type: ignore[arg-type]
        elif role is Role.CLUSTER:
            found_clusters.append(value)  # type: ignore[arg-type]
        elif role is Role.SHAPE:
            shape: podshapes.PodControllerShape = value  # type: ignore[assignment]
            _note_duplicate(podshapes.KIND, (shape.group, shape.kind), document, seen, problems)
            shapes[(shape.group, shape.kind)] = shape
        elif role is Role.STRATEGY:
            strategies.append(value)  # type: ignore[arg-type]
    problems += _extra_strategies(strategies)
    namespace_labels = _namespace_labels(workloads)
    if not any(problem.is_error for problem in problems):  # with errors, some objects were not read
        problems += unmatched_policy_warnings(found_policies, workloads, namespace_labels)
    problems += cluster_relation_warnings(workloads)  # stripped by the render: said once, not per object
    if texts:
        problems = _point_at_fields(problems, texts)
    problems = placeholders.noted_all(problems)  # a template's ${VAR} says so first (issue 22)
    problems.sort(key=lambda problem: problem.location)
    if any(problem.is_error for problem in problems):
        raise InputError(problems)
    # by key (what ObjectKey's order is), compared as plain tuples: ~0.1 s less at 30,000 objects
    ordered = sorted(zip(workload_keys, workloads, strict=True), key=itemgetter(0))
    workloads = [manifest for _, manifest in ordered]
    return SourceSet(
        policies=tuple(sorted(found_policies, key=lambda policy: policy.name)),
        clusters=tuple(sorted(found_clusters, key=lambda cluster: cluster.name)),
        workloads=tuple(workloads),
        namespace_labels=namespace_labels,
        warnings=tuple(problems),
        pod_shapes=shapes,
        rollout=strategies[0] if strategies else None,
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


def classify_document(
    document: Document, crds: Mapping[kinds.GroupKind, bool], namespace: str | None = None
) -> Classified:
    """What ``document`` is, read alone (``Classified``); ``crds`` are the source's CRD scopes and
    ``namespace`` is ``build_source_set``'s."""
    defaults = _Defaults(namespace or "default", namespace is not None)
    problems: list[Problem] = []
    body = document.body if isinstance(document.body, dict) else {}
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        problems.append(Problem(document.location, "apiVersion and kind are required and must be text"))
        return Classified(Role.IGNORED, None, None, tuple(problems), namespace)
    group = split_api_version(api_version)[0]
    if group == POLICY_GROUP and kind == "SchedulePolicy":
        policy = policies.parse_policy(document, problems)
        return Classified(Role.POLICY, policy, _claim("SchedulePolicy", body), tuple(problems), namespace)
    if group == CLUSTER_GROUP and kind == "Cluster":
        cluster = clusters.parse_cluster(document, problems)
        return Classified(Role.CLUSTER, cluster, _claim("Cluster", body), tuple(problems), namespace)
    if podshapes.is_shape_document(group, kind):
        shape = podshapes.parse_shape(document, problems)
        return Classified(Role.SHAPE, shape, None, tuple(problems), namespace)
    if rollouts.is_strategy_document(group, kind):
        strategy = rollouts.parse_strategy(document, problems)
        return Classified(Role.STRATEGY, strategy, None, tuple(problems), namespace)
    if group == POLICY_GROUP and kind == "ScheduleGroup":
        message = "ScheduleGroup objects are made by the scheduler, not read from the source; ignored"
        problems.append(Problem(document.location, message, severity=Severity.WARNING))
        return Classified(Role.IGNORED, None, None, tuple(problems), namespace)
    if group in kinds.NOVA_CONTROL_PLANE_GROUPS:  # RecoveryPlan, ReceivedAlert: Nova's, not a workload's
        problems.append(Problem(document.location, _novas_own(group, kind), severity=Severity.WARNING))
        name_subject(problems, 0, kind, _raw_name(body))
        return Classified(Role.IGNORED, None, None, tuple(problems), namespace)
    key = _raw_key(body, group, kind, crds, defaults)
    manifest = _parse_workload(document, api_version, kind, crds, problems, defaults)
    if (raw_name := _raw_name(body)) is not None:  # without a name, the problem is its name
        name_subject(problems, 0, kind, raw_name)
    claim = None if key is None else (OBJECT_CLAIM, key)
    crd_scope = crds.get((group, kind))
    return Classified(Role.WORKLOAD, manifest, claim, tuple(problems), namespace, crd_scope, (group, kind))


OBJECT_CLAIM = "object"  # what a workload claims (``Classified.claim``)


def _novas_own(group: str, kind: str) -> str:
    """The warning at an object of Nova's own API groups that we do not read (issue 22, item 4)."""
    return (
        f"{kind}.{group} is Nova's own kind: left to Nova's control plane; a renderer does not act on it "
        f"(nor sends it to a workload cluster)"
    )


def _claim(what: str, body: Mapping[str, Any]) -> tuple[str, object] | None:
    name = _raw_name(body)
    return None if name is None else (what, name)


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


_ABSENT = object()  # no label at a key (unlike any label value)
_NO_LABELS: Mapping[str, str] = {}

UNMATCHED_POLICY = (
    "matches no object in the source: its namespaceSelector and resourceSelectors select nothing here"
)


def unmatched_policy_warnings(
    found: Sequence[SchedulePolicy],
    workloads: Sequence[Manifest],
    namespace_labels: Mapping[str, Mapping[str, str]],
) -> list[Problem]:
    """A warning at each policy that selects no workload: most often a selector with a typo in a label or
    a namespace, which would otherwise leave its objects unscheduled without naming the policy. An object
    that a pin or spread-onto annotation places still counts as selected.

    Whether a policy selects an object depends only on its kind, apiVersion, namespace and its labels at the
    keys some selector names (the planner's Matcher relies on the same), so each policy is tried on one
    object per such signature: a few hundred for thousands of workloads, instead of every object for every
    policy that selects nothing (0.4 s at the reference fleet)."""
    keys = policies.selector_label_keys(found)
    absent = (_ABSENT,) * len(keys)
    alike: dict[object, Manifest] = {}
    for manifest in workloads:
        # policies.match_signature's partition (a label at a key: its value, else _ABSENT), looked up by
        # map rather than a generator, and Manifest.labels read without its two properties: ~1.5 µs less
        # an object, more than half of this function at 6,000 objects
        metadata = manifest.body.get("metadata")
        labels_ = metadata.get("labels") if isinstance(metadata, dict) else None
        if not isinstance(labels_, dict):
            labels_ = _NO_LABELS
        signature = (
            manifest.kind,
            manifest.api_version,
            manifest.namespaced,
            manifest.namespace,
            tuple(map(labels_.get, keys, absent)),
        )
        try:
            alike.setdefault(signature, manifest)
        except TypeError:  # a label value that cannot be hashed: the object stands for itself
            alike[id(manifest)] = manifest
    candidates = _Candidates(list(alike.values()))
    return [
        Problem(policy.location, UNMATCHED_POLICY, None, Severity.WARNING, f"SchedulePolicy {policy.name}")
        for policy in found
        if not any(policies.selects(policy, manifest, namespace_labels) for manifest in candidates.of(policy))
    ]


class _Candidates:
    """The objects a policy could select, narrowed by its selectors' ``In`` requirements: an object whose
    label at the key is none of the values cannot match that selector. With policies that each select one
    shard of a large source, trying every kind of object on every policy costs policies × kinds of object
    (1.5 s at five times the reference fleet); this tries about the ones each policy selects."""

    def __init__(self, manifests: Sequence[Manifest]) -> None:
        self.every = manifests
        self._by_label: dict[tuple[str, object], list[Manifest]] = {}
        self._indexed: set[str] = set()

    def of(self, policy: SchedulePolicy) -> Sequence[Manifest]:
        selectors_ = policy.resource_selectors.label_selectors
        if not selectors_:
            return self.every
        chosen: list[Manifest] = []
        for selector in selectors_:
            narrowest: list[Manifest] | None = None
            for requirement in selector.requirements:
                if requirement.operator != "In":
                    continue
                found = [
                    m
                    for value in dict.fromkeys(requirement.values)
                    for m in self._with(requirement.key, value)
                ]
                if narrowest is None or len(found) < len(narrowest):
                    narrowest = found
            if narrowest is None:
                return self.every
            chosen += narrowest
        return chosen

    def _with(self, key: str, value: str) -> list[Manifest]:
        if key not in self._indexed:
            self._indexed.add(key)
            for manifest in self.every:
                value_found = manifest.labels.get(key)
                if isinstance(value_found, str):  # what is not text equals no In value
                    self._by_label.setdefault((key, value_found), []).append(manifest)
        return self._by_label.get((key, value), [])


@dataclass(frozen=True, slots=True)
class _Defaults:
    namespace: str  # of namespaced objects that name none
    given: bool  # whether -n gave it


POLICY_GROUP = split_api_version(labels.POLICY_API_VERSION)[0]
CLUSTER_GROUP = split_api_version(labels.CLUSTER_API_VERSION)[0]


def _raw_name(body: Mapping[str, Any]) -> str | None:
    metadata = body.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) and name else None


ObjectKeyFields = tuple[str, str, str, str]
"""An ``ObjectKey``'s group, kind, namespace and name: what an object claims (``Classified.claim``)."""


def _key_fields(key: ObjectKey) -> ObjectKeyFields:
    return (key.group, key.kind, key.namespace, key.name)


def _raw_key(
    body: Mapping[str, Any], group: str, kind: str, crds: Mapping[kinds.GroupKind, bool], defaults: _Defaults
) -> ObjectKeyFields | None:
    """The key an object claims, read before validation so that duplicates are reported even when invalid."""
    name = _raw_name(body)
    metadata = body.get("metadata")
    namespace = metadata.get("namespace") if isinstance(metadata, dict) else None
    if name is None:
        return None
    namespace = namespace if isinstance(namespace, str) else ""
    if kinds.is_namespaced(group, kind, bool(namespace), crds, namespace_given=defaults.given):
        return (group, kind, namespace or defaults.namespace, name)
    return (group, kind, "", name)


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
    locators: dict[str, loading.FieldLocator] = {}
    lines: dict[str, list[str] | None] = {}
    pointed: list[Problem] = []
    for problem in problems:
        text = texts.get(problem.location.file)
        if problem.field is None or text is None:
            pointed.append(problem)
            continue
        locator = locators.get(problem.location.file)
        if locator is None:
            locator = locators[problem.location.file] = loading.FieldLocator(text)
        line, column = locator.position_of(problem.location.line, problem.field)
        if problem.location.file not in lines:
            lines[problem.location.file] = quotable_lines(text)
        quoted = quoted_line(lines[problem.location.file], line)
        at = replace(problem.location, line=line)
        pointed.append(replace(problem, location=at, column=column, quoted=quoted))
    return pointed


def _parse_workload(
    document: Document,
    api_version: str,
    kind: str,
    crds: Mapping[kinds.GroupKind, bool],
    problems: list[Problem],
    defaults: _Defaults,
) -> Manifest | None:
    """A workload object, checked as kube-apiserver would check what makes it a file and a placement."""
    check = names.Fields(document.location, problems)
    group, version = split_api_version(api_version)
    if not version or "/" in group or " " in api_version:
        check.error(
            "apiVersion", f"{excerpt(api_version)} is not group/version (apps/v1) or a core version (v1)"
        )
    body = document.body
    metadata = check.mapping(body.get("metadata"), "metadata", required=True) or {}
    check.unknown(metadata, "metadata", names.OBJECT_META_FIELDS)
    name = _object_name(metadata, group, kind, check)
    raw_namespace = metadata.get("namespace")
    namespace = check.text(raw_namespace, "metadata.namespace") or ""
    if namespace and not selectors.is_dns1123_label(namespace):
        check.error(
            "metadata.namespace", f"{excerpt(namespace)} is not a valid namespace: {names.DNS1123_LABEL_RULE}"
        )
    scope = kinds.scope_of(group, kind, bool(namespace), crds, namespace_given=defaults.given)
    namespaced = scope.namespaced
    if namespace and not namespaced:
        check.warning("metadata.namespace", f"{kind} is cluster-scoped; the namespace is ignored")
    check.labels(metadata.get("labels"), "metadata.labels")
    annotations = check.annotations(metadata.get("annotations"), "metadata.annotations")
    _check_placement_annotations(annotations, check)
    if group == "" and kind == "Secret":
        secrets.check_secret_data(body, check)
    if not check.ok or name is None:
        return None
    resolved = (namespace or defaults.namespace) if namespaced else ""
    note = kinds.assumption(scope, group, kind)
    return Manifest(body, document.location, api_version, kind, name, resolved, namespaced, note)


_RBAC_GROUP = "rbac.authorization.k8s.io"


def _object_name(metadata: Mapping[str, Any], group: str, kind: str, check: names.Fields) -> str | None:
    """metadata.name, valid for its kind: a DNS-1123 label for a Namespace, a DNS-1035 label for a Service,
    a path segment for RBAC objects (``system:aggregate-to-view``), a DNS-1123 subdomain for the rest."""
    if metadata.get("name") is None and metadata.get("generateName") is not None:
        check.error(
            "metadata.name", "required: generateName is not supported, a GitOps object needs a stable name"
        )
        return None
    name = check.text(metadata.get("name"), "metadata.name", required=True)
    if name is None:
        return None
    if group == "" and kind == "Namespace":
        valid, rule = selectors.is_dns1123_label(name), names.DNS1123_LABEL_RULE
    elif group == "" and kind == "Service":
        valid, rule = names.is_dns1035_label(name), names.DNS1035_LABEL_RULE
    elif group == _RBAC_GROUP:
        reason = names.path_segment_problem(name) if name else "must not be empty"
        valid, rule = reason is None, reason or ""
    else:
        valid, rule = selectors.is_dns1123_subdomain(name), names.DNS1123_SUBDOMAIN_RULE
    if not valid:
        check.error("metadata.name", f"{excerpt(name)} is not a valid {kind} name: {rule}")
        return None
    if group == "" and kind == "Namespace" and name in names.SYSTEM_NAMESPACES:
        check.error(
            "metadata.name",
            f"namespace {name!r} belongs to the cluster: nova-gitops never applies or deletes it, so the "
            "source must not define it (remove this Namespace; a policy's namespaceSelector sees it with "
            f"only the label {labels.METADATA_NAME}={name})",
        )
        return None
    return name


def _check_placement_annotations(annotations: Mapping[str, str], check: names.Fields) -> None:
    """Syntax of Nova's pin and spread-onto annotations (whether the clusters exist is the planner's call)."""
    pin_field = names.child("metadata.annotations", labels.CLUSTER_PIN)
    spread_field = names.child("metadata.annotations", labels.SPREAD_ONTO)
    pin = annotations.get(labels.CLUSTER_PIN)
    if pin is not None and not is_cluster_name(pin.strip()):
        check.error(pin_field, f"{excerpt(pin)} is not a cluster name: {names.DNS1123_SUBDOMAIN_RULE}")
    spread = annotations.get(labels.SPREAD_ONTO)
    if spread is None:
        return
    try:
        clusters_named, _ = parse_spread_onto(spread)
    except ValueError as error:
        check.error(spread_field, str(error))
        return
    repeated = sorted({name for name in clusters_named if clusters_named.count(name) > 1})
    if repeated:
        check.warning(spread_field, f"names {', '.join(repeated)} more than once; each cluster gets one copy")
    if pin is not None:
        check.warning(spread_field, f"ignored: {labels.CLUSTER_PIN} is also set, and a pin wins")


def parse_spread_onto(text: str) -> tuple[tuple[str, ...], SpreadMode]:
    """``"c1,c2"`` → ``(("c1", "c2"), "Divide")``; ``"c1,c2::Duplicate"`` → ``(..., "Duplicate")``.
    Raise ValueError saying what is wrong (an empty or invalid cluster name, an unknown mode)."""
    listed, separator, mode_text = text.partition("::")
    mode: SpreadMode = "Divide"
    if separator:
        if mode_text.strip() not in ("Divide", "Duplicate"):
            hint = names.suggestion(mode_text.strip(), ("Divide", "Duplicate"))
            raise ValueError(
                f"unknown mode {excerpt(mode_text.strip())} after '::': use Divide or Duplicate{hint}"
            )
        mode = "Duplicate" if mode_text.strip() == "Duplicate" else "Divide"
    cluster_names = tuple(name.strip() for name in listed.split(","))
    for name in cluster_names:
        if not name:
            raise ValueError(f"{excerpt(text)} has an empty cluster name: write c1,c2 or c1,c2::Duplicate")
        if not is_cluster_name(name):
            raise ValueError(f"{excerpt(name)} is not a cluster name: {names.DNS1123_SUBDOMAIN_RULE}")
    return cluster_names, mode


def pinned_cluster(manifest: Manifest) -> str | None:
    """The cluster named by ``nova.elotl.co/cluster`` (validated when the source was built), or None."""
    pin = manifest.annotations.get(labels.CLUSTER_PIN)
    return pin.strip() if isinstance(pin, str) and pin.strip() else None


def spread_onto(manifest: Manifest) -> tuple[tuple[str, ...], SpreadMode] | None:
    """``(clusters, mode)`` of ``nova.elotl.co/spread-onto``, each cluster once, in the order written; None
    when absent. The annotation was validated when the source was built."""
    text = manifest.annotations.get(labels.SPREAD_ONTO)
    if not isinstance(text, str):
        return None
    cluster_names, mode = parse_spread_onto(text)
    return tuple(dict.fromkeys(cluster_names)), mode
