"""The library's imports only point down: no cycles, no module importing a layer above its own.

Every `import laya…` of every module (module level or inside a function) is read from its source with `ast`, and
each module belongs to exactly one layer of LAYERS, lowest first. A new module must be given a layer here.
"""

import ast
import fnmatch
from pathlib import Path

import pytest

from conftest import REPO

LAYERS = [  # lowest first; an exact module name wins over a package pattern (ending in .*)
    ("config", ["laya", "laya.core", "laya.core.config"]),  # typed configs and ConfigError: imports nothing of laya
    ("models", [  # pure torch and math: no store, no I/O, no process handling
        "laya.ablation", "laya.images", "laya.early_stopping",
        "laya.backbones.mlp", "laya.backbones.cnn", "laya.backbones.vit", "laya.backbones.intermediates",
        "laya.backbones.config",
        "laya.heads.base", "laya.heads.adapters", "laya.heads.attention", "laya.heads.linear", "laya.heads.scalarmix",
        "laya.heads.aligned", "laya.heads.alf", "laya.heads.probe", "laya.heads.registry",
        "laya.clt.activations", "laya.clt.model", "laya.clt.config",
    ]),
    ("core", ["laya.core.*", "laya.vega_offline"]),  # files written atomically, processes and workers, figures
    ("artifacts", ["laya.core.artifacts", "laya.heads.card", "laya.heads", "laya.backbones.card",
                   "laya.backbones.build", "laya.backbones", "laya.clt.card"]),  # weights + card on disk
    ("records", ["laya.records", "laya.records.*"]),  # the stages' detail records: what the report reads
    ("storage", ["laya.storage", "laya.storage.*", "laya.interop", "laya.interop.*", "laya.data", "laya.data.*"]),
    ("stages", ["laya.settings", "laya.trained", "laya.backbones.fit", "laya.backbones.create", "laya.protocols",
                "laya.protocols.*", "laya.extract", "laya.extract.*", "laya.train", "laya.train.*", "laya.evaluate",
                "laya.evaluate.*", "laya.spatial", "laya.spatial.*", "laya.sanity", "laya.sanity.*", "laya.depth",
                "laya.depth.*", "laya.clt", "laya.clt.*", "laya.report", "laya.report.*"]),
    ("validation", ["laya.check"]),  # parses every section: configs only, never stage logic
    ("entry", ["laya.core.params", "laya.core.cli"]),  # what the stage scripts call first
    ("docs", ["laya.reference", "laya.reference.*"]),  # what the documentation generates from all of the above
]
STAGE_LOGIC = ("laya.clt.run", "laya.clt.fit", "laya.evaluate.scores", "laya.evaluate.run", "laya.train.run",
               "laya.train.loop", "laya.depth.run", "laya.sanity.run")


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted((REPO / "laya").rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


MODULES = _modules()


def _owner(name: str) -> str:
    """The module a dotted import name lives in (`laya.heads.build` → `laya.heads`)."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def imports_of(name: str) -> set[str]:
    """The laya modules `name` imports, anywhere in its source."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {_owner(a.name) for a in node.names if a.name.split(".")[0] == "laya"}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + [base]).rstrip(".")
            if base.split(".")[0] == "laya":
                found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else _owner(base) for a in node.names}
    return found - {name}


GRAPH = {name: imports_of(name) for name in MODULES}


def layer_of(name: str) -> int | None:
    """Index into LAYERS; an exact name wins over a package pattern."""
    exact = [i for i, (_, patterns) in enumerate(LAYERS) if name in patterns]
    if exact:
        return exact[0]
    matches = [i for i, (_, patterns) in enumerate(LAYERS) if any(fnmatch.fnmatch(name, p) for p in patterns)]
    return matches[0] if matches else None


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
                  for a, deps in graph.items() for b in deps if layer_of(b) > layer_of(a))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_module_has_a_layer():
    assert [name for name in MODULES if layer_of(name) is None] == []


def test_imports_only_point_down():
    assert upward_imports(GRAPH) == []


def test_no_import_cycles():
    assert cycles(GRAPH) == []


def test_validation_imports_no_stage_logic():
    assert sorted(GRAPH["laya.check"] & set(STAGE_LOGIC)) == []


def test_config_imports_nothing_of_laya():
    assert GRAPH["laya.core.config"] == set()


@pytest.mark.parametrize(("graph", "found"), [
    ({"laya.core.config": {"laya.storage.store"}, "laya.storage.store": set()},
     ["laya.core.config (config) imports laya.storage.store (storage)"]),
    ({"laya.heads.aligned": {"laya.storage.store"}, "laya.storage.store": set()},
     ["laya.heads.aligned (models) imports laya.storage.store (storage)"]),
    ({"laya.storage.store": {"laya.core.config"}, "laya.core.config": set()}, []),
])
def test_an_upward_import_is_found(graph, found):
    assert upward_imports(graph) == found


def test_a_cycle_is_found():
    graph = {"laya.core.io": {"laya.storage.location"}, "laya.storage.location": {"laya.core.config"},
             "laya.core.config": {"laya.core.io"},
             "laya.storage.store": {"laya.core.io"}}
    assert cycles(graph) == [["laya.core.config", "laya.core.io", "laya.storage.location"]]


def test_imports_are_read_from_function_bodies_too():
    """laya.backbones.config reads the joint recipe's config; a lazy import inside a function still counts."""
    assert all(isinstance(deps, set) for deps in GRAPH.values())
    lazy = [name for name, path in MODULES.items() for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.FunctionDef) and any(isinstance(n, ast.ImportFrom) and (n.module or "")
                                                         .startswith("laya") for n in ast.walk(node))]
    assert all(GRAPH[name] for name in lazy)
