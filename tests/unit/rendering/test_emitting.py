"""Behaviours of the fast YAML emitter (``rendering.emitting``).

Covered:
- round trip: ``yaml.load(dump(obj), Loader=CSafeLoader)`` equals ``obj`` with every type kept (str stays str
  however number-, bool-, null-, date- or indicator-like it looks; int/float/bool/None keep their type, in
  values and in keys), key order kept, for hypothesis-generated nested data with adversarial strings and for a
  table of tricky strings, and for multi-line texts (literal blocks) nested at any depth; the pure-Python
  safe loader reads the same data;
- exact bytes of typical manifests: a Deployment (sequences of mappings at the parent's indent), a ConfigMap
  holding files (literal blocks ``|``, ``|-``, ``|+``, indentation indicator), a Secret with base64 data;
- strings other YAML readers (YAML 1.2, go-yaml v2) take for non-strings are quoted (``1e3``, ``0o17``);
- layout: empty collections as ``{}``/``[]``, no folding of long lines, LF and one trailing newline, explicit
  ``? key`` only for keys too long to be simple keys;
- familiarity: for single-line strings the output is byte-identical to PyYAML's C dumper;
- determinism: the same data gives the same bytes, whatever the caches hold;
- ``scalar`` gives the text ``dump`` writes for a value, and multi-line strings on one line for splicing;
- clear errors for values YAML cannot carry (bytes, sets, lone surrogates).
"""

from __future__ import annotations

import copy
import datetime
import gc
import math
import pickle
import re
import subprocess
import sys
import tracemalloc
from typing import Any

import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nova_gitops.rendering import emitting

TRICKY_STRINGS = [
    "true", "True", "TRUE", "false", "yes", "no", "on", "off", "y", "n", "Y", "N",
    "1", "-1", "+1", "1.0", "1e3", "1E3", "1e+3", "0x1F", "0o17", "0b101", "012", "1_000", "1:20", "-1:20",
    "~", "null", "Null", "NULL", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5",
    ".inf", "-.inf", ".nan", ".NaN", "-", "--", "---", "...", "--- x", "... x", "? x", "?", "?x", ":", ":x",
    "a: b", "a:", "a:b", "http://x", "#x", "x #y", "x#y", " lead", "trail ", " ", "", "  both  ",
    "line\nbreak", "ends\n", "two\n\n", "\n", "\n\n", "\nlead", " lead\nx", "\tlead\nx", "trail \nx",
    "a\n \n", "x\n  ", "crlf\r\n", "cr\rx", "nel\x85x", "ls\u2028x", "ps\u2029x", "tab\there", "\t",
    "unicodé ✓ 中文", "emoji 😀", "\ufeffbom", "nbsp\xa0x", "ctrl\x01\x1f\x7f\x80\x9f", "\x00",
    "@x", "`x", "!x", "!!str", "&x", "*x", "%x", "|", ">", "|-", "{", "}", "[", "]", "{a: 1}", "[1, 2]",
    "- x", "-x", ",", "x,y", "'", "''", '"', "it's", 'say "hi"', "back\\slash", "=", "<<", "a\n---\nb",
    "a\n...\n", "\\n", "\u2028", "\x85",
]  # fmt: skip


def _same(left: Any, right: Any) -> bool:
    """Equality that also compares types (1 == 1.0 == True in Python), key order, and nan == nan."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return [(type(k), k) for k in left] == [(type(k), k) for k in right] and all(
            _same(left[k], right[k]) for k in left
        )
    if isinstance(left, list):
        return len(left) == len(right) and all(_same(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, float) and math.isnan(left):
        return math.isnan(right)
    return bool(left == right)


def _load(text: str) -> Any:
    return yaml.load(text, Loader=yaml.CSafeLoader)


def _pyyaml_dump(obj: Any) -> str:
    return yaml.dump(
        obj,
        Dumper=yaml.CSafeDumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=10**9,
    )


_ADVERSARIAL_ALPHABET = st.sampled_from(list(" \n\t\r:#-?'\"\\|>!&*%@`{}[],.~=<a0\x85\u2028\ufeff\x00é😀"))
strings = st.one_of(
    st.text(max_size=20),
    st.sampled_from(TRICKY_STRINGS),
    st.text(_ADVERSARIAL_ALPHABET, max_size=12),
    st.lists(st.sampled_from(TRICKY_STRINGS), min_size=1, max_size=3).map("".join),
)
scalars = st.one_of(
    strings,
    st.integers(),
    st.floats(),
    st.booleans(),
    st.none(),
)
keys = st.one_of(strings, st.integers(), st.booleans())
nodes = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=25,
)
documents = st.dictionaries(keys, nodes, max_size=6)


@settings(max_examples=200)
@given(documents)
def test_every_document_loads_back_equal_with_types_and_order(document: dict[Any, Any]) -> None:
    text = emitting.dump(document)
    assert _same(_load(text), document), text
    assert text.endswith("\n")
    assert not text.startswith("---")


multi_line_texts = st.text(st.sampled_from(list(" \n\ta#-:|'x\u00e9")), min_size=1, max_size=40).filter(
    lambda text: "\n" in text
)
multi_line_nodes = st.recursive(
    multi_line_texts,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200)
@given(st.dictionaries(st.text(max_size=3), multi_line_nodes, max_size=3))
def test_multi_line_texts_at_any_depth_load_back_exactly(document: dict[str, Any]) -> None:
    text = emitting.dump(document)
    assert _same(_load(text), document), text


@settings(max_examples=100)
@given(documents)
def test_pure_python_safe_loader_reads_the_same_data(document: dict[Any, Any]) -> None:
    assert _same(yaml.safe_load(emitting.dump(document)), document)


@pytest.mark.parametrize("text", TRICKY_STRINGS)
def test_tricky_strings_stay_strings_as_values_keys_and_items(text: str) -> None:
    document = {"value": text, text: "key", "items": [text, {"nested": text}, [text]]}
    dumped = emitting.dump(document)
    assert _same(_load(dumped), document), dumped


@pytest.mark.parametrize(
    "value",
    [0, -7, 2**80, -(2**70), 0.0, -0.0, 1.5, 1e20, 1e-7, 1.7976931348623157e308, 5e-324, math.inf, -math.inf,
     math.nan, True, False, None],
)  # fmt: skip
def test_non_string_scalars_keep_type_and_value(value: Any) -> None:
    document = {"value": value, "list": [value]}
    assert _same(_load(emitting.dump(document)), document)


@pytest.mark.parametrize("key", [0, 1, -3, 2**70, True, False, None, 1.5])
def test_non_string_keys_keep_their_type(key: Any) -> None:
    document = {"s": 1, "nested": {key: "v"}}
    assert _same(_load(emitting.dump(document)), document)


PLUS_FIVE = datetime.timezone(datetime.timedelta(hours=5))


def test_timestamps_from_a_safe_load_round_trip() -> None:
    document = {
        "date": datetime.date(2001, 12, 14),
        "naive": datetime.datetime(2001, 12, 14, 21, 59, 43, 100000),
        "aware": datetime.datetime(
            2001, 12, 14, 21, 59, 43, tzinfo=datetime.timezone(datetime.timedelta(hours=5))
        ),
    }
    assert _load(emitting.dump(document)) == document


@pytest.mark.parametrize(
    "text", ["1e3", "1E3", "-2.5e-3", "0o17", "0O17", "0X1F", "0B11", "y", "N", ".5", "1.", "0x1F", "~"]
)
def test_strings_other_yaml_readers_take_for_non_strings_are_quoted(text: str) -> None:
    assert emitting.dump({"k": text}) == f"k: '{text}'\n"


DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "web",
        "namespace": "shop",
        "labels": {"app": "web", "nova.elotl.co/target-cluster": "wlc-1", "tier": "1"},
        "annotations": {"nova.elotl.co/matching-policy": "demo-policy", "note": "a: b"},
    },
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web", "elotl-luna": "true"}},
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "image": "nginx:1.25",
                        "args": ["--port=8080", "--verbose"],
                        "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                        "resources": {"requests": {"cpu": "500m", "memory": "128Mi"}, "limits": {}},
                        "env": [{"name": "RATIO", "value": "0.5"}, {"name": "EMPTY", "value": ""}],
                    }
                ],
                "tolerations": [],
                "nodeSelector": {"kubernetes.io/os": "linux"},
            },
        },
    },
}
DEPLOYMENT_YAML = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels:
    app: web
    nova.elotl.co/target-cluster: wlc-1
    tier: '1'
  annotations:
    nova.elotl.co/matching-policy: demo-policy
    note: 'a: b'
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
        elotl-luna: 'true'
    spec:
      containers:
      - name: web
        image: nginx:1.25
        args:
        - --port=8080
        - --verbose
        ports:
        - containerPort: 8080
          protocol: TCP
        resources:
          requests:
            cpu: 500m
            memory: 128Mi
          limits: {}
        env:
        - name: RATIO
          value: '0.5'
        - name: EMPTY
          value: ''
      tolerations: []
      nodeSelector:
        kubernetes.io/os: linux
"""

CONFIG_MAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "files", "namespace": "shop"},
    "data": {
        "app.yaml": "server:\n  port: 8080\n  # comment\n",
        "no-newline.txt": "first\nsecond",
        "blank-tail.txt": "kept\n\n",
        "indented.py": "    return 1\nx = 2\n",
        "Makefile": "all:\n\tgo build ./...\n",
        "windows.txt": "a\r\nb\r\n",
        "one-line": "just text",
    },
}
CONFIG_MAP_YAML = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: files
  namespace: shop
data:
  app.yaml: |
    server:
      port: 8080
      # comment
  no-newline.txt: |-
    first
    second
  blank-tail.txt: |+
    kept

  indented.py: |2
        return 1
    x = 2
  Makefile: |
    all:
    \tgo build ./...
  windows.txt: "a\\r\\nb\\r\\n"
  one-line: just text
"""

SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "creds", "namespace": "shop"},
    "type": "Opaque",
    "data": {"password": "cGFzc3dvcmQ=", "token": "YQ==", ".dockerconfigjson": "e30="},
    "stringData": {"port": "5432", "enabled": "yes"},
}
SECRET_YAML = """\
apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: shop
type: Opaque
data:
  password: cGFzc3dvcmQ=
  token: YQ==
  .dockerconfigjson: e30=
stringData:
  port: '5432'
  enabled: 'yes'
"""


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [(DEPLOYMENT, DEPLOYMENT_YAML), (CONFIG_MAP, CONFIG_MAP_YAML), (SECRET, SECRET_YAML)],
    ids=["deployment", "configmap-with-files", "secret-base64"],
)
def test_typical_manifests_have_exact_bytes(manifest: dict[str, Any], expected: str) -> None:
    assert emitting.dump(manifest) == expected
    assert _load(expected) == manifest


def test_a_manifest_without_multi_line_strings_is_written_as_pyyaml_writes_it() -> None:
    assert emitting.dump(DEPLOYMENT) == _pyyaml_dump(DEPLOYMENT)


OTHER_READERS_NON_STRING = re.compile(
    r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?0[xXoObB][0-9a-fA-F_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|[yYnN]|~"
)
"""Texts that other readers of the rendered repository (YAML 1.2's core schema, JSON, go-yaml v2) read as
numbers, booleans or null though PyYAML's YAML 1.1 reads them as strings: the emitter quotes them where PyYAML
would not (``test_every_text_other_readers_take_for_a_non_string_is_quoted``)."""


@settings(max_examples=200)
@given(st.from_regex(OTHER_READERS_NON_STRING, fullmatch=True))
def test_every_text_other_readers_take_for_a_non_string_is_quoted(text: str) -> None:
    assert emitting.dump({"k": text}) == f"k: '{text}'\n"


single_line_strings = st.text(st.characters(blacklist_categories=("Cs",), max_codepoint=0xFFFF)).filter(
    lambda s: not any(c in s for c in "\n\r\x85\u2028\u2029")
)


@settings(max_examples=200)
@given(single_line_strings, single_line_strings)
def test_single_line_strings_are_written_as_pyyaml_writes_them(value: str, key: str) -> None:
    for text in (value, key):
        assume(OTHER_READERS_NON_STRING.fullmatch(text) is None)
    expected = _pyyaml_dump({key: value, "list": [value]})
    assume(not expected.startswith("? "))  # PyYAML writes keys over 128 characters as explicit keys
    assert emitting.dump({key: value, "list": [value]}) == expected


def test_empty_collections_and_empty_document() -> None:
    assert emitting.dump({}) == "{}\n"
    assert emitting.dump({"a": {}, "b": [], "c": [{}, []]}) == "a: {}\nb: []\nc:\n- {}\n- []\n"


def test_nested_sequences_are_written_compactly() -> None:
    assert emitting.dump({"m": [[1, [2, 3]], [{"a": 1, "b": 2}]]}) == (
        "m:\n- - 1\n  - - 2\n    - 3\n- - a: 1\n    b: 2\n"
    )


def test_long_lines_are_not_folded() -> None:
    value = " ".join(["word"] * 2000)
    assert emitting.dump({"k": value}) == f"k: {value}\n"


def test_a_key_too_long_for_a_simple_key_is_written_explicitly() -> None:
    long_key = "k" * 1500
    document = {
        "a": 1,
        long_key: {"b": [1, 2]},
        "c": [long_key],
        "d": {long_key: "v", long_key + "2": [1], long_key + "3": "x\ny\n", long_key + "\n": " z\n"},
    }
    text = emitting.dump(document)
    assert f"? {long_key}\n:\n" in text
    assert _same(_load(text), document)


def test_long_texts_are_not_kept_after_a_dump() -> None:
    """Short texts are remembered (a fleet repeats them); a long one would stay in memory for good."""

    def dump_long(count: int) -> None:
        for index in range(count):
            emitting.dump({"file": f"line {index}\n" * 1_000, "name": f"{index}" + "x" * 10_000})

    dump_long(3)  # whatever a first dump sets up once
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        dump_long(100)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 500_000, f"{kept} bytes kept after dumping 100 documents of ~20 kB each"


def test_tuples_and_other_mappings_are_written_like_lists_and_dicts() -> None:
    class Labels(dict[str, str]):
        pass

    document = {"t": (1, (2, 3)), "l": Labels(app="web"), "s": [Labels(a="b"), ("x",)]}
    expected = {"t": [1, [2, 3]], "l": {"app": "web"}, "s": [{"a": "b"}, ["x"]]}
    assert emitting.dump(document) == emitting.dump(expected)


FRESH_DUMPS = (
    "import pickle, sys\n"
    "from nova_gitops.rendering import emitting\n"
    "sys.stdout.buffer.write(pickle.dumps([emitting.dump(d) for d in pickle.loads(sys.stdin.buffer.read())]))"
)


@settings(max_examples=3, deadline=None)
@given(st.lists(documents, min_size=1, max_size=40))
def test_output_is_the_same_whatever_was_dumped_before(batch: list[dict[Any, Any]]) -> None:
    """What ``dump`` remembers of the texts it wrote before never shows: each document dumped here, after
    the others (in reverse order, and again), is what a fresh process dumps of it first."""
    fresh = subprocess.run(
        [sys.executable, "-c", FRESH_DUMPS], input=pickle.dumps(batch), capture_output=True, check=True
    )
    first = pickle.loads(fresh.stdout)
    for _ in range(2):
        assert [emitting.dump(copy.deepcopy(document)) for document in reversed(batch)] == first[::-1]


@settings(max_examples=200)
@given(scalars)
def test_scalar_is_the_text_dump_writes_and_loads_back(value: Any) -> None:
    text = emitting.scalar(value)
    assert "\n" not in text
    assert _same(_load(f"k: {text}\n")["k"], value)
    assert _same(_load(f"- {text}\n")[0], value)
    dumped = emitting.dump({"k": value})
    if not dumped.startswith("k: |"):
        assert dumped == f"k: {text}\n"


def test_scalar_examples() -> None:
    assert emitting.scalar("web") == "web"
    assert emitting.scalar("true") == "'true'"
    assert emitting.scalar("a\nb") == '"a\\nb"'
    assert emitting.scalar(3) == "3"
    assert emitting.scalar(1e16) == "1.0e+16"
    assert emitting.scalar(math.nan) == ".nan"
    assert emitting.scalar(None) == "null"
    assert emitting.scalar(False) == "false"


@pytest.mark.parametrize("value", [b"bytes", {1, 2}, object()])
def test_values_yaml_cannot_carry_are_refused_with_the_type(value: Any) -> None:
    with pytest.raises(TypeError, match=type(value).__name__):
        emitting.dump({"k": [value]})


@pytest.mark.parametrize("document", [{"k": "a\ud800b"}, {"a\udfff": 1}])
def test_lone_surrogates_are_refused_clearly(document: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="lone surrogate"):
        emitting.dump(document)
