"""The collector pause of ``clients.collection`` when threads overlap (the controller's reconcile and its web
view's page): it stays paused until the last thread leaves, then is set back as the first found it."""

from __future__ import annotations

import gc
import threading

from nova_gitops.clients import collection


def test_overlapping_pauses_keep_the_collector_off_until_the_last_leaves() -> None:
    assert gc.isenabled()
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with collection.paused():
            inside.set()
            leave.wait(10)

    with collection.paused():
        thread = threading.Thread(target=other)
        thread.start()
        assert inside.wait(10)
    assert not gc.isenabled(), "the first to leave does not turn it on under the other"
    leave.set()
    thread.join(10)
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    try:
        with collection.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
