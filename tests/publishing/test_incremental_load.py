"""An incremental load (``load_source_with_digests`` with a parse cache, and a git export's blob ids) is a
full load: same source set, same digests, same warnings and problems at the same file, line and column.

Behaviours covered:
- after any sequence of changes to a directory source — a file edited, added, deleted or renamed, an error
  introduced and fixed, a CRD whose scope changes what another file's objects are, names duplicated across
  files, another default namespace — a load through the cache equals a load without it, at every step,
  whether the cache was written back after the last change or left behind it, and whether the cache is
  opened anew for each load or one object serves them all;
- the same for a git source exported revision by revision, where unchanged files are taken from the cache by
  blob id without being read, and for a directory that is a git work tree (committed, staged, edited,
  untracked, deleted and renamed files), where the index's blob ids of the files git vouches for do the
  same; a file git does not vouch for (edited, untracked, a link, assume-unchanged, skip-worktree) is read,
  no blob id is given where an attribute or ``core.autocrlf`` could convert a file, and a cache filled
  without blob ids learns them;
- the cache never makes a load read outside the source (a cached file replaced by a link leading out of it,
  with the very same bytes, is refused as a full load refuses it), never keeps a blob id the bytes read do
  not have, and a cache file that is not ours or damaged is ignored.
"""

from __future__ import annotations

import contextlib
import marshal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nova_gitops.errors import InputError
from nova_gitops.sources import directory, gitsources, parsecache, reading
from nova_gitops.sources.parsecache import ParseCache
from nova_gitops.workflows import rendering

FILES = ("a.yaml", "b.yaml", "sub/c.yaml", "sub/d.yaml")


def crd(scope: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"}, "scope": scope},
    }


def widget(name: str, namespace: str | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": metadata, "spec": {"size": 1}}


def deployment(name: str, namespace: str | None, app: str, replicas: int) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": {"app": app}}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "spec": {"replicas": replicas},
    }


def policy(name: str, app: str) -> dict[str, Any]:
    return {
        "apiVersion": "policy.elotl.co/v1alpha1",
        "kind": "SchedulePolicy",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {"matchLabels": {"team": "yes"}},
            "resourceSelectors": {"labelSelectors": [{"matchLabels": {"app": app}}]},
            "clusterSelector": {"matchLabels": {"env": "prod"}},
        },
    }


def cluster(name: str) -> dict[str, Any]:
    nodes = {f"{name}-n1": {"cpu": "4", "memory": "16Gi"}}
    return {
        "apiVersion": "cluster.elotl.co/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, "labels": {"env": "prod"}},
        "spec": {"name": name, "provider": "aws", "region": "us-east-1"},
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "capacityResources": nodes,
            "availableResources": nodes,
        },
    }


NAMES = st.sampled_from(["web", "api", "db", "cache", "queue", "auth"])  # duplicates across files happen
DEPLOYMENTS = st.builds(
    deployment, NAMES, st.sampled_from([None, "team"]), st.sampled_from(["x", "y"]), st.integers(1, 3)
)
VALID_DOCUMENTS = st.one_of(
    DEPLOYMENTS,
    DEPLOYMENTS,
    st.builds(widget, st.sampled_from(["w1", "w2", "w3"]), st.sampled_from([None, None, "team"])),
    st.builds(crd, st.sampled_from(["Namespaced", "Cluster"])),
    st.builds(
        lambda name, team: {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": {"team": team}},
        },
        st.sampled_from(["team", "other"]),
        st.sampled_from(["yes", "no"]),
    ),
    st.builds(policy, st.sampled_from(["p1", "p2", "p3"]), st.sampled_from(["x", "y", "z"])),
    st.builds(cluster, st.sampled_from(["c1", "c2", "c3"])),
    st.just({"apiVersion": "policy.elotl.co/v1alpha1", "kind": "ScheduleGroup", "metadata": {"name": "g"}}),
)
INVALID_DOCUMENTS = st.one_of(
    st.just(crd("Sideways")),
    st.builds(deployment, NAMES, st.just("Not_Valid"), st.just("x"), st.just(1)),
    st.just({"metadata": {"name": "kindless"}}),
    st.just({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "x-"}}),
)
DOCUMENTS = st.one_of(*[VALID_DOCUMENTS] * 9, INVALID_DOCUMENTS)


def text(*documents: dict[str, Any]) -> bytes:
    return yaml.safe_dump_all(documents, sort_keys=False).encode()


TEXTS = st.one_of(
    *[st.lists(DOCUMENTS, min_size=1, max_size=2).map(lambda documents: text(*documents))] * 9,
    st.just(b"apiVersion: v1\nkind: ConfigMap\nmetadata: [\n"),  # a syntax error
    st.just(b"\xff\xfe not text"),  # not UTF-8
)
CHANGES = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(FILES), TEXTS),
    st.tuples(st.just("delete"), st.sampled_from(FILES)),
    st.tuples(st.just("rename"), st.sampled_from(FILES), st.sampled_from(FILES)),
    st.tuples(st.just("namespace"), st.sampled_from([None, "team", "default"])),
)


def apply(root: Path, change: tuple[Any, ...]) -> None:
    if change[0] == "write":
        path = root / change[1]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(change[2])
    elif change[0] == "delete":
        (root / change[1]).unlink(missing_ok=True)
    elif change[0] == "rename" and (root / change[1]).exists():
        (root / change[2]).parent.mkdir(parents=True, exist_ok=True)
        (root / change[1]).replace(root / change[2])


def outcome(root: Path, **options: Any) -> tuple[Any, ...]:
    """What a load gives, with what equality of problems leaves out (their column and quoted line)."""
    try:
        source_set, digests = rendering.load_source_with_digests(root, **options)
    except InputError as error:
        return ("refused", [(problem, problem.column, problem.quoted) for problem in error.problems])
    warnings = [(problem, problem.column, problem.quoted) for problem in source_set.warnings]
    return ("loaded", source_set, digests, warnings)


@contextlib.contextmanager
def unsaved_changes(limit: int) -> Iterator[None]:
    kept = parsecache.UNSAVED_CHANGES
    parsecache.UNSAVED_CHANGES = limit
    try:
        yield
    finally:
        parsecache.UNSAVED_CHANGES = kept


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=st.lists(st.tuples(st.sampled_from(FILES), TEXTS), min_size=1, max_size=4),
    changes=st.lists(CHANGES, max_size=8),
    limit=st.sampled_from([0, parsecache.UNSAVED_CHANGES]),
)
@example(  # a CRD's new scope changes what an unchanged file's Widget is
    first=[("a.yaml", text(widget("w1", None))), ("b.yaml", text(crd("Namespaced")))],
    changes=[("write", "b.yaml", text(crd("Cluster"))), ("delete", "b.yaml")],
    limit=0,
)
@example(  # -n changes the namespace of an unchanged file's Deployment
    first=[("a.yaml", text(deployment("web", None, "x", 1)))], changes=[("namespace", "team")], limit=0
)
def test_a_directory_load_through_the_cache_is_a_full_load_after_every_change(
    first: list[tuple[str, bytes]], changes: list[tuple[Any, ...]], limit: int
) -> None:
    with tempfile.TemporaryDirectory() as scratch, unsaved_changes(limit):
        root, cache = Path(scratch, "source"), Path(scratch, "cache")
        root.mkdir()
        for name, text in first:
            apply(root, ("write", name, text))
        namespace: str | None = None
        kept = ParseCache(Path(scratch, "kept"))  # one object for every load, as a watching process keeps it
        for change in [("namespace", None), *changes]:
            apply(root, change)
            if change[0] == "namespace":
                namespace = change[1]
            full = outcome(root, namespace=namespace)
            incremental = outcome(root, parse_cache=ParseCache.for_source(cache, "src"), namespace=namespace)
            assert incremental == full, change
            assert outcome(root, parse_cache=kept, namespace=namespace) == full, change


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def started_work_tree(scratch: Path, first: list[tuple[str, bytes]]) -> tuple[Path, Path]:
    """A new git work tree under ``scratch`` with the files ``first`` written (not committed), and a cache
    directory beside it."""
    work, cache = scratch / "work", scratch / "cache"
    work.mkdir()
    git("init", "--quiet", "--initial-branch=main", cwd=work)
    for name, data in first:
        apply(work, ("write", name, data))
    return work, cache


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=st.lists(st.tuples(st.sampled_from(FILES), TEXTS), min_size=1, max_size=4),
    changes=st.lists(CHANGES, max_size=6),
)
def test_a_git_load_through_the_cache_by_blob_id_is_a_full_load_after_every_commit(
    first: list[tuple[str, bytes]], changes: list[tuple[Any, ...]]
) -> None:
    with tempfile.TemporaryDirectory() as scratch, unsaved_changes(0):
        work, cache = started_work_tree(Path(scratch), first)
        namespace: str | None = None
        for change in [("namespace", None), *changes]:
            apply(work, change)
            if change[0] == "namespace":
                namespace = change[1]
            git("add", "-A", cwd=work)
            git("commit", "--quiet", "--allow-empty", "-m", "change", cwd=work)
            with gitsources.checkout_local(work, "main") as checkout:
                assert checkout.blobs is not None
                full = outcome(checkout.root, namespace=namespace)
                incremental = outcome(
                    checkout.root,
                    parse_cache=ParseCache.for_source(cache, "src"),
                    namespace=namespace,
                    blobs=checkout.blobs,
                )
            assert incremental == full, change


DEPLOYMENT = b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: team\n"


def test_a_cached_file_replaced_by_a_link_out_of_the_source_is_refused_as_in_a_full_load(
    tmp_path: Path,
) -> None:
    root, outside, cache = tmp_path / "source", tmp_path / "outside.yaml", tmp_path / "cache"
    root.mkdir()
    (root / "web.yaml").write_bytes(DEPLOYMENT)
    rendering.load_source_with_digests(root, parse_cache=ParseCache.for_source(cache, "src"))
    outside.write_bytes(DEPLOYMENT)  # the very bytes the cache holds for web.yaml
    (root / "web.yaml").unlink()
    (root / "web.yaml").symlink_to(outside)
    for cached in (None, ParseCache.for_source(cache, "src")):
        try:
            rendering.load_source_with_digests(root, parse_cache=cached)
        except InputError as error:
            assert [str(problem) for problem in error.problems] == [f"web.yaml:1: {reading.OUTSIDE}"]
        else:
            raise AssertionError("a link out of the source was read")


def test_a_blob_id_the_bytes_read_do_not_have_is_not_kept(tmp_path: Path) -> None:
    """``blobs`` saying the wrong thing about a file (the export changed after it was written) cannot make a
    later load take the cache's documents for bytes it did not parse."""
    root, cache_file = tmp_path / "source", tmp_path / "cache"
    root.mkdir()
    (root / "web.yaml").write_bytes(DEPLOYMENT)
    claimed = {"web.yaml": "0" * 40}
    directory.read_source(root, cache=ParseCache(cache_file), blobs=claimed)
    (root / "web.yaml").write_bytes(DEPLOYMENT.replace(b"web", b"api"))
    again = directory.read_source(root, cache=ParseCache(cache_file), blobs=claimed)
    assert again == directory.read_source(root)
    assert again.documents[0].body["metadata"]["name"] == "api"


def test_unchanged_files_of_a_git_export_are_not_read(tmp_path: Path) -> None:
    """What makes a git source's load cost its change: a file the cache holds by blob id is taken without
    being opened (here: its exported copy is overwritten, and the load still has the blob's documents)."""
    work, cache_file = tmp_path / "work", tmp_path / "cache"
    work.mkdir()
    git("init", "--quiet", "--initial-branch=main", cwd=work)
    (work / "web.yaml").write_bytes(DEPLOYMENT)
    (work / "api.yaml").write_bytes(DEPLOYMENT.replace(b"web", b"api"))
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", "two", cwd=work)
    with gitsources.checkout_local(work, "main") as checkout:
        first = directory.read_source(checkout.root, cache=ParseCache(cache_file), blobs=checkout.blobs)
    (work / "api.yaml").write_bytes(DEPLOYMENT.replace(b"web", b"api2"))
    git("commit", "--quiet", "-am", "api changed", cwd=work)
    with gitsources.checkout_local(work, "main") as checkout:
        (checkout.root / "web.yaml").write_bytes(b"not: [read\n")
        files = directory.read_source(checkout.root, cache=ParseCache(cache_file), blobs=checkout.blobs)
        assert [document.body["metadata"]["name"] for document in files.documents] == ["api2", "web"]
        assert files.digests["web.yaml"] == first.digests["web.yaml"]
        assert "web.yaml" in files.texts and "web.yaml" in files.digests


def test_a_cache_file_that_is_not_ours_is_ignored(tmp_path: Path) -> None:
    root, cache = tmp_path / "source", tmp_path / "cache"
    root.mkdir()
    (root / "web.yaml").write_bytes(DEPLOYMENT)
    full = rendering.load_source_with_digests(root)
    cache_file = ParseCache.for_source(cache, "src").path
    cache_file.parent.mkdir(parents=True)
    for junk in (
        b"not marshal",
        marshal.dumps((parsecache.FORMAT, parsecache.code_digest(), {"web.yaml": ("short",)}, b"")),
        marshal.dumps(
            (parsecache.FORMAT, parsecache.code_digest(), {"web.yaml": (b"x", None, "d", (), ())}, b"?")
        ),
        marshal.dumps((parsecache.FORMAT - 1, parsecache.code_digest(), {}, b"")),
        marshal.dumps((parsecache.FORMAT, "other code", {}, b"")),
    ):
        cache_file.write_bytes(junk)
        assert rendering.load_source_with_digests(root, parse_cache=ParseCache(cache_file)) == full


WORK_TREE_CHANGES = st.one_of(
    CHANGES,
    st.just(("commit",)),  # what the work tree holds becomes HEAD: every file clean again
    st.just(("stage",)),  # added to the index, not committed: status still names the files
)


def work_tree_step(work: Path, change: tuple[Any, ...]) -> None:
    if change[0] == "commit":
        git("add", "-A", cwd=work)
        git("commit", "--quiet", "--allow-empty", "-m", "change", cwd=work)
    elif change[0] == "stage":
        git("add", "-A", cwd=work)
    else:
        apply(work, change)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=st.lists(st.tuples(st.sampled_from(FILES), TEXTS), min_size=1, max_size=4),
    changes=st.lists(WORK_TREE_CHANGES, max_size=8),
)
@example(  # a committed file edited in place, same size, right after the cache took it by blob id
    first=[("a.yaml", text(deployment("web", None, "x", 1)))],
    changes=[("commit",), ("write", "a.yaml", text(deployment("web", None, "x", 2))), ("commit",)],
)
def test_a_work_tree_load_through_the_cache_by_blob_id_is_a_full_load_after_every_change(
    first: list[tuple[str, bytes]], changes: list[tuple[Any, ...]]
) -> None:
    """Committed, staged, edited, untracked, deleted and renamed files, in any order: a load given the work
    tree's blob ids (``open_directory(with_blobs=True)``) is a full load at every step."""
    with tempfile.TemporaryDirectory() as scratch, unsaved_changes(0):
        work, cache = started_work_tree(Path(scratch), first)
        namespace: str | None = None
        for change in [("commit",), *changes]:
            work_tree_step(work, change)
            if change[0] == "namespace":
                namespace = change[1]
            checkout = gitsources.open_directory(work, with_blobs=True)
            assert checkout.blobs is not None
            full = outcome(work, namespace=namespace)
            incremental = outcome(
                work,
                parse_cache=ParseCache.for_source(cache, "src"),
                namespace=namespace,
                blobs=checkout.blobs,
            )
            assert incremental == full, change


def committed_work_tree(work: Path, files: dict[str, bytes]) -> None:
    work.mkdir()
    git("init", "--quiet", "--initial-branch=main", cwd=work)
    for name, data in files.items():
        apply(work, ("write", name, data))
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", "files", cwd=work)


def named(name: str) -> bytes:
    return DEPLOYMENT.replace(b"web", name.encode())


def test_unchanged_files_of_a_work_tree_are_not_read(tmp_path: Path) -> None:
    """What makes a directory source's load cost its change: a file git says holds its committed blob, and
    that the cache holds by that blob id, is taken without being opened (here: overwritten after git was
    asked, and the load still has the blob's documents)."""
    work, cache_file = tmp_path / "work", tmp_path / "cache"
    committed_work_tree(work, {"web.yaml": named("web"), "api.yaml": named("api")})
    first = gitsources.open_directory(work, with_blobs=True)
    assert first.blobs is not None and set(first.blobs) == {"web.yaml", "api.yaml"}
    directory.read_source(work, cache=ParseCache(cache_file), blobs=first.blobs)
    (work / "api.yaml").write_bytes(named("api2"))
    git("commit", "--quiet", "-am", "api changed", cwd=work)
    checkout = gitsources.open_directory(work, with_blobs=True)
    (work / "web.yaml").write_bytes(b"not: [read\n")
    files = directory.read_source(work, cache=ParseCache(cache_file), blobs=checkout.blobs)
    assert [document.body["metadata"]["name"] for document in files.documents] == ["api2", "web"]


def test_a_cache_written_without_blob_ids_learns_them_from_the_files_it_reads(tmp_path: Path) -> None:
    """A cache filled by loads that were not told blob ids (an older version, a plain directory) takes
    them from the next load that is, so the one after reads nothing it holds."""
    work, cache_file = tmp_path / "work", tmp_path / "cache"
    committed_work_tree(work, {"web.yaml": named("web")})
    with unsaved_changes(0):
        directory.read_source(work, cache=ParseCache(cache_file))
        checkout = gitsources.open_directory(work, with_blobs=True)
        assert checkout.blobs is not None
        learnt = directory.read_source(work, cache=ParseCache(cache_file), blobs=checkout.blobs)
        assert learnt == directory.read_source(work)
    assert ParseCache(cache_file).get_blob("web.yaml", checkout.blobs["web.yaml"]) is not None


def link_to_other(work: Path, name: str) -> None:
    (work / name).unlink()
    (work / name).symlink_to("target.txt")


def assume_unchanged(work: Path, name: str) -> None:
    git("update-index", "--assume-unchanged", name, cwd=work)
    (work / name).write_bytes(named("assumed2"))


def skip_worktree(work: Path, name: str) -> None:
    git("update-index", "--skip-worktree", name, cwd=work)
    (work / name).write_bytes(named("skipped2"))


def test_what_git_does_not_vouch_for_is_read(tmp_path: Path) -> None:
    """Edited, untracked, staged-but-edited-again, replaced by a link, marked assume-unchanged or
    skip-worktree (which ``status`` does not compare): none of these files gets a blob id, and the load is a
    full load of what the work tree holds."""
    work, cache_file = tmp_path / "work", tmp_path / "cache"
    names = ["edited", "staged", "linked", "assumed", "skipped", "kept"]
    committed_work_tree(
        work, {f"{name}.yaml": named(name) for name in names} | {"target.txt": named("linked2")}
    )
    with unsaved_changes(0):
        directory.read_source(
            work, cache=ParseCache(cache_file), blobs=gitsources.open_directory(work, with_blobs=True).blobs
        )
    (work / "edited.yaml").write_bytes(named("edited2"))
    (work / "staged.yaml").write_bytes(named("staged2"))
    git("add", "staged.yaml", cwd=work)
    (work / "staged.yaml").write_bytes(named("staged3"))
    link_to_other(work, "linked.yaml")
    assume_unchanged(work, "assumed.yaml")
    skip_worktree(work, "skipped.yaml")
    (work / "untracked.yaml").write_bytes(named("untracked"))
    checkout = gitsources.open_directory(work, with_blobs=True)
    assert checkout.blobs is not None and set(checkout.blobs) == {"kept.yaml", "target.txt"}
    incremental = outcome(work, parse_cache=ParseCache(cache_file), blobs=checkout.blobs)
    assert incremental == outcome(work)
    loaded = [manifest.name for manifest in incremental[1].workloads]
    assert set(loaded) == {"edited2", "staged3", "linked2", "assumed2", "skipped2", "kept", "untracked"}


@pytest.mark.parametrize(
    "conversion",
    ["committed", "untracked below", "ignored", "info/attributes", "core.autocrlf", "core.attributesFile"],
)
def test_no_blob_ids_when_git_could_convert_what_it_compares(tmp_path: Path, conversion: str) -> None:
    """Line-ending conversion, ``ident`` or a filter make a file that ``status`` calls unchanged differ from
    its blob: wherever an attribute or ``core.autocrlf`` could come from, no blob id is given at all."""
    work = tmp_path / "work"
    committed_work_tree(work, {"sub/web.yaml": named("web")})
    if conversion == "committed":
        (work / ".gitattributes").write_text("*.yaml ident\n")
        git("add", ".gitattributes", cwd=work)
        git("commit", "--quiet", "-m", "attributes", cwd=work)
    elif conversion == "untracked below":
        (work / "sub" / ".gitattributes").write_text("*.yaml text eol=crlf\n")
    elif conversion == "ignored":
        (work / ".gitignore").write_text(".gitattributes\n.gitignore\n")
        (work / "sub" / ".gitattributes").write_text("*.yaml text eol=crlf\n")
    elif conversion == "info/attributes":
        (work / ".git" / "info").mkdir(exist_ok=True)
        (work / ".git" / "info" / "attributes").write_text("*.yaml ident\n")
    elif conversion == "core.autocrlf":
        git("config", "core.autocrlf", "input", cwd=work)
    else:
        (tmp_path / "attributes").write_text("*.yaml ident\n")
        git("config", "core.attributesFile", str(tmp_path / "attributes"), cwd=work)
    assert gitsources.open_directory(work, with_blobs=True).blobs is None
    assert gitsources.open_directory(work, with_blobs=False).blobs is None


def test_a_damaged_cache_with_blob_ids_is_a_full_load(tmp_path: Path) -> None:
    work, cache = tmp_path / "work", tmp_path / "cache"
    committed_work_tree(work, {"web.yaml": DEPLOYMENT})
    blobs = gitsources.open_directory(work, with_blobs=True).blobs
    assert blobs is not None
    full = rendering.load_source_with_digests(work)
    cache_file = ParseCache.for_source(cache, "src").path
    cache_file.parent.mkdir(parents=True)
    rendering.load_source_with_digests(work, parse_cache=ParseCache(cache_file), blobs=blobs)
    whole = cache_file.read_bytes()
    blob = blobs["web.yaml"]
    for junk in (
        whole[: len(whole) // 2],
        marshal.dumps((parsecache.FORMAT, parsecache.code_digest(), {"web.yaml": (b"x", blob)}, b"")),
        marshal.dumps(
            (parsecache.FORMAT, parsecache.code_digest(), {"web.yaml": (b"x", blob, "d", ("?",), ())}, b"")
        ),
        marshal.dumps((parsecache.FORMAT, "other code", {"web.yaml": (b"x", blob, "d", (), ())}, b"")),
    ):
        cache_file.write_bytes(junk)
        assert (
            rendering.load_source_with_digests(work, parse_cache=ParseCache(cache_file), blobs=blobs) == full
        )


def test_a_linked_work_tree_has_blob_ids_unless_its_repository_has_attributes(tmp_path: Path) -> None:
    work, linked = tmp_path / "work", tmp_path / "linked"
    committed_work_tree(work, {"web.yaml": named("web")})
    git("worktree", "add", "--quiet", str(linked), cwd=work)
    checkout = gitsources.open_directory(linked, with_blobs=True)
    assert checkout.blobs is not None and set(checkout.blobs) == {"web.yaml"}
    (work / ".git" / "info").mkdir(exist_ok=True)
    (work / ".git" / "info" / "attributes").write_text("*.yaml ident\n")
    assert gitsources.open_directory(linked, with_blobs=True).blobs is None


def test_a_yaml_alias_is_one_object_through_the_cache_as_in_a_full_load(tmp_path: Path) -> None:
    """Sharing the texts of what the cache keeps copies a body once: an alias stays a reference to the one
    mapping it names (never expanded into copies), when parsed and when read back from the cache file."""
    root, cache_file = tmp_path / "source", tmp_path / "cache"
    root.mkdir()
    (root / "config.yaml").write_bytes(
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: team\n"
        b"  labels: &shared {app: web}\n  annotations: *shared\n"
    )
    full = directory.read_source(root)
    with unsaved_changes(0):
        parsed = directory.read_source(root, cache=ParseCache(cache_file))
    from_file = directory.read_source(root, cache=ParseCache(cache_file))
    for files in (full, parsed, from_file):
        assert files.documents == full.documents
        metadata = files.documents[0].body["metadata"]
        assert metadata["labels"] is metadata["annotations"]
