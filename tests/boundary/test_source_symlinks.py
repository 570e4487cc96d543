"""What a source can make us read: its own regular files, nothing of the machine that reads it.

Anyone who can push to a source repository decides its contents, symbolic links included; the reader runs
on a CI runner or in the controller's pod, next to files that person must not see.

Behaviours covered, for a directory source (``sources.directory``):
- a symlink to a host file (absolute, or ``..`` past the root), a dangling one, one to ``/dev/zero``, one
  that loops, and one into a directory outside the root: each is a problem naming the path and the reason,
  and the host file's content (a unique marker) appears in no document, text or problem;
- a symlink to a file inside the root is read like that file;
- a FIFO is a problem and is never opened (the read finishes; opening one would wait for a writer);
- a file over the size limit is a problem; the limit counts bytes read (a pipe has no size to ``stat``);
- a symlinked directory is not walked, and is a problem naming it (one leading out of the source is
  ``OUTSIDE``, one to a directory nothing reads ``LINKED_DIRECTORY``, a kustomization below one too); one to
  a directory of the source that is read anyway is a warning, printed by ``render``, which still renders;
  a previous render is recognised only by a regular ``placement.yaml`` (a FIFO or a symlink to a host
  file there is neither read nor waited on);
- a single file given as the source gets the same checks (a FIFO, a symlink leaving its directory);
for a git source (``sources.gitsources``):
- committed symlinks (to a host file, escaping with ``..``, dangling, looping, to an in-tree file or
  directory) are resolved within the tree (``link_reach``, a table) and exported so that no link in the
  export leads out of it; the reader reports the same problems as for a directory source, the marker
  never appears, and an in-tree link is read as a copy of its file;
- every other file is exported with the bytes and executable bit a checkout gives (names with spaces and
  non-ASCII, identical blobs at two paths, empty files, submodules as empty directories);
and through the CLI: ``nova-gitops render`` of a directory and of a ``file://`` git source holding a link
to a host secret exits 2, names the link, and prints nothing of the secret.
"""

from __future__ import annotations

import os
import subprocess
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from nova_gitops.sources import directory, exporting, fingerprinting, gitsources, reading
from tests.builders import cluster, deployment, policy

T = TypeVar("T")
MARKER = f"nova-host-secret-{uuid.uuid4().hex}"
SECRET = (
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: stolen\n  namespace: demo\n"
    f"  labels:\n    app: demo\nstringData:\n  token: {MARKER}\n"
)
PASSWD = f"root:x:0:0:{MARKER}:/root:/bin/bash\n"  # not a mapping: an error would once quote all of it


def finishes(work: Callable[[], T], seconds: float = 20.0) -> T:
    """``work()``'s result, failing (not hanging) when it blocks: a regression that opens a FIFO waits."""
    result: list[T] = []
    thread = threading.Thread(target=lambda: result.append(work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert result, f"did not finish in {seconds} s: something was opened or read that must not be"
    return result[0]


def everything(files: directory.SourceFiles) -> str:
    """All a read gives the caller, as text: documents, texts and problems."""
    return repr(files.documents) + repr(files.texts) + "\n".join(str(p) for p in files.problems)


def problems(files: directory.SourceFiles) -> dict[str, str]:
    return {problem.location.file: problem.message for problem in files.problems}


def write_source(root: Path) -> Path:
    """A valid source (cluster, policy, workload) that renders on its own."""
    root.mkdir(parents=True, exist_ok=True)
    documents = (cluster("c1"), policy("p"), deployment("web"))
    (root / "source.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return root


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """Files of "the machine": a secret manifest, a passwd-like file, a directory of manifests."""
    outside = tmp_path / "host"
    (outside / "manifests").mkdir(parents=True)
    (outside / "secret.yaml").write_text(SECRET)
    (outside / "passwd").write_text(PASSWD)
    (outside / "manifests" / "secret.yaml").write_text(SECRET)
    (outside / "placement.yaml").write_text("apiVersion: gitops.nova.elotl.co/v1alpha1\n")
    (outside / "clusters").mkdir()
    return outside


# ----- directory sources


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("{host}/secret.yaml", reading.OUTSIDE),
        ("{host}/passwd", reading.OUTSIDE),
        ("../host/secret.yaml", reading.OUTSIDE),
        ("sub/../../host/passwd", reading.OUTSIDE),
        ("/dev/zero", reading.OUTSIDE),
        ("{host}/missing.yaml", reading.OUTSIDE),  # outside: whether anything is there is not told
        ("missing.yaml", reading.MISSING),
        ("steal.yaml", reading.NOT_REGULAR),  # itself: a loop
    ],
)
def test_a_link_leaving_the_source_or_to_no_file_is_a_problem_never_read(
    tmp_path: Path, host: Path, target: str, reason: str
) -> None:
    source = write_source(tmp_path / "src")
    (source / "sub").mkdir()
    (source / "sub" / "keep.yaml").write_text("")
    (source / "steal.yaml").symlink_to(target.format(host=host))
    files = finishes(lambda: directory.read_source(source))
    assert problems(files) == {"steal.yaml": reason}
    assert MARKER not in everything(files)
    assert "steal.yaml" not in files.texts


def test_a_link_to_a_file_inside_the_source_is_read_as_that_file(tmp_path: Path) -> None:
    source = write_source(tmp_path / "src")
    (source / "base").mkdir()
    (source / "base" / "config.yml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    (source / "linked.yaml").symlink_to("base/config.yml")
    (source / "absolute.yaml").symlink_to(source / "base" / "config.yml")
    files = directory.read_source(source)
    assert files.problems == ()
    assert files.texts["linked.yaml"] == files.texts["absolute.yaml"] == files.texts["base/config.yml"]


def test_a_fifo_is_never_opened(tmp_path: Path) -> None:
    source = write_source(tmp_path / "src")
    os.mkfifo(source / "pipe.yaml")
    (source / "via-link.yaml").symlink_to("pipe.yaml")
    files = finishes(lambda: directory.read_source(source))
    assert problems(files) == {"pipe.yaml": reading.NOT_REGULAR, "via-link.yaml": reading.NOT_REGULAR}


def test_a_file_over_the_limit_is_a_problem(tmp_path: Path) -> None:
    source = write_source(tmp_path / "src")
    with open(source / "big.yaml", "wb") as big:
        big.truncate(reading.MAX_FILE_BYTES + 1)
    assert problems(directory.read_source(source)) == {"big.yaml": reading.TOO_LARGE}
    with reading.SourceReader(source) as reader:
        (source / "ten.yaml").write_bytes(b"0123456789")
        assert reader.read("ten.yaml", limit=10) == b"0123456789"
        with pytest.raises(reading.Refused, match="limit"):
            reader.read("ten.yaml", limit=9)


def test_the_limit_counts_what_is_read_not_what_stat_says() -> None:
    read_end, write_end = os.pipe()  # fstat says 0 bytes
    try:
        os.write(write_end, b"x" * 100)
        os.close(write_end)
        with pytest.raises(reading.Refused):
            reading.read_limited(read_end, 99)
    finally:
        os.close(read_end)
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, b"x" * 100)
        os.close(write_end)
        assert reading.read_limited(read_end, 100) == b"x" * 100
    finally:
        os.close(read_end)


def test_a_linked_directory_is_not_walked_and_is_said(tmp_path: Path, host: Path) -> None:
    source = write_source(tmp_path / "src")
    (source / "outside").symlink_to(host / "manifests")
    (source / "inside").symlink_to(source)  # a loop, were it followed
    (source / ".hidden-link").symlink_to(host / "manifests")  # hidden: not read, as hidden directories
    (source / "apps" / "real").mkdir(parents=True)
    (source / "apps" / "real" / "config.yml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
    )
    (source / "apps" / "alias").symlink_to("real")
    files = directory.read_source(source)
    assert directory.yaml_files(source) == ["apps/real/config.yml", "source.yaml"]
    assert problems(files) == {
        "outside": reading.OUTSIDE,
        "inside": directory.LINKED_READ_DIRECTORY.format(target="the source's root"),
        "apps/alias": directory.LINKED_READ_DIRECTORY.format(target="apps/real/"),
    }
    assert [problem.location.line for problem in files.problems] == [1, 1, 1]
    errors = {problem.location.file for problem in files.problems if problem.is_error}
    assert errors == {"outside"}  # the links inside lead to files read where they are: nothing is lost
    assert MARKER not in everything(files)


def test_a_kustomization_below_a_linked_directory_is_a_problem_not_a_silent_gap(tmp_path: Path) -> None:
    source = write_source(tmp_path / "src")
    (source / ".overlays" / "prod").mkdir(parents=True)
    (source / ".overlays" / "prod" / "kustomization.yaml").write_text("resources:\n- deployment.yaml\n")
    (source / ".overlays" / "prod" / "deployment.yaml").write_text(yaml.safe_dump(deployment("api")))
    (source / "prod").symlink_to(".overlays/prod")
    code, output = run("validate", str(source))
    assert code == 2, output
    assert f"prod:1: {directory.LINKED_DIRECTORY}" in output


def test_a_convenience_link_to_a_directory_still_renders_and_is_named(tmp_path: Path) -> None:
    """A source that linked a directory it also holds (``web-current -> web``) rendered before issue 21 and
    still does, once: the link is named on stderr, its files are read at their own path only."""
    source = write_source(tmp_path / "src")
    (source / "web").mkdir()
    (source / "web" / "api.yaml").write_text(yaml.safe_dump(deployment("api")))
    (source / "web-current").symlink_to("web")
    code, output = run("render", str(source), "-o", str(tmp_path / "out"))
    assert code == 0, output
    assert "web-current:1: warning: symlink to a directory is not followed" in output
    rendered = sorted(path.name for path in (tmp_path / "out" / "clusters").rglob("deployment-*.yaml"))
    assert rendered == ["deployment-api.yaml", "deployment-web.yaml"]


def test_a_linked_directory_changes_the_fingerprint_of_the_source(tmp_path: Path) -> None:
    source = write_source(tmp_path / "src")
    (source / "apps").mkdir()
    fingerprint = fingerprinting.DirectoryFingerprint(source)
    first = fingerprint.digest()
    (source / "alias").symlink_to("apps")  # nothing else changes: the controller must render to report it
    assert fingerprint.digest() != first


def test_a_previous_render_is_recognised_only_by_a_regular_placement_file(tmp_path: Path, host: Path) -> None:
    source = write_source(tmp_path / "src")
    for name in ("fifo", "linked"):
        (source / name / "clusters").mkdir(parents=True)
        (source / name / "x.yaml").write_text("")
    os.mkfifo(source / "fifo" / "placement.yaml")
    (source / "linked" / "placement.yaml").symlink_to(host / "placement.yaml")
    found = finishes(lambda: directory.yaml_files(source))
    walked = ["fifo/placement.yaml", "fifo/x.yaml", "linked/placement.yaml", "linked/x.yaml", "source.yaml"]
    assert found == walked
    assert not directory.is_previous_render(host / "manifests")
    assert directory.is_previous_render(host)  # the real thing, read directly


def test_a_single_file_source_gets_the_same_checks(tmp_path: Path, host: Path) -> None:
    single = tmp_path / "single"  # the file's directory is its source root
    single.mkdir()
    os.mkfifo(single / "pipe.yaml")
    (single / "steal.yaml").symlink_to(host / "secret.yaml")
    (single / "plain.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    (single / "linked.yaml").symlink_to("plain.yaml")
    assert problems(finishes(lambda: directory.read_source(single / "pipe.yaml"))) == {
        "pipe.yaml": reading.NOT_REGULAR
    }
    stolen = directory.read_source(single / "steal.yaml")
    assert problems(stolen) == {"steal.yaml": reading.OUTSIDE} and MARKER not in everything(stolen)
    assert list(directory.read_source(single / "plain.yaml").texts) == ["plain.yaml"]
    assert list(directory.read_source(single / "linked.yaml").texts) == ["linked.yaml"]


# ----- git sources


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def committed(work: Path) -> str:
    git("init", "--quiet", "--initial-branch=main", str(work), cwd=work.parent)
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", "source", cwd=work)
    return git("rev-parse", "HEAD", cwd=work)


@pytest.fixture
def linked_repo(tmp_path: Path, host: Path) -> Path:
    """A source repository whose commit holds every kind of link (git stores them as links)."""
    work = write_source(tmp_path / "repo")
    (work / "base").mkdir()
    (work / "base" / "config.yml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    links = {
        "steal.yaml": str(host / "secret.yaml"),
        "passwd.yaml": str(host / "passwd"),
        "up.yaml": "../host/secret.yaml",
        "deep/up.yaml": "../../host/secret.yaml",
        "zero.yaml": "/dev/zero",
        "dangling.yaml": "missing.yaml",
        "loop-a.yaml": "loop-b.yaml",
        "loop-b.yaml": "loop-a.yaml",
        "linked.yaml": "base/config.yml",
        "base-link": "base",
        "via-dir.yaml": "base-link/config.yml",
        "hostdir": str(host / "manifests"),
    }
    for name, target in links.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).symlink_to(target)
    committed(work)
    return work


EXPECTED = {
    "steal.yaml": reading.OUTSIDE,
    "passwd.yaml": reading.OUTSIDE,
    "up.yaml": reading.OUTSIDE,
    "deep/up.yaml": reading.OUTSIDE,
    "zero.yaml": reading.OUTSIDE,
    "dangling.yaml": reading.MISSING,
    "loop-a.yaml": reading.NOT_REGULAR,
    "loop-b.yaml": reading.NOT_REGULAR,
    "base-link": directory.LINKED_READ_DIRECTORY.format(target="base/"),
}


def test_git_links_are_resolved_in_the_tree_and_never_lead_out(
    linked_repo: Path, host: Path, tmp_path: Path
) -> None:
    with gitsources.checkout(
        gitsources.parse_spec(f"file://{linked_repo}"), cache_dir=tmp_path / "cache"
    ) as checkout:
        files = finishes(lambda: directory.read_source(checkout.root))
        for path in checkout.root.rglob("*"):
            if path.is_symlink():
                target = os.readlink(path)
                assert str(host) not in target
                if target != exporting.OUTSIDE_LINK:  # to a name in the export, never out of it
                    assert not target.startswith("/")
                    resolved = os.path.realpath(path)
                    assert os.path.commonpath(
                        [resolved, os.path.realpath(checkout.root)]
                    ) == os.path.realpath(checkout.root)
        assert os.readlink(checkout.root / "hostdir") == exporting.OUTSIDE_LINK
        assert os.readlink(checkout.root / "base-link") == "base"  # a link to a directory: reported
    assert problems(files) == EXPECTED
    assert MARKER not in everything(files)
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
    assert files.texts["linked.yaml"] == files.texts["via-dir.yaml"] == config
    # the same links in the work tree, read as a directory source, give the same problems, and one more:
    # the link to a host directory is one there; in the export it leads nowhere, and is not read either
    assert problems(directory.read_source(linked_repo)) == {**EXPECTED, "hostdir": reading.OUTSIDE}


@pytest.mark.parametrize(
    ("link", "target", "reach"),
    [
        ("a.yaml", "/etc/passwd", (exporting.Reach.OUTSIDE, "")),
        ("a.yaml", "../x.yaml", (exporting.Reach.OUTSIDE, "")),
        ("d/a.yaml", "../x.yaml", (exporting.Reach.FILE, "x.yaml")),
        ("d/a.yaml", "./../d/../x.yaml", (exporting.Reach.FILE, "x.yaml")),
        ("d/a.yaml", "../../x.yaml", (exporting.Reach.OUTSIDE, "")),
        ("a.yaml", "l/y.yaml", (exporting.Reach.FILE, "d/y.yaml")),  # through a link to a directory
        ("e/a.yaml", "../l", (exporting.Reach.DIRECTORY, "d")),
        ("a.yaml", "l/../x.yaml", (exporting.Reach.FILE, "x.yaml")),  # .. of where l leads: the top
        ("a.yaml", "abs/y.yaml", (exporting.Reach.OUTSIDE, "")),
        ("a.yaml", "x.yaml/y.yaml", (exporting.Reach.MISSING, "")),
        ("a.yaml", "nothing/../x.yaml", (exporting.Reach.MISSING, "")),
        ("a.yaml", "d", (exporting.Reach.DIRECTORY, "d")),
        ("a.yaml", ".", (exporting.Reach.DIRECTORY, "")),
        ("a.yaml", "a.yaml", (exporting.Reach.LOOP, "")),
        ("a.yaml", "", (exporting.Reach.DIRECTORY, "")),
    ],
)
def test_link_reach(link: str, target: str, reach: tuple[exporting.Reach, str]) -> None:
    targets = {link: target, "l": "d", "abs": "/etc"}
    files = {"x.yaml", "d/y.yaml"}
    assert exporting.link_reach(link, targets, files, {"d"}) == reach


def test_git_export_has_the_bytes_and_modes_of_a_checkout(tmp_path: Path) -> None:
    work = tmp_path / "repo"
    files = {
        "a.yaml": b"kind: A\n",
        "same.yaml": b"kind: A\n",
        "empty.yaml": b"",
        "dir/sub dir/café.yaml": b"kind: B\r\n",
        "tool.sh": b"#!/bin/sh\n",
        ".github/ci.yml": b"on: push\n",
    }
    for name, data in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_bytes(data)
    (work / "tool.sh").chmod(0o755)
    revision = committed(work)
    git("update-index", "--add", "--cacheinfo", f"160000,{revision},vendor/module", cwd=work)
    git("commit", "--quiet", "-m", "a submodule", cwd=work)
    with gitsources.checkout_local(work, "main") as checkout:
        exported = {
            path.relative_to(checkout.root).as_posix(): path.read_bytes()
            for path in checkout.root.rglob("*")
            if path.is_file()
        }
        assert os.access(checkout.root / "tool.sh", os.X_OK)
        assert not os.access(checkout.root / "a.yaml", os.X_OK)
        assert (checkout.root / "vendor" / "module").is_dir()
        assert not any(path.is_symlink() for path in checkout.root.rglob("*"))
    assert exported == files


# ----- the CLI


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output + (result.stderr or "")


def test_render_of_a_directory_with_a_link_to_a_host_secret(tmp_path: Path, host: Path) -> None:
    source = write_source(tmp_path / "src")
    (source / "steal.yaml").symlink_to(host / "secret.yaml")
    (source / "passwd.yaml").symlink_to(host / "passwd")
    out = tmp_path / "out"
    code, output = run("render", str(source), "-o", str(out))
    assert code == 2, output
    assert f"steal.yaml:1: {reading.OUTSIDE}" in output
    assert f"passwd.yaml:1: {reading.OUTSIDE}" in output
    assert MARKER not in output and not out.exists()


def test_render_of_a_git_source_with_a_committed_link_to_a_host_secret(
    tmp_path: Path, host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = write_source(tmp_path / "repo")
    (work / "steal.yaml").symlink_to(host / "secret.yaml")
    committed(work)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    out = tmp_path / "out"
    code, output = run("render", f"file://{work}@main", "-o", str(out))
    assert code == 2, output
    assert f"steal.yaml:1: {reading.OUTSIDE}" in output
    assert MARKER not in output and not out.exists()
    # the same link made to lead inside the tree (a hidden directory, which is not read by itself)
    (work / ".shared").mkdir()
    (work / ".shared" / "api.yaml").write_text(yaml.safe_dump(deployment("api")))
    (work / "steal.yaml").unlink()
    (work / "steal.yaml").symlink_to(".shared/api.yaml")
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", "a link inside", cwd=work)
    code, output = run("render", f"file://{work}@main", "-o", str(out))
    assert code == 0, output
    assert (out / "clusters/c1/demo/deployment-api.yaml").is_file()
    assert MARKER not in "".join(path.read_text() for path in out.rglob("*") if path.is_file())
