"""The placement changes a reviewer proposes from the command line, as edits of the source (docs/editing.md).

Each function checks what it is asked against the source (with "did you mean" for a name it does not know),
says which documents of which files change and how, and what the edited source must show; ``editing.edit``
does the rest (validate in memory, diff, write atomically).

- ``pin``/``unpin``: the ``nova.elotl.co/cluster`` annotation of one object;
- ``move``: that annotation on every object of a ScheduleGroup (single-cluster groups only: a spread group
  is changed by its policy's split);
- ``split``: a Divide policy's ``percentageSplit``, in the shape it has;
- ``cordon``/``uncordon``: the label ``nova.elotl.co/cordoned: "true"`` of a Cluster of the source.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from nova_gitops.api import inputs, labels
from nova_gitops.api.clusters import Cluster
from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import SchedulePolicy
from nova_gitops.edits import changes
from nova_gitops.errors import UserError
from nova_gitops.scheduling import candidates
from nova_gitops.workflows import editing
from nova_gitops.workflows.editing import EditRefused, EditResult, LoadedSource


@dataclass(frozen=True, slots=True)
class Proposal:
    result: EditResult
    notes: tuple[str, ...] = ()  # what the user should know beside the diff


def pin(loaded: LoadedSource, reference: str, cluster_name: str, *, dry_run: bool) -> Proposal:
    """Pin the object ``reference`` names to ``cluster_name``."""
    manifest = find_workload(loaded.source_set, reference)
    cluster = find_cluster(loaded.source_set, cluster_name)
    result = _annotate(loaded, [manifest], cluster.name, dry_run=dry_run)
    notes = (
        (f"cluster {cluster.name} is cordoned: the pin is honoured all the same",) if cluster.cordoned else ()
    )
    return Proposal(result, notes)


def unpin(loaded: LoadedSource, reference: str, *, dry_run: bool) -> Proposal:
    """Remove the pin of the object ``reference`` names; a note when it has none."""
    manifest = find_workload(loaded.source_set, reference)
    result = _annotate(loaded, [manifest], None, dry_run=dry_run)
    pinned = labels.CLUSTER_PIN in manifest.annotations
    return Proposal(result, () if pinned else (f"{reference_of(manifest)} is not pinned",))


def move(loaded: LoadedSource, group_name: str, cluster_name: str, *, dry_run: bool) -> Proposal:
    """Pin every object of the ScheduleGroup ``group_name`` (as the plan of the source names it) to
    ``cluster_name``, which must not be cordoned."""
    groups = {group.name: group for group in loaded.rendered.plan.groups}
    group = groups.get(group_name)
    if group is None:
        raise unknown("ScheduleGroup", group_name, list(groups))
    cluster = find_cluster(loaded.source_set, cluster_name)
    if cluster.cordoned:
        raise EditRefused(
            f"cluster {cluster.name} is cordoned: no group moves there (nova-gitops uncordon {cluster.name} "
            "first, or pin objects one by one)"
        )
    if group.mode != "single":
        raise EditRefused(
            f"ScheduleGroup {group.name} is spread over {', '.join(group.clusters) or 'no cluster'} "
            f"({group.mode}); change its policy's split instead (nova-gitops split {group.policy} ...)"
        )
    members = [item.manifest for item in group.objects]
    return Proposal(_annotate(loaded, members, cluster.name, dry_run=dry_run))


def cordon(loaded: LoadedSource, cluster_name: str, *, cordoned: bool, dry_run: bool) -> Proposal:
    """Label the Cluster ``cluster_name`` of the source cordoned (or remove the label)."""
    cluster = find_cluster(loaded.source_set, cluster_name)
    file = cluster.location.file
    target = changes.DocumentRef("Cluster", cluster.name, cluster.location.line)
    value = "true" if cordoned else None

    def text_edit(text: str) -> str:
        return changes.set_metadata_entry(text, target, "labels", labels.CORDONED, value)

    def check(after: inputs.SourceSet) -> str | None:
        found = next((c for c in after.clusters if c.name == cluster.name), None)
        return (
            None
            if found is not None and found.cordoned == cordoned
            else f"cluster {cluster.name} is unchanged"
        )

    fields = {cluster.location.line: (("metadata", "labels", labels.CORDONED),)}
    change = editing.TextChange(file, f"Cluster {cluster.name}", text_edit, fields)
    result = editing.edit(loaded, [change], check, dry_run=dry_run)
    word = "cordoned" if cordoned else "not cordoned"
    return Proposal(result, () if result.edits else (f"cluster {cluster.name} is {word} already",))


def parse_split(assignments: Sequence[str]) -> list[tuple[str, int]]:
    """``DOMAIN=PERCENT`` arguments as (domain, percent); UserError for a malformed one, a repeated domain or
    a sum other than 100."""
    split: list[tuple[str, int]] = []
    for assignment in assignments:
        domain, equals, percent = assignment.partition("=")
        if not equals or not domain or not percent.strip().isdigit():
            raise UserError(f"{assignment!r} is not CLUSTER_OR_DOMAIN=PERCENT (e.g. us-east-1=70)")
        if int(percent) > 100:
            raise UserError(f"{assignment}: a percentage is from 0 to 100")
        if domain in dict(split):
            raise UserError(f"{domain} is given twice")
        split.append((domain, int(percent)))
    total = sum(percent for _, percent in split)
    if total != 100:
        listed = " + ".join(str(percent) for _, percent in split)
        raise UserError(f"percentages must sum to 100, got {listed} = {total}")
    return split


def split(loaded: LoadedSource, policy_name: str, assignments: Sequence[str], *, dry_run: bool) -> Proposal:
    """Set the Divide policy ``policy_name``'s split to ``assignments`` (``DOMAIN=PERCENT``)."""
    wanted = parse_split(assignments)
    policy = find_policy(loaded.source_set, policy_name)
    if policy.spread is None or policy.spread.mode != "Divide":
        mode = "no spreadConstraints" if policy.spread is None else f"spreadMode {policy.spread.mode}"
        raise EditRefused(
            f"SchedulePolicy {policy.name} has {mode}: a split applies to spreadMode Divide, which divides "
            "replicas over topology domains"
        )
    known = domains(policy, loaded.source_set.clusters)
    for domain, _ in wanted:
        if domain not in known:
            hint = suggestion(domain, sorted(known))
            raise UserError(
                f"{domain} is not a cluster or topology domain of SchedulePolicy {policy.name} "
                f"({policy.spread.topology_key} of its clusters){hint}"
            )
    target = changes.DocumentRef("SchedulePolicy", policy.name, policy.location.line)

    def text_edit(text: str) -> str:
        return changes.set_percentage_split(text, target, wanted)

    def check(after: inputs.SourceSet) -> str | None:
        found = next((p for p in after.policies if p.name == policy.name), None)
        got = (
            {part.topology_value: part.percentage for part in found.spread.percentage_split}
            if (found is not None and found.spread is not None)
            else {}
        )
        return None if got == dict(wanted) else f"SchedulePolicy {policy.name}'s split is {got or 'unset'}"

    fields = {policy.location.line: (("spec", "spreadConstraints", "percentageSplit"),)}
    change = editing.TextChange(policy.location.file, f"SchedulePolicy {policy.name}", text_edit, fields)
    result = editing.edit(loaded, [change], check, dry_run=dry_run)
    return Proposal(result)


def domains(policy: SchedulePolicy, clusters: Sequence[Cluster]) -> set[str]:
    """The topology domains a policy's split may name: the values of its topology key among the clusters
    its selectors choose, ready or not (a domain whose clusters are down is still a domain)."""
    assert policy.spread is not None
    chosen = candidates.candidates(policy, sorted(clusters, key=lambda cluster: cluster.name))
    names = {*chosen.names, *chosen.not_ready}
    key = policy.spread.topology_key
    return {value for cluster in clusters if cluster.name in names and (value := cluster.labels.get(key))}


def find_cluster(source_set: inputs.SourceSet, name: str) -> Cluster:
    found = next((cluster for cluster in source_set.clusters if cluster.name == name), None)
    if found is None:
        raise unknown("cluster", name, [cluster.name for cluster in source_set.clusters])
    return found


def find_policy(source_set: inputs.SourceSet, name: str) -> SchedulePolicy:
    found = next((policy for policy in source_set.policies if policy.name == name), None)
    if found is None:
        raise unknown("SchedulePolicy", name, [policy.name for policy in source_set.policies])
    return found


def _annotate(
    loaded: LoadedSource, manifests: Sequence[Manifest], cluster: str | None, *, dry_run: bool
) -> EditResult:
    """Set (or remove, when ``cluster`` is None) the pin annotation of each of ``manifests``: one text
    edit per file, for all the objects it holds."""
    by_file: dict[str, list[Manifest]] = {}
    for manifest in manifests:
        by_file.setdefault(manifest.location.file, []).append(manifest)
    edits: list[editing.TextChange] = []
    for file, held in by_file.items():
        targets = [
            changes.DocumentRef(manifest.kind, manifest.name, manifest.location.line, manifest.group)
            for manifest in held
        ]

        def text_edit(text: str, targets: list[changes.DocumentRef] = targets) -> str:
            return changes.set_metadata_entries(text, targets, "annotations", labels.CLUSTER_PIN, cluster)

        what = f"{held[0].kind} {held[0].name}" if len(held) == 1 else f"{len(held)} objects"
        fields = {
            manifest.location.line: (("metadata", "annotations", labels.CLUSTER_PIN),) for manifest in held
        }
        edits.append(editing.TextChange(file, what, text_edit, fields))
    keys = {manifest.key for manifest in manifests}
    pins = {
        manifest.key: manifest.annotations.get(labels.CLUSTER_PIN) for manifest in loaded.source_set.workloads
    }

    def check(after: inputs.SourceSet) -> str | None:
        for manifest in after.workloads:
            pinned = manifest.annotations.get(labels.CLUSTER_PIN)
            if manifest.key in keys and pinned != cluster:
                return f"{reference_of(manifest)} is pinned to {pinned}"
            if manifest.key not in keys and pinned != pins.get(manifest.key):
                return (
                    f"it would change the pin of {reference_of(manifest)} too (a kustomize base that "
                    "another kustomization includes?); pin with a patch in the overlay instead"
                )
        return None

    return editing.edit(loaded, edits, check, dry_run=dry_run)


# --- finding what to edit, with suggestions -----------------------------------------------------------------


def suggestion(wanted: str, known: Sequence[str]) -> str:
    """``; did you mean X?`` for the closest of ``known``, else the list of them (the first few)."""
    close = difflib.get_close_matches(wanted, known, n=3, cutoff=0.6)
    if close:
        return f"; did you mean {' or '.join(close)}?"
    if not known:
        return ""
    shown = ", ".join(sorted(known)[:8])
    return f"; the source has {shown}{', …' if len(known) > 8 else ''}"


def reference_of(manifest: Manifest, *, with_group: bool = False) -> str:
    """``kind/namespace/name`` (``kind/name`` for a cluster-scoped object), as commands take it; with its
    API group (``deployment.apps/shop/web``, ``core`` for the core group) when ``with_group``."""
    kind = manifest.kind.lower()
    if with_group:
        kind = f"{kind}.{manifest.group or 'core'}"
    return (
        f"{kind}/{manifest.namespace}/{manifest.name}" if manifest.namespaced else f"{kind}/{manifest.name}"
    )


_SHORT_KINDS = {"deploy": "deployment", "svc": "service", "cm": "configmap", "sts": "statefulset"}


def find_workload(source_set: inputs.SourceSet, reference: str) -> Manifest:
    """The object ``KIND[.GROUP]/[NAMESPACE/]NAME`` names: kind case-insensitive, singular or plural; the
    API group as in kubectl's ``resource.group`` (``deployment.apps``; ``core`` for the core group), needed
    only when the source has the kind in two groups."""
    parts = reference.split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise UserError(
            f"{reference!r} is not KIND/NAME or KIND/NAMESPACE/NAME (e.g. deployment/shop/web, or "
            "deployment.apps/shop/web with the API group)"
        )
    kind, dot, group = parts[0].lower().partition(".")
    kind = _SHORT_KINDS.get(kind, kind)
    wanted_group = ("" if group in ("", "core") else group) if dot else None
    namespace = parts[1] if len(parts) == 3 else None
    found = [
        manifest
        for manifest in source_set.workloads
        if kind in (manifest.kind.lower(), manifest.kind.lower() + "s", manifest.kind.lower() + "es")
        and manifest.name == parts[-1]
        and (namespace is None or manifest.namespace == namespace)
        and (wanted_group is None or manifest.group.lower() == wanted_group)
    ]
    if len(found) == 1:
        return found[0]
    if found:
        groups = len({manifest.group for manifest in found}) > 1
        namespaces = len({manifest.namespace for manifest in found}) > 1
        choices = ", ".join(reference_of(manifest, with_group=groups) for manifest in found)
        give = " and ".join(
            [*(["its API group"] if groups else []), *(["the namespace"] if namespaces else [])]
        )
        form = "KIND.GROUP/NAMESPACE/NAME" if groups else "KIND/NAMESPACE/NAME"
        raise UserError(f"{reference} is ambiguous: {choices}; give {give or 'more'} ({form})")
    grouped = wanted_group is not None
    if namespace is not None:
        known = [reference_of(m, with_group=grouped) for m in source_set.workloads]
        hint = suggestion(f"{parts[0].lower()}/{namespace}/{parts[-1]}", known)
    else:  # compare like with like: kind/name with each object's kind/name, then name it in full
        by_short = {
            f"{m.kind.lower()}{'.' + (m.group or 'core') if grouped else ''}/{m.name}": reference_of(
                m, with_group=grouped
            )
            for m in source_set.workloads
        }
        close = difflib.get_close_matches(f"{parts[0].lower()}/{parts[-1]}", list(by_short), n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(by_short[c] for c in close)}?" if close else ""
    raise UserError(f"no object {reference} in the source{hint}")


def unknown(what: str, name: str, known: Sequence[str]) -> UserError:
    return UserError(f"no {what} {name} in the source{suggestion(name, known)}")
