"""The digest of a source directory (``sources.fingerprinting``), on real files.

Behaviours covered: equal bytes give equal digests and, once a file is older than the racy margin, it is not
read again; a change is always seen — a rewrite of the same size within the file-time tick of the last
digest, a rewrite whose mtime is put back (ctime moves), a new, removed or renamed file, a symbolic link
pointed elsewhere (its own lstat does not change); what the reader never reads (``.git``, a previous render
kept in the source) does not count; a missing root or a single file as the source has a digest too.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from nova_gitops.sources.fingerprinting import DirectoryFingerprint

MARGIN_NS = 20_000_000  # 20 ms instead of 2 s, so the tests wait 50 ms, not seconds


def source(tmp_path: Path) -> Path:
    root = tmp_path / "source"
    (root / "apps").mkdir(parents=True)
    (root / "apps" / "web.yaml").write_text("kind: Deployment\nreplicas: 2\n")
    (root / "policy.yaml").write_text("kind: SchedulePolicy\n")
    return root


def settle() -> None:
    time.sleep(0.05)  # past the shortened racy margin


def test_equal_bytes_equal_digest_and_old_files_are_not_read_again(tmp_path: Path) -> None:
    root = source(tmp_path)
    settle()
    fingerprint = DirectoryFingerprint(root, racy_margin_ns=MARGIN_NS)
    first = fingerprint.digest()
    assert fingerprint.files_read == 2
    settle()
    assert fingerprint.digest() == first
    assert fingerprint.files_read == 0
    assert DirectoryFingerprint(root).digest() == first  # a fresh one agrees


def test_a_same_size_rewrite_right_after_a_digest_is_seen(tmp_path: Path) -> None:
    root = source(tmp_path)
    fingerprint = DirectoryFingerprint(root)  # the real 2 s margin
    first = fingerprint.digest()
    (root / "apps" / "web.yaml").write_text("kind: Deployment\nreplicas: 3\n")
    assert fingerprint.digest() != first


def test_a_rewrite_whose_mtime_is_put_back_is_seen(tmp_path: Path) -> None:
    root = source(tmp_path)
    path = root / "apps" / "web.yaml"
    settle()
    fingerprint = DirectoryFingerprint(root, racy_margin_ns=MARGIN_NS)
    first = fingerprint.digest()
    settle()
    before = os.stat(path)
    path.write_text("kind: Deployment\nreplicas: 3\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as rsync -t or tar would
    assert fingerprint.digest() != first


def test_new_removed_and_renamed_files_are_seen(tmp_path: Path) -> None:
    root = source(tmp_path)
    fingerprint = DirectoryFingerprint(root, racy_margin_ns=MARGIN_NS)
    digests = {fingerprint.digest()}
    (root / "apps" / "api.yaml").write_text("kind: Service\n")
    digests.add(fingerprint.digest())
    (root / "apps" / "api.yaml").rename(root / "apps" / "api2.yaml")
    digests.add(fingerprint.digest())
    (root / "apps" / "api2.yaml").unlink()
    assert fingerprint.digest() in digests  # back to the first
    assert len(digests) == 3


def test_a_link_pointed_elsewhere_is_seen(tmp_path: Path) -> None:
    root = source(tmp_path)
    (root / "a.yaml").write_text("kind: A\n")
    (root / "b.yaml").write_text("kind: B\n")
    (root / "current.yaml").symlink_to("a.yaml")
    settle()
    fingerprint = DirectoryFingerprint(root, racy_margin_ns=MARGIN_NS)
    first = fingerprint.digest()
    settle()
    assert fingerprint.digest() == first
    (root / "a.yaml").rename(root / "old.yaml")
    (root / "b.yaml").rename(root / "a.yaml")  # the link's own lstat is the same
    (root / "old.yaml").rename(root / "b.yaml")
    assert fingerprint.digest() != first


def test_what_the_reader_never_reads_does_not_count(tmp_path: Path) -> None:
    root = source(tmp_path)
    fingerprint = DirectoryFingerprint(root, racy_margin_ns=MARGIN_NS)
    first = fingerprint.digest()
    (root / ".git").mkdir()
    (root / ".git" / "index").write_bytes(b"churn")
    rendered = root / "rendered"
    (rendered / "clusters" / "wlc-1").mkdir(parents=True)
    (rendered / "placement.yaml").write_text("apiVersion: gitops.nova.elotl.co/v1alpha1\nkind: Placement\n")
    (rendered / "clusters" / "wlc-1" / "x.yaml").write_text("kind: X\n")
    assert fingerprint.digest() == first
    (root / ".env").write_text("KEY=1\n")  # hidden files count: a kustomize generator may read them
    assert fingerprint.digest() != first


def test_a_missing_root_or_a_single_file_has_a_digest(tmp_path: Path) -> None:
    missing = DirectoryFingerprint(tmp_path / "nowhere" / "source")
    assert missing.digest() == missing.digest()
    single = tmp_path / "web.yaml"
    single.write_text("kind: Deployment\n")
    fingerprint = DirectoryFingerprint(single)
    first = fingerprint.digest()
    single.write_text("kind: Service\n")
    assert fingerprint.digest() != first
