"""Source directories with a ``kustomization.yaml`` are built as ``kubectl apply -k`` builds them (issue 10).

Runs the real ``kubectl kustomize`` (or ``kustomize build``); skipped when neither is on PATH.

Behaviours covered:
- an overlay's namespace, labels, patch and configMapGenerator reach the render; the base it includes is
  not read a second time on its own; files next to the kustomizations are read as usual;
- a problem in a built object points at the original file and line (origin annotations), a generated
  object's at its kustomization; the origin annotation is not rendered; the user's files are unchanged;
- a remote resource, an absolute path and a path out of the source are refused at the kustomization and
  kustomize is not run for them; a kustomize error names the kustomization and kustomize's message;
- neither binary on PATH: a clear error naming both; a kustomize that hangs is stopped by the timeout;
- a file linked from outside the source is not copied for kustomize, and its content appears nowhere;
- every rendered cluster directory builds with ``kubectl kustomize``; the example in examples/kustomize
  validates with --strict and its generated ConfigMap keeps the hashed name the Deployment refers to;
- ``-n`` does not override the namespace a kustomization sets (an explicit namespace wins).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from nova_gitops.errors import InputError, UserError
from nova_gitops.sources import directory, kustomizeorigins, kustomizerunning, kustomizing, reading
from nova_gitops.workflows import rendering

pytestmark = pytest.mark.skipif(
    shutil.which("kustomize") is None and shutil.which("kubectl") is None,
    reason="neither kustomize nor kubectl is installed",
)

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx
"""

SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 80
"""

OVERLAY = """\
namespace: shop
labels:
- pairs:
    team: storefront
  includeSelectors: false
resources:
- ../../base
patches:
- target:
    kind: Deployment
    name: web
  patch: |-
    - op: replace
      path: /spec/replicas
      value: 3
configMapGenerator:
- name: settings
  literals:
  - colour=blue
"""

FLEET = """\
apiVersion: policy.elotl.co/v1alpha1
kind: SchedulePolicy
metadata:
  name: storefront
spec:
  resourceSelectors:
    labelSelectors:
    - matchLabels:
        team: storefront
---
apiVersion: cluster.elotl.co/v1alpha1
kind: Cluster
metadata:
  name: c1
spec:
  name: c1
status:
  conditions:
  - type: Ready
    status: "True"
  capacityResources:
    node: {cpu: "8", memory: 16Gi}
  availableResources:
    node: {cpu: "8", memory: 16Gi}
"""


def make_source(root: Path, overlay: str = OVERLAY, deployment: str = DEPLOYMENT) -> Path:
    files = {
        "fleet.yaml": FLEET,
        "apps/base/kustomization.yaml": "resources:\n- deployment.yaml\n- service.yaml\n",
        "apps/base/deployment.yaml": deployment,
        "apps/base/service.yaml": SERVICE,
        "apps/overlays/prod/kustomization.yaml": overlay,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_an_overlay_is_built_with_its_namespace_labels_patch_and_generator(tmp_path: Path) -> None:
    source = make_source(tmp_path / "src")
    before = snapshot(source)
    result = CliRunner().invoke(cli, ["render", str(source), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    out = tmp_path / "out" / "clusters" / "c1"
    web = yaml.safe_load((out / "shop" / "deployment-web.yaml").read_text())
    assert web["metadata"]["namespace"] == "shop"
    assert web["metadata"]["labels"]["team"] == "storefront"
    assert web["spec"]["replicas"] == 3
    assert kustomizeorigins.ORIGIN_ANNOTATION not in web["metadata"].get("annotations", {})
    generated = sorted(path.name for path in (out / "shop").glob("configmap-settings-*.yaml"))
    assert len(generated) == 1
    assert yaml.safe_load((out / "shop" / generated[0]).read_text())["data"] == {"colour": "blue"}
    # the base is built once, as part of the overlay: not also read (or built) on its own into default
    assert not (out / "default").exists()
    assert snapshot(source) == before  # the user's files were not edited


def test_built_objects_point_at_their_original_files(tmp_path: Path) -> None:
    source = make_source(tmp_path / "src")
    files = directory.read_source(source)
    assert files.problems == ()
    where = {(doc.body["kind"], doc.body["metadata"]["name"]): str(doc.location) for doc in files.documents}
    assert where[("Deployment", "web")] == "apps/base/deployment.yaml:1"
    assert where[("Service", "web")] == "apps/base/service.yaml:1"
    configmap = next(name for kind, name in where if kind == "ConfigMap")
    assert where[("ConfigMap", configmap)] == "apps/overlays/prod/kustomization.yaml:16"
    assert "apps/base/deployment.yaml" in files.built
    # the base is included by the overlay: its objects come once, from the overlay's build
    kinds = sorted(doc.body["kind"] for doc in files.documents)
    assert kinds == ["Cluster", "ConfigMap", "Deployment", "SchedulePolicy", "Service"]


def test_a_problem_in_a_built_object_points_at_the_original_file_and_line(tmp_path: Path) -> None:
    annotation = "  annotations:\n    nova.elotl.co/spread-onto: c1,,c2\n"
    bad = DEPLOYMENT.replace("  name: web\n", "  name: web\n" + annotation)
    source = make_source(tmp_path / "src", deployment="---\n# a comment\n" + bad)
    with pytest.raises(InputError) as raised:
        rendering.load_source(source)
    lines = [str(problem) for problem in raised.value.problems]
    assert any(
        line.startswith("apps/base/deployment.yaml:8:") and "empty cluster name" in line for line in lines
    ), lines


def test_a_remote_resource_is_refused_at_the_kustomization(tmp_path: Path) -> None:
    overlay = OVERLAY.replace(
        "- ../../base\n", "- ../../base\n- https://github.com/example/fleet//base?ref=v1\n"
    )
    source = make_source(tmp_path / "src", overlay=overlay)
    with pytest.raises(InputError) as raised:
        rendering.load_source(source)
    lines = [str(problem) for problem in raised.value.problems]
    assert any(
        line.startswith("apps/overlays/prod/kustomization.yaml:") and "remote resource" in line
        for line in lines
    ), lines


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("github.com/example/fleet/base", "not a file or directory of the source"),
        ("/etc/kubernetes", "absolute path"),
        ("../../../../outside", "leads outside the source"),
    ],
)
def test_paths_kustomize_could_fetch_or_escape_through_are_refused(
    tmp_path: Path, entry: str, expected: str
) -> None:
    overlay = OVERLAY.replace("- ../../base\n", f"- ../../base\n- {entry}\n")
    source = make_source(tmp_path / "src", overlay=overlay)
    with pytest.raises(InputError) as raised:
        rendering.load_source(source)
    assert any(expected in str(problem) for problem in raised.value.problems), raised.value.problems


def test_a_kustomize_error_names_the_kustomization_and_the_message(tmp_path: Path) -> None:
    overlay = OVERLAY + "patchesStrategicMerge:\n- missing-target.yaml\n"
    source = make_source(tmp_path / "src", overlay=overlay)
    (source / "apps/overlays/prod/missing-target.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: no-such-deployment\n"
    )
    with pytest.raises(InputError) as raised:
        rendering.load_source(source)
    [problem] = [p for p in raised.value.problems if "kustomize build failed" in p.message]
    assert problem.location.file == "apps/overlays/prod/kustomization.yaml"
    assert "no-such-deployment" in problem.message
    assert str(tmp_path) not in problem.message and "nova-kustomize-" not in problem.message
    assert len(problem.message) < 500


def test_neither_binary_on_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="`kustomize` or `kubectl`"):
        kustomizerunning.builder({"PATH": str(tmp_path)})


def test_the_namespace_option_does_not_override_the_kustomizations(tmp_path: Path) -> None:
    source = make_source(tmp_path / "src")
    source_set = rendering.load_source(source, namespace="other")
    assert {m.namespace for m in source_set.workloads if m.kind != "Namespace"} == {"shop"}


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_the_rendered_cluster_directory_builds(tmp_path: Path) -> None:
    source = make_source(tmp_path / "src")
    result = CliRunner().invoke(cli, ["render", str(source), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    built = subprocess.run(
        ["kubectl", "kustomize", str(tmp_path / "out" / "clusters" / "c1")], capture_output=True, text=True
    )
    assert built.returncode == 0, built.stderr
    kinds = sorted(doc["kind"] for doc in yaml.safe_load_all(built.stdout))
    assert kinds == ["ConfigMap", "Deployment", "Namespace", "Service"]


def test_the_kustomize_example_validates_strictly_and_renders_the_overlay(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "kustomize" / "source"
    result = CliRunner().invoke(cli, ["validate", str(example), "--strict"])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(cli, ["render", str(example), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    web = yaml.safe_load((tmp_path / "out/clusters/wlc-1/shop/deployment-web.yaml").read_text())
    assert web["spec"]["replicas"] == 3
    [settings] = (tmp_path / "out/clusters/wlc-1/shop").glob("configmap-web-settings-*.yaml")
    reference = web["spec"]["template"]["spec"]["containers"][0]["envFrom"][0]["configMapRef"]["name"]
    assert settings.name == f"configmap-{reference}.yaml"


def test_a_link_out_of_the_source_is_not_copied_for_kustomize(tmp_path: Path) -> None:
    secret = tmp_path / "host-secret.yaml"
    secret.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stolen\ndata:\n  token: HOSTMARKER\n"
    )
    source = make_source(tmp_path / "src")
    (source / "apps/base/stolen.yaml").symlink_to(secret)
    kustomization = source / "apps/base/kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + "- stolen.yaml\n")
    with pytest.raises(InputError) as raised:
        rendering.load_source(source)
    shown = "\n".join(str(problem) for problem in raised.value.problems)
    assert shown == (
        "apps/base/kustomization.yaml:4: resources[2]: 'stolen.yaml' leads outside the source through a "
        "symbolic link"
    )
    assert "HOSTMARKER" not in shown


def test_a_kustomize_that_hangs_is_stopped_by_the_timeout(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "kustomize"
    fake.write_text(f"#!/bin/sh\nexec {shutil.which('sleep')} 30\n")  # kustomize runs with a PATH of nothing
    fake.chmod(0o755)
    source = make_source(tmp_path / "src")
    names = ["apps/base/kustomization.yaml", "apps/overlays/prod/kustomization.yaml"]
    with reading.SourceReader(source) as reader:
        built = kustomizing.build_all(source, names, reader, environ={"PATH": str(bin_dir)}, timeout=0.5)
    assert [str(problem) for problem in built.problems] == [
        "apps/overlays/prod/kustomization.yaml:1: kustomize build timed out after 0.5s"
    ]
    assert built.documents == []
