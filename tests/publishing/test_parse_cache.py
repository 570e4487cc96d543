"""The parse cache (``sources.parsecache``) never returns what the bytes do not say, and writes itself back
only when enough has changed.

Behaviours covered:
- a load through the cache gives the same documents and problems as parsing, and a changed file is parsed
  again (the key is the file's bytes), never served from the cache;
- a load that parsed only a few files anew leaves the cache file as it was; one that parsed more than
  ``UNSAVED_CHANGES`` rewrites it;
- an unreadable cache file is ignored.
"""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from nova_gitops.sources import directory, parsecache
from nova_gitops.sources.parsecache import ParseCache


def write(root: Path, count: int, replicas: int = 1) -> None:
    root.mkdir(exist_ok=True)
    for index in range(count):
        (root / f"w{index:03}.yaml").write_text(
            "apiVersion: apps/v1\nkind: Deployment\n"
            f"metadata:\n  name: w{index}\nspec:\n  replicas: {replicas}\n"
        )


def test_cached_loads_equal_parsing_and_changed_files_are_parsed_again(tmp_path: Path) -> None:
    source = tmp_path / "source"
    write(source, 3)
    (source / "bad.yaml").write_text("a: [\n")
    cache_file = tmp_path / "cache.pickle"
    assert directory.read_source(source, cache=ParseCache(cache_file)) == directory.read_source(source)
    assert cache_file.exists()
    cached = directory.read_source(source, cache=ParseCache(cache_file))
    assert cached == directory.read_source(source)
    (source / "w001.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: changed\n")
    after = directory.read_source(source, cache=ParseCache(cache_file))
    assert after == directory.read_source(source)
    assert any(document.body["metadata"]["name"] == "changed" for document in after.documents)


def test_the_cache_is_written_back_only_when_enough_changed(tmp_path: Path) -> None:
    source = tmp_path / "source"
    write(source, parsecache.UNSAVED_CHANGES + 10)
    cache_file = tmp_path / "cache.pickle"
    directory.read_source(source, cache=ParseCache(cache_file))
    written = cache_file.read_bytes()
    (source / "w000.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n")
    directory.read_source(source, cache=ParseCache(cache_file))
    assert cache_file.read_bytes() == written
    write(source, parsecache.UNSAVED_CHANGES + 10, replicas=2)
    directory.read_source(source, cache=ParseCache(cache_file))
    assert cache_file.read_bytes() != written


def test_an_unreadable_cache_is_ignored(tmp_path: Path) -> None:
    source = tmp_path / "source"
    write(source, 2)
    cache_file = tmp_path / "cache.pickle"
    cache_file.write_bytes(b"not a pickle")
    assert directory.read_source(source, cache=ParseCache(cache_file)) == directory.read_source(source)


def test_a_parse_cache_and_what_it_loaded_are_freed_without_the_garbage_collector(tmp_path: Path) -> None:
    """The cache made a reference cycle with its classification memo, so every document a load read (~89k
    objects at the reference fleet) stayed alive until a garbage collection: ~45 ms of the collector's at
    the end of each publish, and the controller's memory between collections."""
    source = tmp_path / "source"
    write(source, 3)
    gc.collect()
    gc.disable()
    try:
        cache = ParseCache(tmp_path / "cache.pickle")
        memo = cache.memo
        loaded = directory.read_source(source, cache=cache)
        kept = weakref.ref(cache)
        del cache, memo, loaded
        assert kept() is None
    finally:
        gc.enable()
