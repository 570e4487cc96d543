"""What a kustomization names is checked before kustomize runs, and a refused one is never built (issue 21).

Behaviours covered:
- a kustomization naming a path out of the source, in any field through which kustomize reads a file or a
  directory (resources, bases, components, crds, configurations, generators, transformers, validators,
  patchesStrategicMerge, patches, patchesJson6902, replacements, openapi, the files, envs and env of
  configMap/secretGenerator), or a URL there, or a field kustomize does not know, or Helm: a problem naming
  the field at its line, and kustomize is not run at all (a stand-in kustomize records every run);
- the same for a base that an overlay includes: neither the base nor the overlay is built;
- with the real kustomize, a path out of the source to a host directory holding a kustomization is one
  problem, and nothing of that directory (a marker) reaches a document or a message; ``github.com/…?ref=``
  is refused without kustomize (nor git) running;
- every one of those fields used inside the source still builds (inline patches and transformers too);
- a kustomization cycle (one including itself, ``resources: [deployment.yaml, .]``; two or three including
  each other; an overlay over a cycle) is an error naming every kustomization of the cycle at the line of
  the entry that closes it, nothing is built, and ``nova-gitops render`` exits 2 instead of dropping the
  objects.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli.main import cli
from nova_gitops.errors import InputError
from nova_gitops.sources import directory, kustomizing, reading
from nova_gitops.workflows import rendering
from tests.boundary.test_kustomize_sources import DEPLOYMENT, SERVICE, make_source

MARKER = f"nova-host-{uuid.uuid4().hex}"
OVERLAY_FILE = "apps/overlays/prod/kustomization.yaml"
BASE_FILE = "apps/base/kustomization.yaml"
OUT = "../../../../outside.yaml"  # from apps/overlays/prod: the directory that holds the source
UP = "../../../../host"  # a directory of the machine, with a kustomization of its own


def stand_in(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose only kustomize records that it ran (and fails), and the record's path."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    record = tmp_path / "kustomize-ran"
    fake = bin_dir / "kustomize"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {record}\nexit 1\n')
    fake.chmod(0o755)
    return {"PATH": str(bin_dir)}, record


def host_files(tmp_path: Path) -> None:
    """What lies next to the source on the machine: a manifest and a kustomization, each with a marker."""
    cm = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stolen\ndata:\n  token: {MARKER}\n"
    (tmp_path / "outside.yaml").write_text(cm)
    (tmp_path / "host").mkdir(exist_ok=True)
    (tmp_path / "host" / "cm.yaml").write_text(cm)
    (tmp_path / "host" / "kustomization.yaml").write_text(f"resources:\n- cm.yaml\n# {MARKER}\n")


def build(tmp_path: Path, source: Path, environ: dict[str, str] | None = None) -> kustomizing.Built:
    names = [str(path.relative_to(source)) for path in sorted(source.rglob("kustomization.yaml"))]
    with reading.SourceReader(source) as reader:
        return kustomizing.build_all(source, names, reader, environ=environ)


def overlay_with(extra: dict[str, Any]) -> str:
    spec: dict[str, Any] = {"resources": ["../../base"], **extra}
    return yaml.safe_dump(spec, sort_keys=False)


HOSTILE = [
    ({"resources": ["../../base", UP]}, "resources[1]", UP),
    ({"bases": [UP]}, "bases[0]", UP),
    ({"components": [UP]}, "components[0]", UP),
    ({"crds": [OUT]}, "crds[0]", OUT),
    ({"configurations": [OUT]}, "configurations[0]", OUT),
    ({"generators": [OUT]}, "generators[0]", OUT),
    ({"transformers": [UP]}, "transformers[0]", UP),
    ({"validators": [OUT]}, "validators[0]", OUT),
    ({"patchesStrategicMerge": [OUT]}, "patchesStrategicMerge[0]", OUT),
    ({"patches": [{"path": OUT}]}, "patches[0].path", OUT),
    (
        {"patchesJson6902": [{"path": OUT, "target": {"kind": "Deployment", "name": "web"}}]},
        "patchesJson6902[0].path",
        OUT,
    ),
    ({"replacements": [{"path": OUT}]}, "replacements[0].path", OUT),
    ({"openapi": {"path": OUT}}, "openapi.path", OUT),
    ({"configMapGenerator": [{"name": "c", "files": [OUT]}]}, "configMapGenerator[0].files[0]", OUT),
    ({"configMapGenerator": [{"name": "c", "files": [f"key={OUT}"]}]}, "configMapGenerator[0].files[0]", OUT),
    ({"configMapGenerator": [{"name": "c", "envs": [OUT]}]}, "configMapGenerator[0].envs[0]", OUT),
    ({"configMapGenerator": [{"name": "c", "env": OUT}]}, "configMapGenerator[0].env", OUT),
    ({"secretGenerator": [{"name": "s", "files": [OUT]}]}, "secretGenerator[0].files[0]", OUT),
    ({"secretGenerator": [{"name": "s", "envs": [OUT]}]}, "secretGenerator[0].envs[0]", OUT),
    ({"secretGenerator": [{"name": "s", "env": OUT}]}, "secretGenerator[0].env", OUT),
    # remote forms, in fields kustomize fetches through
    ({"resources": ["../../base", "github.com/example/fleet//base?ref=v1"]}, "resources[1]", "github.com"),
    (
        {"resources": ["../../base", "https://127.0.0.1:8443/fleet.git//base?ref=v1"]},
        "resources[1]",
        "https://",
    ),
    ({"configurations": ["http://127.0.0.1:8080/transform.yaml"]}, "configurations[0]", "http://"),
    ({"patches": [{"path": "HTTPS://example.com/patch.yaml"}]}, "patches[0].path", "HTTPS://"),
    ({"transformers": ["git@github.com:example/fleet.git//t"]}, "transformers[0]", "git@"),
    ({"components": ["/etc/kubernetes"]}, "components[0]", "/etc/kubernetes"),
    # what downloads, or is not a field of kustomize's
    ({"helmCharts": [{"name": "x", "repo": "https://charts.example.com"}]}, "helmCharts", "helmCharts:"),
    ({"helmGlobals": {"chartHome": UP}}, "helmGlobals", "helmGlobals:"),
    ({"helmChartInflationGenerator": [{"chartName": "x"}]}, "helmChartInflationGenerator", "helmChartInf"),
    ({"futureFiles": [OUT]}, "futureFiles", "futureFiles:"),
]


@pytest.mark.parametrize(("extra", "field", "needle"), HOSTILE, ids=[field for _, field, _ in HOSTILE])
def test_a_hostile_entry_is_refused_at_its_line_and_kustomize_never_runs(
    tmp_path: Path, extra: dict[str, Any], field: str, needle: str
) -> None:
    host_files(tmp_path)
    source = make_source(tmp_path / "src", overlay=overlay_with(extra))
    environ, record = stand_in(tmp_path)
    built = build(tmp_path, source, environ)
    assert not record.exists(), f"kustomize ran: {record.read_text()}"
    [problem] = built.problems
    assert (problem.location.file, problem.field) == (OVERLAY_FILE, field)
    lines = (source / OVERLAY_FILE).read_text().splitlines()
    assert needle in lines[problem.location.line - 1], (problem, lines)
    assert MARKER not in str(problem) and built.documents == []


def test_a_refused_base_leaves_its_overlay_unbuilt_too(tmp_path: Path) -> None:
    host_files(tmp_path)
    source = make_source(tmp_path / "src")
    (source / BASE_FILE).write_text(
        "resources:\n- deployment.yaml\n- service.yaml\npatches:\n- path: ../../../outside.yaml\n"
    )
    environ, record = stand_in(tmp_path)
    built = build(tmp_path, source, environ)
    assert not record.exists(), f"kustomize ran: {record.read_text()}"
    assert [str(problem) for problem in built.problems] == [
        f"{BASE_FILE}:5: patches[0].path: '../../../outside.yaml' leads outside the source: "
        "name a path inside it"
    ]


needs_kustomize = pytest.mark.skipif(
    shutil.which("kustomize") is None and shutil.which("kubectl") is None,
    reason="neither kustomize nor kubectl is installed",
)


@needs_kustomize
def test_a_host_directory_named_by_a_kustomization_is_never_read(tmp_path: Path) -> None:
    host_files(tmp_path)
    # enough .. to reach the machine's root from the source and from any copy of it, then the host dir
    climb = "../" * 40 + str(tmp_path / "host").lstrip("/")
    source = make_source(tmp_path / "src", overlay=overlay_with({"resources": ["../../base", climb]}))
    built = build(tmp_path, source)  # the real kustomize
    [problem] = built.problems
    assert (problem.location.line, problem.field) == (3, "resources[1]")
    assert "leads outside the source" in problem.message
    assert built.documents == [] and MARKER not in str(problem)
    with pytest.raises(InputError) as raised:
        rendering.load_source(source)
    assert MARKER not in "\n".join(str(problem) for problem in raised.value.problems)


@needs_kustomize
def test_every_file_field_inside_the_source_still_builds(tmp_path: Path) -> None:
    source = make_source(tmp_path / "src")
    prod = source / "apps/overlays/prod"
    files = {
        "smp.yaml": (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    smp: file\n"
        ),
        "json6902.yaml": "- op: replace\n  path: /spec/replicas\n  value: 5\n",
        "settings.properties": "colour=green\n",
        "app.env": "MODE=prod\n",
        "secret.env": "TOKEN=t\n",
        "replacement.yaml": (
            "source:\n  kind: ConfigMap\n  name: from-file\n  fieldPath: data.colour\n"
            "targets:\n- select:\n    kind: Deployment\n  fieldPaths:\n  - metadata.annotations.colour\n"
            "  options:\n    create: true\n"
        ),
        "configuration.yaml": "nameReference: []\n",
        "component/kustomization.yaml": (
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
            "commonAnnotations:\n  component: c\n"
        ),
    }
    for name, text in files.items():
        (prod / name).parent.mkdir(parents=True, exist_ok=True)
        (prod / name).write_text(text)
    inline_transformer = (
        "apiVersion: builtin\nkind: AnnotationsTransformer\nmetadata:\n  name: inline\n"
        "annotations:\n  inline: transformer\nfieldSpecs:\n- path: metadata/annotations\n  create: true\n"
    )
    overlay = {
        "resources": ["../../base"],
        "components": ["component"],
        "patchesStrategicMerge": [
            "smp.yaml",
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  labels:\n    smp: inline\n",
        ],
        "patchesJson6902": [{"path": "json6902.yaml", "target": {"kind": "Deployment", "name": "web"}}],
        "configMapGenerator": [
            {"name": "from-file", "files": ["colour=settings.properties"], "envs": ["app.env"]},
        ],
        "secretGenerator": [{"name": "token", "env": "secret.env"}],
        "replacements": [{"path": "replacement.yaml"}],
        "configurations": ["configuration.yaml"],
        "transformers": [inline_transformer],
    }
    (prod / "kustomization.yaml").write_text(yaml.safe_dump(overlay, sort_keys=False))
    files_read = directory.read_source(source)
    assert files_read.problems == ()
    by_kind = {doc.body["kind"]: doc.body for doc in files_read.documents}
    web = by_kind["Deployment"]
    assert web["metadata"]["labels"]["smp"] == "file"
    assert web["spec"]["replicas"] == 5
    assert web["metadata"]["annotations"]["component"] == "c"
    assert web["metadata"]["annotations"]["inline"] == "transformer"
    assert by_kind["Service"]["metadata"]["labels"]["smp"] == "inline"
    assert web["metadata"]["annotations"]["colour"] == "colour=green\n"
    assert by_kind["Secret"]["data"]
    assert any(
        doc.body["kind"] == "ConfigMap" and doc.body["data"].get("MODE") == "prod"
        for doc in files_read.documents
    )


# ----- cycles


def kustomization(*resources: str) -> str:
    return "resources:\n" + "".join(f"- {entry}\n" for entry in resources)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_kustomization_that_includes_itself_is_an_error_at_the_entry(tmp_path: Path) -> None:
    source = write(
        tmp_path / "src",
        {
            "base/kustomization.yaml": kustomization("deployment.yaml", "."),
            "base/deployment.yaml": DEPLOYMENT,
        },
    )
    environ, record = stand_in(tmp_path)
    built = build(tmp_path, source, environ)
    assert not record.exists()
    assert [str(problem) for problem in built.problems] == [
        "base/kustomization.yaml:3: resources[1]: kustomizations include each other in a cycle, which "
        "kustomize cannot build: base/kustomization.yaml:3 includes base"
    ]


def test_kustomizations_including_each_other_name_every_file_and_line(tmp_path: Path) -> None:
    source = write(
        tmp_path / "src",
        {
            "a/kustomization.yaml": kustomization("deployment.yaml", "../b"),
            "a/deployment.yaml": DEPLOYMENT,
            "b/kustomization.yaml": "namePrefix: x-\n" + kustomization("service.yaml", "../c"),
            "b/service.yaml": SERVICE,
            "c/kustomization.yaml": kustomization("../a"),
            "top/kustomization.yaml": kustomization("../a"),  # over the cycle: not built either
        },
    )
    environ, record = stand_in(tmp_path)
    built = build(tmp_path, source, environ)
    assert not record.exists()
    assert [str(problem) for problem in built.problems] == [
        "a/kustomization.yaml:3: resources[1]: kustomizations include each other in a cycle, which kustomize "
        "cannot build: a/kustomization.yaml:3 includes b, b/kustomization.yaml:4 includes c, "
        "c/kustomization.yaml:2 includes a"
    ]
    assert built.documents == []


@needs_kustomize
def test_render_of_a_cycle_exits_2_instead_of_dropping_the_objects(tmp_path: Path) -> None:
    source = make_source(tmp_path / "src")
    (source / BASE_FILE).write_text(kustomization("deployment.yaml", "service.yaml", "../overlays/prod"))
    result = CliRunner().invoke(cli, ["render", str(source), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert f"{BASE_FILE}:4: resources[2]: kustomizations include each other in a cycle" in result.output
    assert f"{OVERLAY_FILE}:7 includes apps/base" in result.output
    assert not (tmp_path / "out").exists()
