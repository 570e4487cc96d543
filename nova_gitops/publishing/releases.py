"""Release refs: ``nova/clusters/<cluster>`` on the rendered repository, the ``main`` commit a cluster runs.

A progressive rollout (issue 12, docs/rollouts.md) releases a render to clusters a wave at a time. ``main``
still holds the desired render; releasing it to a cluster moves that cluster's branch to a ``main`` commit
(a ref update, no new commit), which ``nova-agent --follow-release``, Flux or Argo CD then apply. This module
is the git I/O under the rollout logic, which is pure and decides *which* refs move *where*; here they are
read, compared and moved.

Why refs and leases carry all the safety: two controllers (a leader-election hand-over, or a split brain)
may both decide to move a ref. Every batch of moves is one ``git push --atomic`` in which each ref carries
``--force-with-lease=<ref>:<where we last saw it>`` (empty: "must not exist yet"), so the remote either
takes the whole batch from exactly the state it was decided on, or none of it. A lost lease is an outcome
(``MoveOutcome.LOST``: re-read, re-decide), not an error; it is how the second controller learns that the
first one acted. A rollback is the same push with the ref moving backwards, which the lease makes safe.

Why one fetch to read the state: ``main`` and every release ref come from one ``git fetch --prune`` into a
private namespace of the local cache (``refs/nova/releases/``), so they are a consistent snapshot, and the
commits are then local for the tree comparisons and for the push (a push needs the object it names; the
remote already has it, as a ``main`` commit, so nothing but the ref update goes over the wire).

Why tree ids to tell which clusters a change touches: git stores ``clusters/<cluster>`` as one tree whose id
is a hash of everything under it, so reading the one tree object ``clusters/`` of a commit answers for every
cluster at once, whatever the number of files (no diff, no blob is read).

Why the rendered workloads are read here too: a gate needs a cluster's report to account for every workload
rendered for it at the released commit (docs/rollouts.md, "Gates"), or an agent that applied nothing — a
wrong ``--path`` — would pass it. ``rendered_workloads`` reads the cluster's directory as the agent does
(every manifest file below it but ``kustomization.yaml`` and symlinks) and keeps, per directory tree id and
per file blob id, the (group, kind, namespace, name) of the objects of the kinds an agent reports health
for, so a step parses only the files a render changed.

Through GitPython: the fetch and the atomic push (``Remote``, ``clients.gitrunning``), ancestry
(``Repo.is_ancestor``) and the cluster trees (commit and tree objects, two small reads from GitPython's
persistent ``cat-file``). The refs are read back from the cache with one ``for-each-ref``, 3–4 times faster
than GitPython's ``Reference`` at a hundred refs.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

import git

from nova_gitops import errors
from nova_gitops.api import loading
from nova_gitops.clients import gitrunning
from nova_gitops.publishing import gitwriting
from nova_gitops.publishing.gitcommands import GitFailed
from nova_gitops.publishing.gitwriting import RenderedRepo
from nova_gitops.rollouts.health import RENDERED_WORKLOAD_KINDS, WorkloadKey

RELEASE_BRANCH_PREFIX = "nova/clusters/"
"""``nova/clusters/<cluster>``: where a cluster's released commit lives (``nova_agent.settings`` agrees)."""
CLUSTERS_DIRECTORY = "clusters"
LOCAL_PREFIX = "refs/nova/releases/"  # the cache's snapshot of the remote: ``main`` and ``clusters/<name>``
CLUSTER_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
COMMIT_ID = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64})$")
# A lost race, as ``git push --porcelain --atomic`` reports it: a lease that no longer holds ("stale info",
# checked by the client), the remote's own compare-and-swap failing under a concurrent push ("cannot lock
# ref", "incorrect old value"...), and the other refs of the batch refused because one of them was.
LOST_RACE = (*gitwriting.RETRYABLE_REJECTIONS, "atomic push failed", "atomic transaction failed")
TREES_KEPT = 64  # commits whose cluster trees stay cached: a few distinct released commits per rollout
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")  # what the agent reads of a directory (nova_agent.desired)
KUSTOMIZATION_FILES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
SYMLINK_MODE = "120000"  # the agent skips links in a rendered directory
DEFAULT_NAMESPACE = "default"  # where the agent puts a namespaced object whose manifest names none
WORKLOADS_KEPT = 4096  # cluster directories (by tree id) whose workloads stay cached
BLOBS_KEPT = 200_000  # manifest files (by blob id) whose workloads stay cached
BATCH_FILES = 5000  # files read by one cat-file --batch (about 10 MB of rendered YAML)


@dataclass(frozen=True, slots=True)
class ReleaseState:
    """The rendered repository at one instant: ``main``'s head and each cluster's released commit."""

    main: str | None  # None: nothing published yet
    released: Mapping[str, str]  # cluster → commit; a cluster with no release ref is absent


@dataclass(frozen=True, slots=True)
class RefMove:
    """Move one cluster's release ref from ``expected`` (None: it must not exist) to ``target`` (None:
    delete it, for a cluster that left the fleet)."""

    expected: str | None
    target: str | None


class MoveOutcome(Enum):
    MOVED = "moved"  # the whole batch landed
    NOTHING = "nothing"  # every ref was already where it was to go: no push
    LOST = "lost"  # another controller moved one of the refs first: nothing of the batch landed; re-read


def release_ref(cluster: str) -> str:
    return f"refs/heads/{RELEASE_BRANCH_PREFIX}{cluster}"


class Releases:
    """The release refs of one rendered repository, through its local bare cache.

    The cache is the publisher's (``gitwriting.cache_path``), so ``main``'s objects are usually there
    already; callers that may run beside a publish on the same machine hold ``repo.locked()``."""

    def __init__(self, repo: RenderedRepo, *, branch: str = "main") -> None:
        self.repo = repo
        self.branch = branch
        self._trees: dict[str, dict[str, str]] = {}
        self._directories: dict[str, frozenset[WorkloadKey]] = {}
        self._files: dict[str, frozenset[WorkloadKey]] = {}

    def read_state(self) -> ReleaseState:
        """``main``'s head and every ``nova/clusters/*`` ref, in one fetch that also brings their commits
        into the cache (for ``changed_clusters`` and ``move``)."""
        clusters = f"+refs/heads/{RELEASE_BRANCH_PREFIX}*:{LOCAL_PREFIX}clusters/*"
        main = f"+refs/heads/{self.branch}:{LOCAL_PREFIX}main"
        try:
            self.repo.remote.fetch([main, clusters], no_tags=True, prune=True)
        except GitFailed as failure:
            if "couldn't find remote ref" not in failure.stderr:
                raise gitwriting.remote_error(self.repo.url, "read the release refs of", failure) from None
            # nothing published yet: read the release refs alone (a rollout may be aborting the last ones)
            self.repo.git.run("update-ref", "-d", f"{LOCAL_PREFIX}main")
            try:
                self.repo.remote.fetch([clusters], no_tags=True, prune=True)
            except GitFailed as again:
                raise gitwriting.remote_error(self.repo.url, "read the release refs of", again) from None
        # for-each-ref, not GitPython's Reference.iter_items: one process lists the refs faster than
        # reading them in Python (loose files and packed-refs)
        listed = self.repo.git.run("for-each-ref", "--format=%(objectname) %(refname)", LOCAL_PREFIX)
        head: str | None = None
        released: dict[str, str] = {}
        for line in listed.stdout.decode().splitlines():
            sha, _, ref = line.partition(" ")
            name = ref.removeprefix(LOCAL_PREFIX)
            if name == "main":
                head = sha
            elif CLUSTER_NAME.match(cluster := name.removeprefix("clusters/")) and cluster != name:
                released[cluster] = sha  # a ref that names no valid cluster is nobody's release: ignored
        return ReleaseState(head, released)

    def move(self, moves: Mapping[str, RefMove]) -> MoveOutcome:
        """Push every move at once, each under its lease; all land or none does.

        Each target must be a commit of ``main`` as ``read_state`` last saw it (a release is a render
        that was published); a move whose target is already its expected commit is left out. A ref that
        someone else already moved to the very target counts as moved: git skips a ref that is up to date
        without checking its lease, and the state decided is there, reached by one update, not two."""
        wanted = {cluster: move for cluster, move in sorted(moves.items()) if move.expected != move.target}
        for cluster, move in wanted.items():
            check_move(cluster, move)
        if not wanted:
            return MoveOutcome.NOTHING
        self._check_on_main({move.target for move in wanted.values() if move.target is not None})
        leases = [f"{release_ref(c)}:{m.expected or ''}" for c, m in wanted.items()]
        try:
            result = self.repo.remote.push(
                {release_ref(c): m.target for c, m in wanted.items()}, atomic=True, force_with_lease=leases
            )
        except GitFailed as failure:
            raise gitwriting.remote_error(self.repo.url, "move the release refs of", failure) from None
        rejected = [update.line() for update in result.rejected]
        if not result.error and not rejected:
            return MoveOutcome.MOVED
        if rejected and all(is_lost_race(line) for line in rejected):
            return MoveOutcome.LOST
        refused = GitFailed(("push", self.repo.url), 1, "\n".join(rejected) or result.error)
        raise gitwriting.remote_error(self.repo.url, "move the release refs of", refused)

    def _check_on_main(self, targets: set[str]) -> None:
        repo = self.repo.repo
        for target in sorted(targets):
            try:
                on_main = repo.is_ancestor(repo.commit(target), repo.commit(f"{LOCAL_PREFIX}main"))
            except (ValueError, git.BadName, git.GitCommandError):  # a commit the cache does not have
                on_main = False
            if not on_main:
                raise errors.RepoError(
                    f"refusing to release {target} from {self.repo.url}: it is not a commit of "
                    f"{self.branch} as last read (read the release state again; was {self.branch} rewritten?)"
                )

    def cluster_trees(self, commit: str | None) -> Mapping[str, str]:
        """Each cluster directory of ``commit`` as cluster → tree id (none for no commit): one ``ls-tree``."""
        if commit is None:
            return {}
        if commit not in self._trees:
            if len(self._trees) >= TREES_KEPT:
                self._trees.clear()
            try:
                directory = self.repo.repo.commit(commit).tree / CLUSTERS_DIRECTORY
            except KeyError:  # no clusters/ at all
                directory = None
            except (ValueError, git.BadName, git.GitCommandError) as error:
                failed = gitrunning.failure(("ls-tree", commit, CLUSTERS_DIRECTORY), error)
                raise gitwriting.remote_error(self.repo.url, "read the cluster trees of", failed) from None
            trees = {tree.name: tree.hexsha for tree in directory.trees} if directory is not None else {}
            self._trees[commit] = trees
        return self._trees[commit]

    def changed_clusters(self, released: str | None, new: str, clusters: Iterable[str]) -> frozenset[str]:
        """Which of ``clusters`` have a ``clusters/<cluster>/`` that differs between ``released`` (None:
        never released) and ``new``: changed, added or removed. A cluster in neither is unchanged."""
        before, after = self.cluster_trees(released), self.cluster_trees(new)
        return frozenset(cluster for cluster in clusters if before.get(cluster) != after.get(cluster))

    def rendered_workloads(self, commit: str, clusters: Iterable[str]) -> dict[str, frozenset[WorkloadKey]]:
        """Each of ``clusters`` → the workloads rendered into ``clusters/<cluster>/`` at ``commit`` that an
        agent reports health for (``rollouts.health.RENDERED_WORKLOAD_KINDS``): every manifest file below
        the directory, as the agent reads it; a namespaced object without a namespace is in ``default``;
        empty for no directory. A file that does not parse contributes what parsed before its error (the
        agent refuses the whole directory then, and its report says so).

        One ``ls-tree`` of the commit's cluster directories and one ``cat-file --batch`` of the files not
        read before, and only when some directory (by tree id) was not read before."""
        trees = self.cluster_trees(commit)
        wanted = {cluster: trees[cluster] for cluster in clusters if cluster in trees}
        # what this call answers from is kept aside first: making room in the cache below must not drop a
        # directory it has already looked up
        known = {tree: self._directories[tree] for tree in wanted.values() if tree in self._directories}
        unread = {cluster: tree for cluster, tree in sorted(wanted.items()) if tree not in known}
        if unread:
            read = self._read_directories(commit, unread)
            known.update(read)
            if len(self._directories) + len(read) > WORKLOADS_KEPT:
                self._directories.clear()
            self._directories.update(itertools.islice(read.items(), WORKLOADS_KEPT))
        return {cluster: known[wanted[cluster]] if cluster in wanted else frozenset() for cluster in clusters}

    def _read_directories(self, commit: str, wanted: Mapping[str, str]) -> dict[str, frozenset[WorkloadKey]]:
        """Tree id → workloads, for each cluster → tree id of ``wanted`` (directories of ``commit``)."""
        paths = [f"{CLUSTERS_DIRECTORY}/{cluster}/" for cluster in sorted(wanted)]
        try:
            listed = self.repo.git.run("ls-tree", "-r", "-z", "--full-tree", commit, "--", *paths).stdout
        except GitFailed as failure:
            raise gitwriting.remote_error(self.repo.url, "read the cluster directories of", failure) from None
        files: dict[str, list[tuple[str, str]]] = {cluster: [] for cluster in wanted}
        for record in listed.split(b"\0"):
            meta, _, raw_path = record.partition(b"\t")
            if not meta:
                continue
            mode, kind, sha = meta.decode().split()
            path = raw_path.decode("utf-8", "surrogateescape")
            name = path.rpartition("/")[2]
            cluster = path.split("/", 2)[1]
            if (
                kind != "blob"
                or mode == SYMLINK_MODE
                or cluster not in files
                or name in KUSTOMIZATION_FILES
                or not name.endswith(MANIFEST_SUFFIXES)
            ):
                continue
            files[cluster].append((sha, path))
        self._read_files([entry for entries in files.values() for entry in entries])
        return {
            wanted[cluster]: frozenset(key for sha, _ in entries for key in self._files[sha])
            for cluster, entries in files.items()
        }

    def _read_files(self, entries: Sequence[tuple[str, str]]) -> None:
        """Keep the workloads of each (blob id, path) not kept yet: one ``cat-file --batch`` per chunk."""
        unread = list({sha: path for sha, path in entries if sha not in self._files}.items())
        if len(self._files) + len(unread) > BLOBS_KEPT:
            self._files.clear()
            unread = list(dict(entries).items())
        for start in range(0, len(unread), BATCH_FILES):
            chunk = unread[start : start + BATCH_FILES]
            request = "".join(f"{sha}\n" for sha, _ in chunk).encode()
            try:
                data = self.repo.git.run("cat-file", "--batch", stdin=request).stdout
            except GitFailed as failure:
                raise gitwriting.remote_error(self.repo.url, "read the rendered files of", failure) from None
            offset = 0
            for sha, path in chunk:
                header_end = data.index(b"\n", offset)
                header = data[offset:header_end].split()
                size = int(header[2]) if len(header) == 3 else 0  # "<sha> missing": nothing to read
                start_of_data = header_end + 1
                self._files[sha] = workloads_of(path, data[start_of_data : start_of_data + size])
                offset = start_of_data + size + (1 if len(header) == 3 else 0)


def workloads_of(path: str, data: bytes) -> frozenset[WorkloadKey]:
    """(group, kind, namespace, name) of the objects of ``RENDERED_WORKLOAD_KINDS`` in one manifest file."""
    if len(data) > loading.MAX_FILE_BYTES:
        return frozenset()  # the agent refuses such a file, and the directory with it
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return frozenset()
    documents, _ = loading.load_documents(path, text)
    keys: set[WorkloadKey] = set()
    for document in documents:
        body = document.body
        group = str(body.get("apiVersion", "")).rpartition("/")[0]
        kind = str(body.get("kind", ""))
        metadata = body.get("metadata")
        if (group, kind) not in RENDERED_WORKLOAD_KINDS or not isinstance(metadata, dict):
            continue
        name, namespace = metadata.get("name"), metadata.get("namespace")
        if isinstance(name, str) and name:
            keys.add(
                (
                    group,
                    kind,
                    namespace if isinstance(namespace, str) and namespace else DEFAULT_NAMESPACE,
                    name,
                )
            )
    return frozenset(keys)


def check_move(cluster: str, move: RefMove) -> None:
    """Refuse what would make a malformed push: a name git or the agents would read differently, or a
    target that is not a full commit id (an abbreviation or a ref name could resolve to something else)."""
    if not CLUSTER_NAME.match(cluster):
        raise ValueError(f"not a cluster name: {cluster!r}")
    for commit in (move.expected, move.target):
        if commit is not None and not COMMIT_ID.match(commit):
            raise ValueError(f"not a full commit id for cluster {cluster}: {commit!r}")


def is_lost_race(rejection: str) -> bool:
    """Whether a ``git push --porcelain`` rejection line means that someone else moved a ref first."""
    if any(reason in rejection for reason in gitwriting.POLICY_REFUSALS):
        return False
    return any(reason in rejection for reason in LOST_RACE)
