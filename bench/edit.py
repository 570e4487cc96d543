"""Benchmark: ``nova-gitops pin`` on one large file of many documents (issue 21: 19 s at 467 KB), for this
code and optionally another revision's, measured in the same run.

A source of two Clusters, a policy and one ``apps.yaml`` of about ``--size`` bytes of Deployments (each a
document of its own, or with ``--list`` the items of one ``kind: List``, as ``kubectl get -o yaml`` writes)
is generated once. Each measurement runs in a new process with the code first on ``sys.path``:

- ``edit_s``: the text edit alone (``edits.changes.set_metadata_entry``: the pin annotation set on one
  Deployment of the file's text, in memory), for a Deployment at the start, the middle and the end of the
  file; the budget is 1 s at 1 MB, whatever the file's length, as it is linear in it;
- ``pin_s``: the whole command without its writing, as ``pin --dry-run`` runs it: the source read and
  validated (``editing.load``, ``load_s``), then the edit, the edited source read again and validated, and
  the placement before and after rendered and compared (``proposing.pin``) — the same work ``validate`` and
  ``diff`` do on such a source, which grows with the number of objects, not only the file's length.

Prints a JSON object as its last line: per code, the file's size and document count and the medians.

    python bench/edit.py                            # 1 MB, this code only
    python bench/edit.py --list                     # the same Deployments as one kind: List
    python bench/edit.py --size 467000 --against 4d7063d --repetitions 1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIN = "nova.elotl.co/cluster"

CLUSTER = """\
apiVersion: cluster.elotl.co/v1alpha1
kind: Cluster
metadata:
  name: {name}
  labels: {{env: prod}}
status:
  conditions:
  - {{type: Ready, status: "True"}}
  capacityResources: {{{name}-n1: {{cpu: "4000", memory: 16000Gi}}}}
  availableResources: {{{name}-n1: {{cpu: "4000", memory: 16000Gi}}}}
"""
POLICY = """\
apiVersion: policy.elotl.co/v1alpha1
kind: SchedulePolicy
metadata:
  name: apps
spec:
  clusterSelector: {matchLabels: {env: prod}}
  resourceSelectors:
    labelSelectors:
    - matchLabels: {app: demo}
"""
DEPLOYMENT = """\
# web tier {index}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-{index}
  namespace: demo
  labels:
    app: demo
    tier: web  # the front end
spec:
  replicas: 2
  selector:
    matchLabels: {{app: web-{index}}}
  template:
    metadata:
      labels: {{app: web-{index}}}
    spec:
      containers:
      - name: main
        image: "nginx:1.27"
        resources:
          requests: {{cpu: 10m, memory: 16Mi}}
"""


def generate(root: Path, size: int, as_list: bool) -> int:
    """Write the source under ``root`` (a git work tree, as edits are made in a clone); the number of
    Deployments in ``apps.yaml``."""
    root.mkdir(parents=True)
    (root / "clusters.yaml").write_text(CLUSTER.format(name="c1") + "---\n" + CLUSTER.format(name="c2"))
    (root / "policy.yaml").write_text(POLICY)
    documents: list[str] = []
    total = 0
    while total < size:
        documents.append(DEPLOYMENT.format(index=len(documents)))
        total += len(documents[-1]) + 4
    if as_list:  # each item after its comment line: "# web tier N" then "- apiVersion: apps/v1"
        items = []
        for document in documents:
            comment, *body = document.splitlines(keepends=True)
            items += [comment, *(("- " if n == 0 else "  ") + line for n, line in enumerate(body))]
        text = "apiVersion: v1\nkind: List\nitems:\n" + "".join(items) + 'metadata:\n  resourceVersion: ""\n'
    else:
        text = "---\n".join(documents)
    (root / "apps.yaml").write_text(text)
    for command in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "source"]):
        subprocess.run(["git", *command], cwd=root, check=True, capture_output=True)
    return len(documents)


def child(root: Path, count: int, repetitions: int) -> None:
    """Time the text edit and the whole command with the code first on ``sys.path``."""
    sys.path.insert(0, os.environ["NOVA_BENCH_CODE"])
    from nova_gitops.edits import changes
    from nova_gitops.workflows import editing, proposing

    text = (root / "apps.yaml").read_text()
    comments = {
        line: number for number, line in enumerate(text.splitlines()) if line.startswith("# web tier ")
    }
    edit_s: dict[str, float] = {}
    for where, index in (("start", 0), ("middle", count // 2), ("end", count - 1)):
        line = comments[f"# web tier {index}"] + 2  # 1-based: the line after the comment
        target = changes.DocumentRef("Deployment", f"web-{index}", line)
        spent = []
        for _ in range(repetitions):
            started = time.perf_counter()
            edited = changes.set_metadata_entry(text, target, "annotations", PIN, "c2")
            spent.append(time.perf_counter() - started)
        assert f"{PIN}: c2" in edited
        edit_s[where] = round(statistics.median(spent), 3)
    load_s, pin_s = [], []
    for _ in range(repetitions):
        started = time.perf_counter()
        loaded = editing.load(root)
        loaded_at = time.perf_counter()
        proposing.pin(loaded, f"deployment/demo/web-{count // 2}", "c2", dry_run=True)
        load_s.append(loaded_at - started)
        pin_s.append(time.perf_counter() - started)
    print(
        json.dumps(
            {
                "edit_s": edit_s,
                "load_s": round(statistics.median(load_s), 3),
                "pin_s": round(statistics.median(pin_s), 3),
            }
        )
    )


def measure(code: Path, root: Path, count: int, repetitions: int) -> dict[str, object]:
    command = [sys.executable, str(ROOT / "bench" / "edit.py"), "--child", str(root), str(count)]
    command += ["--repetitions", str(repetitions)]
    environment = {**os.environ, "NOVA_BENCH_CODE": str(code), "PYTHONPATH": str(code)}
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=environment)
    figures: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=1_000_000, help="bytes of apps.yaml (about)")
    parser.add_argument("--list", action="store_true", help="one kind: List instead of many documents")
    parser.add_argument("--against", help="a git revision of this repository to measure too")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--child", nargs=2, metavar=("SOURCE", "COUNT"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        child(Path(arguments.child[0]), int(arguments.child[1]), arguments.repetitions)
        return
    with tempfile.TemporaryDirectory(prefix="nova-bench-edit-") as scratch:
        work = Path(scratch)
        root = work / "source"
        count = generate(root, arguments.size, arguments.list)
        figures: dict[str, object] = {
            "apps_yaml_bytes": (root / "apps.yaml").stat().st_size,
            "deployments": count,
            "shape": "kind: List" if arguments.list else "documents",
        }
        codes = {"new": ROOT}
        if arguments.against:
            other = work / "against"
            other.mkdir()
            archive = subprocess.run(
                ["git", "archive", arguments.against], cwd=ROOT, check=True, capture_output=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(other)], input=archive, check=True)
            codes[arguments.against] = other
        for name, code in codes.items():
            figures[name] = measure(code, root, count, arguments.repetitions)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
