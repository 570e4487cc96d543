"""One sync pass: fetch → read the commit's tree → plan → apply → prune → record the inventory.

The pass is a sequence of pure decisions (which objects changed, what may be pruned) around a few calls
through the ports. Where it must stop, it stops *before* touching the cluster: a fetch failure, a bad
signature, a directory that does not parse, or a mass prune without consent all leave the cluster as it is
and say why in the result (and from there in the status report).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from nova_agent import (
    agentnamespace,
    deleting,
    driftchecks,
    drifting,
    inventories,
    owned,
    ownership,
    permissions,
    pruning,
    repositories,
)
from nova_agent.applying import apply_objects, resolve
from nova_agent.clocks import Clock
from nova_agent.desired import DesiredObject, load_desired, read_cluster_files, secret_problems
from nova_agent.drifting import DriftedObject, DriftMode
from nova_agent.gitrepos import GitUnavailable, RepoCache
from nova_agent.inventories import PENDING_DIGEST, Inventory, InventoryEntry
from nova_agent.kubeports import KubePort, Resource
from nova_agent.owned import OwnedObject
from nova_agent.ownership import Ownership
from nova_agent.resources import Body, BodyError, ObjectKey, ObjectRef, ref_of
from nova_agent.retrying import FailureTable, may_retry
from nova_agent.settings import AgentSettings
from nova_gitops.api import labels as nova_labels
from nova_gitops.api import progress as phases
from nova_gitops.clients.kuberest import KubeApiError

RENDERED_REF = "refs/nova/rendered"
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", True)


class NothingReleased(Exception):
    """``--follow-release`` and the controller has released nothing to this cluster yet: nothing to do."""


class SyncRefused(Exception):
    """The pass was refused before anything was applied: bad input, bad signature or a mass prune."""


@dataclass(slots=True)
class SyncResult:
    revision: str = ""
    """The commit this pass read."""
    synced_revision: str = ""
    """The commit the cluster now reflects: ``revision``, or the previous one when the pass was refused."""
    applied: list[ObjectRef] = field(default_factory=list)
    unchanged: int = 0
    failed: dict[ObjectRef, str] = field(default_factory=dict)
    pruned: list[ObjectRef] = field(default_factory=list)
    would_prune: list[ObjectRef] = field(default_factory=list)
    adopted: list[ObjectRef] = field(default_factory=list)
    """Objects that existed before the agent first applied them: released, never deleted, once git drops
    them."""
    released: list[ObjectRef] = field(default_factory=list)
    """Objects git no longer wants that the agent did not create: forgotten and left as they are."""
    holds_adopted: list[ObjectRef] = field(default_factory=list)
    """Every object of the inventory the agent adopted, after this pass (for the status report)."""
    refusal: str = ""
    live: list[Body] = field(default_factory=list)
    """The live objects of this cluster's render (for health), as listed during the pass."""
    replaced: list[ObjectRef] = field(default_factory=list)
    """Objects deleted and created again because the server refused a change of an immutable field."""
    drifted: list[DriftedObject] = field(default_factory=list)
    """Objects whose live state departed from git's (put back when the drift mode is ``correct``)."""
    owned: list[OwnedObject] = field(default_factory=list)
    """Of those, the ones in this agent's inventory (the report's workloads), with their revisions."""
    stripped: dict[ObjectRef, tuple[str, ...]] = field(default_factory=dict)
    """Objects of the render that set ``metadata.ownerReferences`` or ``metadata.finalizers``, and which:
    the agent applies them without (``desired.NEVER_APPLIED``)."""

    @property
    def error_summary(self) -> str:
        if self.refusal:
            return self.refusal
        if self.failed:
            first_ref, first_message = sorted(self.failed.items())[0]
            more = f" (and {len(self.failed) - 1} more)" if len(self.failed) > 1 else ""
            return f"{first_ref}: {first_message}{more}"
        return ""


def read_inventory(kube: KubePort, settings: AgentSettings) -> tuple[Inventory, list[str]]:
    """The inventory; empty when there is none yet (its namespace may not exist: a fresh cluster)."""
    with permissions.explained("get", CONFIGMAPS, settings.namespace, settings.namespace):
        configmap = kube.get(CONFIGMAPS, settings.namespace, inventories.inventory_name(settings.cluster))
    if configmap is None and settings.dry_run:
        agentnamespace.note_if_missing(kube, settings.namespace)
    return inventories.decode_inventory((configmap or {}).get("data"))


def write_inventory(kube: KubePort, settings: AgentSettings, inventory: Inventory) -> None:
    """Record the inventory, creating the agent's namespace on a fresh cluster."""
    body = inventories.inventory_configmap(settings.cluster, settings.namespace, inventory)
    agentnamespace.apply_in(kube, CONFIGMAPS, body, settings.namespace)


def list_live(
    kube: KubePort,
    resources: Sequence[Resource],
    label_selector: str,
    namespaces: Mapping[Resource, Collection[str]] | None = None,
) -> tuple[dict[ObjectKey, Body], dict[ObjectRef, str]]:
    """Live objects carrying ``label_selector``, one cluster-wide list per resource; and a listing error per
    kind that could not be listed.

    A kind the agent may not list cluster-wide (403: RBAC narrowed to RoleBindings per namespace, see
    docs/agent.md) is listed in each of its ``namespaces`` instead; when that is refused too, it is that
    kind's error and the other kinds are still listed."""
    live: dict[ObjectKey, Body] = {}
    errors: dict[ObjectRef, str] = {}
    for resource in sorted(set(resources), key=lambda r: (r.group, r.plural)):
        try:
            items = list(kube.list(resource, None, label_selector))
        except KubeApiError as error:
            if error.status == 404:
                continue
            if error.status != 403:
                raise
            where = (namespaces or {}).get(resource)
            items, refusal = _list_per_namespace(kube, resource, label_selector, where)
            if refusal:
                errors[ObjectRef(resource.api_version, resource.kind, "", "*")] = (
                    f"cannot list {resource.plural}: {error.status} {error.reason}: {error.message}{refusal}"
                )
                continue
        for item in items:
            try:
                live[ref_of(item).key] = item
            except BodyError:
                continue  # a listing item that cannot name itself is nothing the agent applied
    return live, errors


def _list_per_namespace(
    kube: KubePort, resource: Resource, label_selector: str, namespaces: Collection[str] | None
) -> tuple[list[Body], str]:
    """The items of ``resource`` in each namespace, or why that was not possible."""
    if not resource.namespaced or not namespaces:
        return [], ""
    items: list[Body] = []
    for namespace in sorted(namespaces):
        try:
            items += kube.list(resource, namespace, label_selector)
        except KubeApiError as error:
            if error.status == 404:
                continue
            if error.status != 403:
                raise
            return [], f"; nor in namespace {namespace}: {error.status} {error.reason}"
    return items, ""


def changed_objects(
    desired: Sequence[DesiredObject],
    inventory: Inventory,
    live_keys: set[ObjectKey],
    failures: FailureTable,
    now: float,
) -> tuple[list[DesiredObject], int]:
    """Objects to send (new, changed, missing from the cluster) that are not backing off; and how many are
    unchanged. An object is unchanged when its digest equals the one last applied and it still exists."""
    to_send, unchanged = [], 0
    for item in desired:
        key = item.ref.key
        if inventory.digest_of(key) == item.digest and key in live_keys:
            unchanged += 1
        elif may_retry(failures.get(key), item.digest, now):
            to_send.append(item)
    return to_send, unchanged


def _resolved(
    kube: KubePort, desired: Sequence[DesiredObject]
) -> tuple[list[DesiredObject], dict[Resource, set[str]]]:
    """The desired objects with their namespace defaulted, and each served resource's namespaces."""
    items: list[DesiredObject] = []
    resources: dict[Resource, set[str]] = {}
    for item in desired:
        resource, resolved = resolve(kube, item)
        items.append(resolved)
        if resource is not None:
            resources.setdefault(resource, set()).add(resolved.ref.namespace)
    return items, resources


def sync_once(
    settings: AgentSettings,
    repo: RepoCache,
    kube: KubePort,
    clock: Clock,
    failures: FailureTable,
    drift_seen: MutableMapping[ObjectKey, datetime] | None = None,
    progress: phases.Progress = phases.NO_PROGRESS,
) -> SyncResult:
    """One pass. Raises :class:`GitError` / kube errors for pass-level failures, :class:`SyncRefused` for
    refusals; per-object failures are in the result. ``drift_seen`` carries when each drift was first seen
    from one pass to the next; ``progress`` is told of the git, apply and prune phases."""
    result = SyncResult()
    progress.phase(phases.GIT, f"fetching {settings.source_branch}")
    revision = repo.fetch(settings.source_branch, RENDERED_REF)
    if revision is None:
        if settings.follow_release:
            raise NothingReleased(
                f"nothing released to cluster {settings.cluster} yet (no branch {settings.source_branch!r}): "
                "the cluster is left as it is"
            )
        raise GitUnavailable(f"the rendered repository has no branch {settings.source_branch!r} (yet)")
    result.revision = revision
    if settings.allowed_signers is not None:
        repo.verify_signature(revision, settings.allowed_signers)
    files = read_cluster_files(repo, revision, settings)  # a missing one raises: never "delete everything"
    desired, problems = load_desired(files, settings.cluster)
    if problems:
        raise SyncRefused(f"revision {revision[:12]} is not applied: " + "; ".join(problems))
    repository = repositories.Repository.of(settings.repo, settings.directory, settings.previous_repositories)
    desired = repositories.stamped(desired, repository.id)
    inventory, inventory_problems = read_inventory(kube, settings)
    name = inventories.inventory_name(settings.cluster)
    if (shared := repositories.inventory_refusal(inventory.repository, repository, name)) is not None:
        raise SyncRefused(shared)
    desired, resources = _resolved(kube, desired)
    result.stripped = {item.ref: item.stripped for item in desired if item.stripped}
    wanted = {item.ref.key for item in desired}  # a refused object is not applied, and never pruned either
    desired, refused = refuse_unsafe(desired, settings)
    result.failed.update(refused)
    allow_mass_prune = pruning.allows_mass_prune(repo.trailers(revision))
    plan = pruning.plan_prune(
        inventory,
        wanted,
        max_percent=settings.max_prune_percent,
        allow_mass_prune=allow_mass_prune,
        revision=revision,
    )
    label = f"{nova_labels.TARGET_CLUSTER}={settings.cluster}"
    live, list_errors = list_live(kube, list(resources), label, resources)
    result.failed.update(list_errors)
    result.synced_revision = inventory.revision
    if plan.refusal is not None:
        result.refusal = plan.refusal
        result.holds_adopted = _adopted_in(inventory)
        result.live = list(live.values())
        result.owned = owned.owned_objects(
            live.values(), inventory, cluster=settings.cluster, repository=repository
        )
        return result
    progress.phase(phases.APPLY, f"{len(desired)} objects of {settings.directory}")
    desired = _autoscaled_keep_live_replicas(kube, desired, live)
    now = clock.now().timestamp()
    to_send, result.unchanged = changed_objects(desired, inventory, set(live), failures, now)
    corrections = _check_drift(
        kube, settings, desired, inventory, live, result, {} if drift_seen is None else drift_seen, clock
    )
    to_send += [item for item in corrections if may_retry(failures.get(item.ref.key), item.digest, now)]
    result.unchanged -= len(corrections)
    before = _live_before(kube, to_send, live)
    to_send, foreign = repositories.refuse_foreign(to_send, before, repository)
    result.failed.update(foreign)
    adopting = {
        item.ref
        for item in to_send
        if ownership.adopts(*_owner_and_uid(inventory, item.ref), before[item.ref], settings.cluster)
    }
    new_entries = [
        InventoryEntry(
            item.ref, PENDING_DIGEST, Ownership.ADOPTED if item.ref in adopting else Ownership.CREATED
        )
        for item in to_send
        if item.ref.key not in inventory.entries
    ]
    if new_entries and not settings.dry_run:
        write_inventory(kube, settings, inventory.with_entries(new_entries))  # tracked before created
    outcome = apply_objects(
        kube,
        to_send,
        failures=failures,
        now=now,
        clock=clock,
        force=settings.force_conflicts,
        unforced={
            item.ref
            for item in to_send
            if ownership.applies_unforced(
                *_owner_and_uid(inventory, item.ref), before[item.ref], item.ref in adopting, item.body
            )
        },
        created={item.ref for item in to_send if _owner_and_uid(inventory, item.ref)[0] is Ownership.CREATED},
        replace_budget=None
        if allow_mass_prune
        else pruning.replacement_budget(len(inventory), len(plan.deletions), settings.max_prune_percent),
        dry_run=settings.dry_run,
        crd_timeout=settings.crd_timeout,
        agent_namespace=settings.namespace,
    )
    result.applied = [item.ref for item in outcome.applied]
    result.replaced = outcome.replaced
    put_back = {item.ref for item in outcome.applied} if not settings.dry_run else set()
    result.drifted = [replace(found, corrected=found.ref in put_back) for found in result.drifted]
    result.failed.update(outcome.failed)
    applied_entries = [
        _applied_entry(
            inventory, item, before[item.ref], item.ref in adopting, outcome.responses[item.ref], revision
        )
        for item in outcome.applied
    ]
    result.adopted = [
        entry.ref
        for entry in applied_entries
        if entry.owner is Ownership.ADOPTED and (entry.ref in adopting or before[entry.ref] is None)
    ]
    updated = inventory.with_entries(
        applied_entries + new_entries_failed(new_entries, outcome.failed), revision=revision
    )
    progress.phase(phases.PRUNE, f"{len(plan.deletions)} objects git no longer has")
    deletions = deleting.carry_out(
        kube,
        plan.deletions,
        inventory,
        cluster=settings.cluster,
        agent_namespace=settings.namespace,
        dry_run=settings.dry_run,
        applied_uids={entry.uid for entry in applied_entries if entry.uid},
        repository=repository,
    )
    deleted = deletions.deleted
    result.pruned, result.would_prune = (deleted, []) if not settings.dry_run else ([], deleted)
    result.released = deletions.released
    result.failed.update(deletions.failed)
    updated = updated.without(deletions.forget)
    failed_keys = {ref.key for ref in result.failed}
    updated = owned.mark_synced(updated.owned_by(repository.id), desired, set(live), failed_keys, revision)
    result.holds_adopted = _adopted_in(updated)
    if inventory_problems:
        result.failed.setdefault(
            ObjectRef("v1", "ConfigMap", settings.namespace, "inventory"), "; ".join(inventory_problems)
        )
    if not settings.dry_run and inventories.encode_inventory(updated) != inventories.encode_inventory(
        inventory
    ):
        write_inventory(kube, settings, updated)
    if outcome.applied or deleted:
        _, resources = _resolved(kube, desired)  # CRDs applied in this pass now resolve
        live, list_errors = list_live(kube, list(resources), label, resources)
        result.failed.update(list_errors)
    result.live = list(live.values())
    recorded = inventory if settings.dry_run else updated  # what a dry run applied reflects nothing
    result.owned = owned.owned_objects(
        live.values(), recorded, cluster=settings.cluster, repository=repository
    )
    result.synced_revision = revision
    return result


def _check_drift(
    kube: KubePort,
    settings: AgentSettings,
    desired: Sequence[DesiredObject],
    inventory: Inventory,
    live: Mapping[ObjectKey, Body],
    result: SyncResult,
    seen: MutableMapping[ObjectKey, datetime],
    clock: Clock,
) -> list[DesiredObject]:
    """Record the drifted objects among the unchanged ones in ``result``; return those to put back."""
    if settings.drift is DriftMode.OFF and not any(
        drifting.mode_for(item.body, DriftMode.OFF) is not DriftMode.OFF for item in desired
    ):
        return []
    unchanged = [
        item for item in desired if inventory.digest_of(item.ref.key) == item.digest and item.ref.key in live
    ]
    unforced = {
        item.ref.key
        for item in unchanged
        if ownership.applies_unforced(
            *_owner_and_uid(inventory, item.ref), live.get(item.ref.key), False, item.body
        )
    }
    findings = driftchecks.check(kube, unchanged, live, settings.drift, seen, clock.now(), unforced)
    result.failed.update(findings.errors)
    result.drifted = findings.drifted
    correct = {found.ref for found in findings.drifted if found.mode is DriftMode.CORRECT}  # not conflicts
    return [item for item in unchanged if item.ref in correct]


def _autoscaled_keep_live_replicas(
    kube: KubePort, desired: Sequence[DesiredObject], live: Mapping[ObjectKey, Body]
) -> list[DesiredObject]:
    """``desired`` with the live ``spec.replicas`` of each object a HorizontalPodAutoscaler scales: the
    autoscaler owns the count (docs/agent.md, "Letting an autoscaler own replicas"). Listed only when some
    object has a replica count."""
    scaled = [item for item in desired if "replicas" in (item.body.get("spec") or {})]
    if not scaled:
        return list(desired)
    targets = driftchecks.autoscaled(kube, {item.ref.namespace for item in scaled})
    if not targets:
        return list(desired)
    return [
        replace(item, body=drifting.with_live_replicas(item.body, live.get(item.ref.key)))
        if (item.ref.namespace, item.ref.kind, item.ref.name) in targets
        else item
        for item in desired
    ]


def refuse_unsafe(
    desired: Sequence[DesiredObject], settings: AgentSettings
) -> tuple[list[DesiredObject], dict[ObjectRef, str]]:
    """The objects that may be sent, and why each of the others may not: a Namespace of the cluster's own
    or the agent's, the agent's own inventory (a render must not forge what the agent believes it created),
    a Secret whose values are not all strings (the server would quote them back)."""
    kept: list[DesiredObject] = []
    refused: dict[ObjectRef, str] = {}
    inventory_key = CONFIGMAPS.api_version, "ConfigMap", settings.namespace
    for item in desired:
        if (
            item.ref.api_version,
            item.ref.kind,
            item.ref.namespace,
        ) == inventory_key and item.ref.name.startswith(inventories.inventory_name("")):
            refused[item.ref] = "nova-agent's inventory is the agent's own record: a render may not write it"
        elif ownership.protected_namespace(item.ref, settings.namespace):
            refused[item.ref] = (
                f"Namespace {item.ref.name} belongs to the cluster (or to nova-agent itself): nova-agent "
                "never applies nor deletes it; remove it from the render"
            )
        elif problems := secret_problems(item.body):
            refused[item.ref] = "not applied: " + "; ".join(problems)
        else:
            kept.append(item)
    return kept, refused


def _adopted_in(inventory: Inventory) -> list[ObjectRef]:
    return sorted(entry.ref for entry in inventory.entries.values() if entry.owner is Ownership.ADOPTED)


def _owner_and_uid(inventory: Inventory, ref: ObjectRef) -> tuple[Ownership | None, str]:
    entry = inventory.entries.get(ref.key)
    return (None, "") if entry is None else (entry.owner, entry.uid)


LIST_INSTEAD_OF_GETS = 16
"""From this many objects of one kind and namespace to look up, one list costs less than a read each."""


def _live_before(
    kube: KubePort, items: Sequence[DesiredObject], live: Mapping[ObjectKey, Body]
) -> dict[ObjectRef, Body | None]:
    """Each object as it is before this pass applies it: from the labelled listing when it carries our
    label, else read (it may exist without our label: a user's own object, about to be adopted) — one list
    per kind and namespace where many are new (a first sync), a read each otherwise. Not readable (narrowed
    RBAC): None, and the apply's answer decides (``managedFields``)."""
    before: dict[ObjectRef, Body | None] = {}
    lookups: dict[tuple[Resource, str], list[DesiredObject]] = {}
    for item in items:
        resource = kube.resource_for(item.ref.api_version, item.ref.kind)
        if item.ref.key in live or resource is None:
            before[item.ref] = live.get(item.ref.key)
        else:
            lookups.setdefault((resource, item.ref.namespace), []).append(item)
    for (resource, namespace), members in lookups.items():
        listed: dict[str, Body] | None = None
        if len(members) >= LIST_INSTEAD_OF_GETS:
            try:
                found = kube.list(resource, namespace or None)
                listed = {str(o["metadata"]["name"]): o for o in found if isinstance(o.get("metadata"), dict)}
            except (KubeApiError, KeyError):
                listed = None
        for item in members:
            if listed is not None:
                before[item.ref] = listed.get(item.ref.name)
                continue
            try:
                before[item.ref] = kube.get(resource, namespace, item.ref.name)
            except KubeApiError:
                before[item.ref] = None
    return before


def _applied_entry(
    inventory: Inventory,
    item: DesiredObject,
    before: Body | None,
    adopting: bool,
    response: Body,
    revision: str,
) -> InventoryEntry:
    owner, _ = _owner_and_uid(inventory, item.ref)
    return InventoryEntry(
        item.ref,
        item.digest,
        ownership.ownership_after_apply(
            owner, adopting, before, response if isinstance(response, dict) else {}
        ),
        ownership.uid_of(response),
        revision,
        owned.generation_of(response),
    )


def new_entries_failed(
    new_entries: Sequence[InventoryEntry], failed: Mapping[ObjectRef, str]
) -> list[InventoryEntry]:
    """New objects whose apply failed stay tracked as pending: the request may have reached the server."""
    return [entry for entry in new_entries if entry.ref in failed]
