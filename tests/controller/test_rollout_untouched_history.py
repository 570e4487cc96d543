"""Which clusters running the target the rollout's change did not touch (``Situation.untouched``), as the
rollout driver recomputes it from ``main``'s history with real git — never from the record, which people
can write (review of issue 21).

Behaviours covered, over a history of renders and reschedules (``Nova-Remedial: true``):
- the change is the latest commit that changed a fleet cluster's directory without the remedial trailer:
  a cluster it left alone is untouched, though reschedules after it changed its directory; a cluster it
  changed is not, though a reschedule came after it (a record cannot pass the change off as remedial);
- a commit that changed only a directory of no cluster of the fleet is not the change;
- a cluster whose directory a later reschedule returned to what it was before the change is untouched;
- a cluster that does not run the target is not in the set; with no change at all, every cluster running
  the target is untouched.
"""

from __future__ import annotations

from pathlib import Path

from nova_gitops.api.rollouts import RolloutStrategy
from nova_gitops.controller.rolloutstep import RolloutDriver
from nova_gitops.publishing import gitwriting
from tests import builders
from tests.publishing.conftest import git
from tests.publishing.test_releases import Rendered

REMEDIAL = "reschedule\n\nNova-Remedial: true"
FLEET = ("a", "b", "c", "d", "e")


def untouched(rendered: Rendered, tmp_path: Path) -> frozenset[str]:
    driver = RolloutDriver(gitwriting.RenderedRepo(tmp_path / "cache" / "repo", rendered.url))
    clusters = builders.source_set(*(builders.cluster(name) for name in FLEET)).clusters
    reading = driver.read(RolloutStrategy("fleet"), clusters, {})
    assert reading is not None
    return reading.situation.untouched


def test_the_change_is_the_latest_render_that_touched_a_cluster_other_than_by_a_reschedule(
    tmp_path: Path,
) -> None:
    rendered = Rendered(tmp_path)
    rendered.commit({f"clusters/{name}/x.yaml": "1" for name in FLEET}, "first render")
    rendered.commit({"clusters/a/x.yaml": "2", "clusters/d/x.yaml": "2"}, "the change")
    rendered.commit({"clusters/b/x.yaml": "2"}, REMEDIAL)
    rendered.commit({"clusters/gone/x.yaml": "1"}, "a directory of no cluster of the fleet")
    rendered.commit({"clusters/a/x.yaml": "3", "clusters/d/x.yaml": "1"}, REMEDIAL)
    target = rendered.commit({"PLACEMENT.md": "capacity"}, "placement only")
    for name in ("a", "b", "c", "d"):
        rendered.set_ref(name, target)
    before = git("--git-dir", str(rendered.bare), "rev-parse", "main~5")
    rendered.set_ref("e", before)
    # a: changed by the change (a reschedule after it does not make it remedial); b: only by a
    # reschedule; c: not at all; d: changed, then returned to what it was; e: does not run the target
    assert untouched(rendered, tmp_path) == frozenset({"b", "c", "d"})


def test_without_any_change_every_cluster_running_the_target_is_untouched(tmp_path: Path) -> None:
    rendered = Rendered(tmp_path)
    target = rendered.commit({"clusters/a/x.yaml": "1", "clusters/b/x.yaml": "1"}, REMEDIAL)
    rendered.set_ref("a", target)
    rendered.set_ref("b", target)
    assert untouched(rendered, tmp_path) == frozenset({"a", "b"})
