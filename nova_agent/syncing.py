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
    changes,
    deleting,
    inventories,
    owned,
    ownership,
    permissions,
    pruning,
    repositories,
)
from nova_agent.applying import ApplyOutcome, apply_objects, resolve
from nova_agent.clocks import Clock
from nova_agent.desired import DesiredObject, load_desired, read_cluster_files, secret_problems
from nova_agent.drifting import DriftedObject
from nova_agent.gitrepos import GitUnavailable, RepoCache
from nova_agent.inventories import PENDING_DIGEST, Inventory, InventoryEntry
from nova_agent.kubeports import KubePort, Resource
from nova_agent.liveobjects import list_live, live_before
from nova_agent.owned import OwnedObject
from nova_agent.ownership import Ownership
from nova_agent.resources import Body, ObjectKey, ObjectRef
from nova_agent.retrying import FailureTable, may_retry
from nova_agent.settings import AgentSettings
from nova_gitops.api import labels as nova_labels
from nova_gitops.api import progress as phases

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
    read = _read_render(settings, repo, kube, progress)
    revision, inventory, repository = read.revision, read.inventory, read.repository
    result.revision = revision
    desired, resources = _resolved(kube, read.desired)
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
        return _refused(result, plan.refusal, read, live, settings.cluster)
    progress.phase(phases.APPLY, f"{len(desired)} objects of {settings.directory}")
    desired = changes.autoscaled_keep_live_replicas(kube, desired, live)
    now = clock.now().timestamp()
    to_send, before = _to_send(kube, settings, read, desired, live, result, failures, now, clock, drift_seen)
    replace_budget = (
        None
        if allow_mass_prune
        else pruning.replacement_budget(len(inventory), len(plan.deletions), settings.max_prune_percent)
    )
    applied = _apply(kube, settings, read, to_send, before, result, failures, now, clock, replace_budget)
    progress.phase(phases.PRUNE, f"{len(plan.deletions)} objects git no longer has")
    updated, deleted = _prune(kube, settings, read, plan.deletions, applied, result)
    failed_keys = {ref.key for ref in result.failed}
    updated = owned.mark_synced(updated.owned_by(repository.id), desired, set(live), failed_keys, revision)
    relist = bool(applied.outcome.applied or deleted)
    _record(kube, settings, read, desired, updated, live if not relist else None, label, result)
    return result


def _refused(
    result: SyncResult, refusal: str, read: _Read, live: Mapping[ObjectKey, Body], cluster: str
) -> SyncResult:
    """``result`` of a pass that prunes too much to go on: nothing applied, the cluster as it was reported."""
    result.refusal = refusal
    result.holds_adopted = _adopted_in(read.inventory)
    result.live = list(live.values())
    result.owned = owned.owned_objects(
        live.values(), read.inventory, cluster=cluster, repository=read.repository
    )
    return result


@dataclass(frozen=True, slots=True)
class _Read:
    """What a pass read before deciding anything: the commit, the objects it wants here (stamped with the
    repository), the repository, and the agent's inventory (with what did not read of it)."""

    revision: str
    desired: list[DesiredObject]
    repository: repositories.Repository
    inventory: Inventory
    inventory_problems: list[str]


def _read_render(
    settings: AgentSettings, repo: RepoCache, kube: KubePort, progress: phases.Progress
) -> _Read:
    """Fetch the rendered branch, check its signature, read and load this cluster's directory, and the
    inventory; raise where the pass must stop before touching the cluster."""
    progress.phase(phases.GIT, f"fetching {settings.source_branch}")
    revision = repo.fetch(settings.source_branch, RENDERED_REF)
    if revision is None:
        if settings.follow_release:
            raise NothingReleased(
                f"nothing released to cluster {settings.cluster} yet (no branch {settings.source_branch!r}): "
                "the cluster is left as it is"
            )
        raise GitUnavailable(f"the rendered repository has no branch {settings.source_branch!r} (yet)")
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
    return _Read(revision, list(desired), repository, inventory, inventory_problems)


def _to_send(
    kube: KubePort,
    settings: AgentSettings,
    read: _Read,
    desired: Sequence[DesiredObject],
    live: Mapping[ObjectKey, Body],
    result: SyncResult,
    failures: FailureTable,
    now: float,
    clock: Clock,
    drift_seen: MutableMapping[ObjectKey, datetime] | None,
) -> tuple[list[DesiredObject], dict[ObjectRef, Body | None]]:
    """The objects to apply — changed, missing, drifted to put back, not backing off and not another
    repository's — and each one as it is before the apply; counts the unchanged and drifted in ``result``."""
    to_send, result.unchanged = changes.changed_objects(desired, read.inventory, set(live), failures, now)
    seen = {} if drift_seen is None else drift_seen
    findings, corrections = changes.drift_corrections(
        kube, settings.drift, desired, read.inventory, live, seen, clock
    )
    result.failed.update(findings.errors)
    result.drifted = findings.drifted
    to_send += [item for item in corrections if may_retry(failures.get(item.ref.key), item.digest, now)]
    result.unchanged -= len(corrections)
    before = live_before(kube, to_send, live)
    to_send, foreign = repositories.refuse_foreign(to_send, before, read.repository)
    result.failed.update(foreign)
    return to_send, before


@dataclass(frozen=True, slots=True)
class _Applied:
    """What the apply did, and the inventory entries it makes: of the objects applied, and of the new ones
    (tracked before they are created)."""

    outcome: ApplyOutcome
    entries: list[InventoryEntry]
    new_entries: list[InventoryEntry]


def _apply(
    kube: KubePort,
    settings: AgentSettings,
    read: _Read,
    to_send: Sequence[DesiredObject],
    before: Mapping[ObjectRef, Body | None],
    result: SyncResult,
    failures: FailureTable,
    now: float,
    clock: Clock,
    replace_budget: int | None,
) -> _Applied:
    """Track the new objects in the inventory, apply ``to_send``, and say in ``result`` what was applied,
    replaced, put back, adopted and what failed."""
    inventory = read.inventory
    adopting = {
        item.ref
        for item in to_send
        if ownership.adopts(*inventory.owner_and_uid(item.ref), before[item.ref], settings.cluster)
    }
    new_entries = _track_new(kube, settings, inventory, to_send, adopting)
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
                *inventory.owner_and_uid(item.ref), before[item.ref], item.ref in adopting, item.body
            )
        },
        created={item.ref for item in to_send if inventory.owner_and_uid(item.ref)[0] is Ownership.CREATED},
        replace_budget=replace_budget,
        dry_run=settings.dry_run,
        crd_timeout=settings.crd_timeout,
        agent_namespace=settings.namespace,
    )
    return _Applied(
        outcome, _note_applied(result, read, outcome, before, adopting, settings.dry_run), new_entries
    )


def _track_new(
    kube: KubePort,
    settings: AgentSettings,
    inventory: Inventory,
    to_send: Sequence[DesiredObject],
    adopting: Collection[ObjectRef],
) -> list[InventoryEntry]:
    """Inventory entries of the objects about to be applied for the first time, written before they are
    created (a crash in between leaves them tracked, pending)."""
    new_entries = [
        InventoryEntry(
            item.ref, PENDING_DIGEST, Ownership.ADOPTED if item.ref in adopting else Ownership.CREATED
        )
        for item in to_send
        if item.ref.key not in inventory.entries
    ]
    if new_entries and not settings.dry_run:
        write_inventory(kube, settings, inventory.with_entries(new_entries))  # tracked before created
    return new_entries


def _note_applied(
    result: SyncResult,
    read: _Read,
    outcome: ApplyOutcome,
    before: Mapping[ObjectRef, Body | None],
    adopting: Collection[ObjectRef],
    dry_run: bool,
) -> list[InventoryEntry]:
    """Say in ``result`` what the apply did (applied, replaced, put back, adopted, failed); the inventory
    entries of the objects applied."""
    inventory = read.inventory
    result.applied = [item.ref for item in outcome.applied]
    result.replaced = outcome.replaced
    put_back = {item.ref for item in outcome.applied} if not dry_run else set()
    result.drifted = [replace(found, corrected=found.ref in put_back) for found in result.drifted]
    result.failed.update(outcome.failed)
    entries = [
        _applied_entry(
            inventory,
            item,
            before[item.ref],
            item.ref in adopting,
            outcome.responses[item.ref],
            read.revision,
        )
        for item in outcome.applied
    ]
    result.adopted = [
        entry.ref
        for entry in entries
        if entry.owner is Ownership.ADOPTED and (entry.ref in adopting or before[entry.ref] is None)
    ]
    return entries


def _prune(
    kube: KubePort,
    settings: AgentSettings,
    read: _Read,
    deletions_planned: Sequence[ObjectRef],
    applied: _Applied,
    result: SyncResult,
) -> tuple[Inventory, list[ObjectRef]]:
    """Delete (or release) what git no longer has; the inventory after the apply and the deletions, and
    what was deleted (or would be, in a dry run)."""
    inventory = read.inventory
    updated = inventory.with_entries(
        applied.entries + new_entries_failed(applied.new_entries, applied.outcome.failed),
        revision=read.revision,
    )
    deletions = deleting.carry_out(
        kube,
        deletions_planned,
        inventory,
        cluster=settings.cluster,
        agent_namespace=settings.namespace,
        dry_run=settings.dry_run,
        applied_uids={entry.uid for entry in applied.entries if entry.uid},
        repository=read.repository,
    )
    deleted = deletions.deleted
    result.pruned, result.would_prune = (deleted, []) if not settings.dry_run else ([], deleted)
    result.released = deletions.released
    result.failed.update(deletions.failed)
    return updated.without(deletions.forget), deleted


def _record(
    kube: KubePort,
    settings: AgentSettings,
    read: _Read,
    desired: Sequence[DesiredObject],
    updated: Inventory,
    live: Mapping[ObjectKey, Body] | None,
    label: str,
    result: SyncResult,
) -> None:
    """Write the inventory when it changed, and put in ``result`` what the report needs: the adopted
    objects, the live ones (listed again when ``live`` is None: the pass changed them) and the owned ones."""
    inventory = read.inventory
    result.holds_adopted = _adopted_in(updated)
    if read.inventory_problems:
        result.failed.setdefault(
            ObjectRef("v1", "ConfigMap", settings.namespace, "inventory"), "; ".join(read.inventory_problems)
        )
    if not settings.dry_run and inventories.encode_inventory(updated) != inventories.encode_inventory(
        inventory
    ):
        write_inventory(kube, settings, updated)
    if live is None:
        _, resources = _resolved(kube, desired)  # CRDs applied in this pass now resolve
        live, list_errors = list_live(kube, list(resources), label, resources)
        result.failed.update(list_errors)
    result.live = list(live.values())
    recorded = inventory if settings.dry_run else updated  # what a dry run applied reflects nothing
    result.owned = owned.owned_objects(
        live.values(), recorded, cluster=settings.cluster, repository=read.repository
    )
    result.synced_revision = read.revision


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


def _applied_entry(
    inventory: Inventory,
    item: DesiredObject,
    before: Body | None,
    adopting: bool,
    response: Body,
    revision: str,
) -> InventoryEntry:
    owner, _ = inventory.owner_and_uid(item.ref)
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
