"""The source-editing commands on files written to trip them (issue 21), on real files in real git work
trees:

- a Cluster whose labels are a YAML anchor another Cluster aliases (``labels: *prod``, in one ``kind: List``)
  is not cordoned through the alias: ``cordon`` is refused naming the file, the line and the anchor, and no
  file changes; so is ``pin`` into a Deployment whose annotations its pod template aliases, and an edit
  reached through a merge key (``<<: *base``); an anchor nothing aliases is edited as any mapping;
- a ``move`` over two files, one of which changed on disk after it was read, writes neither;
- the same kind, namespace and name in two API groups is named ``kind.group/namespace/name``; the bare
  reference is refused naming both forms;
- an object whose document is written at an indentation the rest of the file does not use is edited (the
  edit reads only its own document).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from nova_gitops.errors import UserError
from nova_gitops.workflows import editing, proposing
from tests.builders import cluster, deployment, policy


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def committed(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "source")
    return root


def block(documents: list[dict[str, object]]) -> str:
    return yaml.safe_dump_all(documents, sort_keys=False)


CLUSTERS_SHARING_LABELS = """\
apiVersion: v1
kind: List
items:
- apiVersion: cluster.elotl.co/v1alpha1
  kind: Cluster
  metadata:
    name: c1
    labels: &prod
      env: prod
  status:
    conditions: [{type: Ready, status: "True"}]
    capacityResources: {n1: {cpu: "8", memory: 16Gi}}
    availableResources: {n1: {cpu: "8", memory: 16Gi}}
- apiVersion: cluster.elotl.co/v1alpha1
  kind: Cluster
  metadata:
    name: c2
    labels: *prod
  status:
    conditions: [{type: Ready, status: "True"}]
    capacityResources: {n1: {cpu: "8", memory: 16Gi}}
    availableResources: {n1: {cpu: "8", memory: 16Gi}}
- apiVersion: policy.elotl.co/v1alpha1
  kind: SchedulePolicy
  metadata:
    name: p
  spec:
    clusterSelector:
      matchLabels: *prod
    resourceSelectors:
      labelSelectors:
      - matchLabels: {app: demo}
"""


def test_cordon_through_a_shared_anchor_is_refused_naming_the_line_and_the_anchor(tmp_path: Path) -> None:
    apps = block([deployment("web")])
    source = committed(tmp_path / "src", {"clusters.yaml": CLUSTERS_SHARING_LABELS, "apps.yaml": apps})
    for command in (["cordon", "c1"], ["cordon", "c2"], ["cordon", "c1", "--dry-run"]):
        code, printed, stderr = run(*command, "--source", str(source))
        assert code == 2, (command, stderr)
        assert "clusters.yaml:8: cannot edit Cluster " in stderr
        assert "its metadata.labels is shared through the YAML anchor &prod" in stderr
        assert "which lines 18 and 29 also use" in stderr
        assert printed == ""
    assert git(source, "status", "--porcelain") == ""
    code, table, _ = run("get", "clusters", str(source))
    assert "True" not in [line.split()[-6] for line in table.splitlines()[1:]]  # CORDONED stays False


def test_an_anchor_nothing_aliases_is_edited_as_any_mapping(tmp_path: Path) -> None:
    text = CLUSTERS_SHARING_LABELS.replace("    labels: *prod\n", "    labels: {env: prod}\n").replace(
        "      matchLabels: *prod\n", "      matchLabels: {env: prod}\n"
    )
    source = committed(tmp_path / "src", {"clusters.yaml": text, "apps.yaml": block([deployment("web")])})
    code, _, stderr = run("cordon", "c1", "--source", str(source))
    assert code == 0, stderr
    changed = (source / "clusters.yaml").read_text()
    assert changed == text.replace(
        "      env: prod\n", '      env: prod\n      nova.elotl.co/cordoned: "true"\n'
    )


WEB_SHARING_ANNOTATIONS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  labels: {app: demo}
  annotations: &notes
    team: shop
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations: *notes
    spec:
      containers:
      - name: main
        image: nginx:1.27
        resources: {requests: {cpu: 100m, memory: 64Mi}}
"""


@pytest.mark.parametrize("command", [["pin", "deployment/demo/web", "c2"], ["unpin", "deployment/demo/web"]])
def test_pin_through_an_anchor_the_pod_template_aliases_is_refused(
    tmp_path: Path, command: list[str]
) -> None:
    text = WEB_SHARING_ANNOTATIONS
    if command[0] == "unpin":
        text = text.replace("    team: shop\n", "    team: shop\n    nova.elotl.co/cluster: c1\n")
    clusters = block([cluster("c1", cpu="8"), cluster("c2", cpu="8"), policy("p")])
    source = committed(tmp_path / "src", {"clusters.yaml": clusters, "apps.yaml": text})
    code, printed, stderr = run(*command, "--source", str(source))
    assert code == 2, stderr
    alias = 16 if command[0] == "unpin" else 15
    assert "apps.yaml:7: cannot edit Deployment web: its metadata.annotations is shared" in stderr
    assert f"YAML anchor &notes, which line {alias} also uses (*notes" in stderr
    assert git(source, "status", "--porcelain") == "" and printed == ""


def test_an_edit_reached_through_a_merge_key_is_refused(tmp_path: Path) -> None:
    text = (
        CLUSTERS_SHARING_LABELS.replace(
            "    labels: &prod\n      env: prod\n", "    <<: &base {labels: {env: prod}}\n"
        )
        .replace("    labels: *prod\n", "    <<: *base\n")
        .replace("      matchLabels: *prod\n", "      matchLabels: {env: prod}\n")
    )
    source = committed(tmp_path / "src", {"clusters.yaml": text, "apps.yaml": block([deployment("web")])})
    assert run("get", "clusters", str(source))[0] == 0
    code, _, stderr = run("cordon", "c1", "--source", str(source))
    assert code == 2 and "&base" in stderr and "cannot edit Cluster c1" in stderr, stderr
    assert git(source, "status", "--porcelain") == ""


@pytest.mark.parametrize("changed", ["a.yaml", "b.yaml"])
def test_a_move_over_two_files_writes_neither_when_one_changed_meanwhile(
    tmp_path: Path, changed: str
) -> None:
    web = deployment("web", labels={"app": "demo", "part-of": "shop"})
    api = deployment("api", labels={"app": "demo", "part-of": "shop"})
    clusters = block([cluster("c1", cpu="8"), cluster("c2", cpu="8")])
    grouped = block([policy("p", groupBy={"labelKey": "part-of"})])
    files = {
        "clusters.yaml": clusters,
        "policy.yaml": grouped,
        "a.yaml": block([api]),
        "b.yaml": block([web]),
    }
    source = committed(tmp_path / "src", files)
    loaded = editing.load(source)
    (group,) = loaded.rendered.plan.groups
    target = "c2" if group.clusters == ("c1",) else "c1"
    files[changed] += "# a change someone saved meanwhile\n"
    (source / changed).write_text(files[changed])
    with pytest.raises(UserError, match=f"{changed} changed while it was being edited; nothing was written"):
        proposing.move(loaded, group.name, target, dry_run=False)
    assert {name: (source / name).read_text() for name in files} == files
    assert sorted(path.name for path in source.iterdir()) == [".git", *sorted(files)]


def _same_name_in_two_groups(root: Path) -> Path:
    custom = deployment("web", namespace="app")
    custom["apiVersion"] = "example.com/v1"
    web = deployment("web", namespace="app")
    clusters = block([cluster("c1", cpu="8"), cluster("c2", cpu="8"), policy("p")])
    return committed(root, {"clusters.yaml": clusters, "apps.yaml": block([web, custom])})


def test_the_same_kind_in_two_api_groups_is_named_with_its_group(tmp_path: Path) -> None:
    source = _same_name_in_two_groups(tmp_path / "src")
    code, _, stderr = run("pin", "deployment/app/web", "c2", "--source", str(source))
    assert code == 2
    assert "deployment.apps/app/web" in stderr and "deployment.example.com/app/web" in stderr
    assert git(source, "status", "--porcelain") == ""
    code, _, stderr = run("pin", "deployment.example.com/app/web", "c2", "--source", str(source))
    assert code == 0, stderr
    documents = list(yaml.safe_load_all((source / "apps.yaml").read_text()))
    assert "annotations" not in documents[0]["metadata"]
    assert documents[1]["metadata"]["annotations"] == {"nova.elotl.co/cluster": "c2"}
    code, _, stderr = run("pin", "deployments.apps/app/web", "c1", "--source", str(source))
    assert code == 0, stderr
    documents = list(yaml.safe_load_all((source / "apps.yaml").read_text()))
    assert documents[0]["metadata"]["annotations"] == {"nova.elotl.co/cluster": "c1"}
    assert documents[1]["metadata"]["annotations"] == {"nova.elotl.co/cluster": "c2"}
    code, _, stderr = run("unpin", "deployment.batch/app/web", "--source", str(source))
    assert code == 2 and "no object deployment.batch/app/web in the source" in stderr


def test_a_document_indented_unlike_the_rest_of_its_file_is_edited(tmp_path: Path) -> None:
    others = [deployment(f"w{index}") for index in range(4)]
    odd = yaml.safe_dump(deployment("web"), sort_keys=False, indent=4)
    text = block(others) + "---\n" + odd
    clusters = block([cluster("c1", cpu="8"), cluster("c2", cpu="8"), policy("p")])
    source = committed(tmp_path / "src", {"clusters.yaml": clusters, "apps.yaml": text})
    code, _, stderr = run("pin", "deployment/demo/web", "c2", "--source", str(source))
    assert code == 0, stderr
    assert (source / "apps.yaml").read_text() == text.replace(
        "        app: demo\nspec:",
        "        app: demo\n    annotations:\n        nova.elotl.co/cluster: c2\nspec:",
    )


def test_an_edit_that_changes_more_than_it_names_is_refused(tmp_path: Path) -> None:
    """Whatever the text edit does, what is written changes only the fields it names, of the objects it
    names: anything else (another object, another field) refuses it, naming what would change."""
    clusters = block([cluster("c1", cpu="8"), cluster("c2", cpu="8"), policy("p")])
    apps = block([deployment("web"), deployment("api")])
    source = committed(tmp_path / "src", {"clusters.yaml": clusters, "apps.yaml": apps})
    loaded = editing.load(source)
    web_line = next(m.location.line for m in loaded.source_set.workloads if m.name == "web")
    api_line = next(m.location.line for m in loaded.source_set.workloads if m.name == "api")
    pin = "nova.elotl.co/cluster"
    fields = {web_line: (("metadata", "annotations", pin),)}

    def pins_both(text: str) -> str:
        return text.replace("metadata:\n  name: ", f"metadata:\n  annotations: {{{pin}: c2}}\n  name: ")

    def pins_and_scales(text: str) -> str:
        pinned = text.replace("  name: web\n", f"  name: web\n  annotations: {{{pin}: c2}}\n")
        return pinned.replace("  replicas: 1\n", "  replicas: 2\n", 1)

    more = f"more of Deployment web (apps.yaml:{web_line}) than metadata.annotations.{pin}"
    refusals = [
        (pins_both, f"the edit would change Deployment api (apps.yaml:{api_line}) too; nothing was written"),
        (pins_and_scales, f"the edit would change {more}; nothing was written"),
    ]
    for text_edit, message in refusals:
        change = editing.TextChange("apps.yaml", "Deployment web", text_edit, fields)
        with pytest.raises(UserError) as raised:
            editing.edit(loaded, [change], lambda _: None, dry_run=False)
        assert message in str(raised.value)
    assert git(source, "status", "--porcelain") == ""
