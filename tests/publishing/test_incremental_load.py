"""An incremental load (``load_source_with_digests`` with a parse cache, and a git export's blob ids) is a
full load: same source set, same digests, same warnings and problems at the same file, line and column.

Behaviours covered:
- after any sequence of changes to a directory source — a file edited, added, deleted or renamed, an error
  introduced and fixed, a CRD whose scope changes what another file's objects are, names duplicated across
  files, another default namespace — a load through the cache equals a load without it, at every step,
  whether the cache was written back after the last change or left behind it, and whether the cache is
  opened anew for each load or one object serves them all;
- the same for a git source exported revision by revision, where unchanged files are taken from the cache by
  blob id without being read;
- the cache never makes a load read outside the source (a cached file replaced by a link leading out of it,
  with the very same bytes, is refused as a full load refuses it), never keeps a blob id the bytes read do
  not have, and a cache file that is not ours is ignored.
"""

from __future__ import annotations

import contextlib
import marshal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nova_gitops.errors import InputError
from nova_gitops.sources import directory, parsecache
from nova_gitops.sources import git as git_sources
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


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=st.lists(st.tuples(st.sampled_from(FILES), TEXTS), min_size=1, max_size=4),
    changes=st.lists(CHANGES, max_size=6),
)
def test_a_git_load_through_the_cache_by_blob_id_is_a_full_load_after_every_commit(
    first: list[tuple[str, bytes]], changes: list[tuple[Any, ...]]
) -> None:
    with tempfile.TemporaryDirectory() as scratch, unsaved_changes(0):
        work, cache = Path(scratch, "work"), Path(scratch, "cache")
        work.mkdir()
        git("init", "--quiet", "--initial-branch=main", cwd=work)
        for name, text in first:
            apply(work, ("write", name, text))
        namespace: str | None = None
        for change in [("namespace", None), *changes]:
            apply(work, change)
            if change[0] == "namespace":
                namespace = change[1]
            git("add", "-A", cwd=work)
            git("commit", "--quiet", "--allow-empty", "-m", "change", cwd=work)
            with git_sources.checkout_local(work, "main") as checkout:
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
            assert [str(problem) for problem in error.problems] == [f"web.yaml:1: {directory.OUTSIDE}"]
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
    with git_sources.checkout_local(work, "main") as checkout:
        first = directory.read_source(checkout.root, cache=ParseCache(cache_file), blobs=checkout.blobs)
    (work / "api.yaml").write_bytes(DEPLOYMENT.replace(b"web", b"api2"))
    git("commit", "--quiet", "-am", "api changed", cwd=work)
    with git_sources.checkout_local(work, "main") as checkout:
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
