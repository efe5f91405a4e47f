"""No process-wide state (issue 33, DESIGN "no process-global registry"): the four packages'
source holds no module-level mutable cache, and a simulator belongs to whoever asked for
it (a :class:`solvers.Simulations` of the caller's, or nothing kept at all)."""

from __future__ import annotations

import ast
import gc
import weakref
from pathlib import Path

import numpy as np
import pytest

import acausal as ac
from examples.ladders import rc_ladder
from solvers import Simulations, simulate, simulate_many

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("acausal", "components", "solvers", "learning")

#: Containers that are state when a module fills them at run time.
MUTABLE_CALLS = {
    "dict",
    "list",
    "set",
    "bytearray",
    "OrderedDict",
    "defaultdict",
    "deque",
    "Counter",
    "ChainMap",
    "WeakKeyDictionary",
    "WeakValueDictionary",
    "WeakSet",
}
MUTATORS = {
    "append",
    "extend",
    "insert",
    "add",
    "update",
    "setdefault",
    "pop",
    "popitem",
    "clear",
    "remove",
    "discard",
    "move_to_end",
    "appendleft",
}
MEMO_DECORATORS = {"cache", "lru_cache"}

#: (package, name) -> why this process-wide object is no cache of models, systems or runs.
ALLOWED = {
    ("acausal", "_REGISTRY"): "pint's one UnitRegistry (units of two registries do not mix), "
    "made on first use",
    ("acausal", "_parsed"): "functools.cache of a pure function: unit string -> immutable "
    "pint Unit; bounded by the unit strings a library declares",
    ("acausal", "derivative_unit"): "functools.cache of a pure function: (unit string, "
    "order) -> unit string",
    ("acausal", "_state"): "threading.local re-entrancy flag of one pickle call, holds "
    "nothing between calls",
    ("solvers", "_INSTALLED"): "a worker process's payloads, installed by its pool's "
    "initializer; the calls of the user's process never fill it",
    ("solvers", "_WORKER"): "a worker's threads' unpickled payloads (pool, Dask or kept "
    "executor threads); the calls of the user's process build in their own Shared",
    ("learning", "_openblas"): "functools.cache of a zero-argument discovery of the OpenBLAS "
    "libraries numpy and scipy loaded: a fact of the process that cannot go stale, and "
    "dlopen-ing them on every blas_threads block would cost more than the block saves",
}


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _is_mutable(value: ast.AST | None) -> bool:
    containers = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)
    if isinstance(value, containers):
        return True
    return isinstance(value, ast.Call) and _name(value.func) in {*MUTABLE_CALLS, "local"}


def _is_empty(value: ast.AST) -> bool:
    if isinstance(value, ast.Call):
        return not value.args or _name(value.func) == "local"
    return isinstance(value, (ast.Dict, ast.List, ast.Set)) and not (
        getattr(value, "keys", None) or getattr(value, "elts", None)
    )


def _assigned(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """Names bound by the statements ``body`` (and the if/try/with blocks in it) to a
    mutable container: name -> value."""
    out: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for part in ("body", "orelse", "finalbody"):
                out.update(_assigned(getattr(node, part, [])))
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Name) and _is_mutable(getattr(node, "value", None)):
                out[t.id] = node.value
    return out


def _mutated(nodes: list[ast.AST]) -> set[str]:
    """Names whose container the module (all of its ``nodes``) changes: ``x[k] = v``,
    ``del x[k]``, ``x[k] += v``, ``x.append(...)`` and the other mutators."""
    out = set()
    for node in nodes:
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, ast.AugAssign):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                out.add(t.value.id)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if isinstance(node.func.value, ast.Name) and node.func.attr in MUTATORS:
                out.add(node.func.value.id)
    return out


def global_state(path: Path) -> list[tuple[str, int, str]]:
    """The process-wide state a module keeps: ``(name, line, what)`` for a module- or
    class-level mutable container that is empty or that the module changes, a ``global``
    statement, and a memoizing decorator (``functools.cache``, ``lru_cache``)."""
    tree = ast.parse(path.read_text())
    nodes = list(ast.walk(tree))  # walked once for the three scans below
    mutated = _mutated(nodes)
    found = []
    scopes = [tree.body] + [n.body for n in nodes if isinstance(n, ast.ClassDef)]
    for body in scopes:
        for name, value in _assigned(body).items():
            if _is_empty(value) or name in mutated:
                found.append((name, value.lineno, "mutable container filled at run time"))
    for node in nodes:
        if isinstance(node, ast.Global):
            found += [(name, node.lineno, "global statement") for name in node.names]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                if _name(d.func if isinstance(d, ast.Call) else d) in MEMO_DECORATORS:
                    found.append((node.name, node.lineno, "memoizing decorator"))
    return found


def test_the_scan_finds_the_kinds_of_global_state(tmp_path):
    """The scanner against a module holding each kind, and the constants it leaves."""
    source = tmp_path / "m.py"
    source.write_text(
        "import functools, threading\n"
        "from collections import OrderedDict\n"
        "TABLE = {'a': 1}\n"  # a constant table: not state
        "NAMES = ('a', 'b')\n"
        "_CACHE = OrderedDict()\n"
        "_SEEN = {}\n"
        "_FILLED = [1]\n"
        "_LOCAL = threading.local()\n"
        "_ONE = None\n"
        "def f(k):\n"
        "    global _ONE\n"
        "    _FILLED.append(k)\n"
        "@functools.lru_cache(maxsize=8)\n"
        "def g(k):\n"
        "    return k\n"
        "class C:\n"
        "    kept = []\n"
        "    modes = {'x': 1}\n"
    )
    names = sorted(name for name, _, _ in global_state(source))
    assert names == ["_CACHE", "_FILLED", "_LOCAL", "_ONE", "_SEEN", "g", "kept"]


def test_no_module_level_mutable_cache_in_the_packages():
    """Every module of acausal, components, solvers and learning: nothing found but the
    allowed entries, each with its reason."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for name, line, what in global_state(path):
                if (package, name) not in ALLOWED:
                    found.append(f"{path.relative_to(ROOT)}:{line} {name}: {what}")
    assert not found, "process-wide state:\n" + "\n".join(found)


# -- simulators belong to the caller --------------------------------------------------------
def rc() -> ac.System:
    """The one-stage RC ladder: a 1 V step at t = 0 through ``R1`` (1 ohm) into ``C1`` (1 F)
    from 0 V, ``C1.v = 1 - exp(-t / (R1.R C1.C))``."""
    return rc_ladder(1, arrays=False)


def test_simulations_reuse_one_simulator_across_parameter_values():
    """Three runs at other resistances, one simulator (and one set of model functions),
    each run the closed form at its own R."""
    model = ac.compile(rc())
    sims = Simulations()
    first = None
    for R in (1.0, 2.0, 0.25):
        res = simulate(
            model, t_end=2.0, dt=0.01, rtol=1e-10, atol=1e-12, params={"R1.R": R}, simulators=sims
        )
        exact = 1.0 - np.exp(-res.t / R)
        assert np.max(np.abs(res["C1.v"] - exact)) < 1e-8
        first = first or res.functions
        assert res.functions is first
    assert len(sims) == 1


def test_simulations_keep_the_most_recently_used():
    """Capacity 2, three grids: the least recently used is dropped (the grid reused second
    stays); another grid shares the model's functions; every run is the closed form."""
    model = ac.compile(rc())
    sims = Simulations(capacity=2)
    runs = {}
    for t_end in (1.0, 2.0, 1.0, 3.0):
        runs[t_end] = simulate(model, t_end=t_end, dt=0.1, rtol=1e-10, atol=1e-12, simulators=sims)
        res = runs[t_end]
        assert np.max(np.abs(res["C1.v"] - (1.0 - np.exp(-res.t)))) < 1e-8
    kept = sorted(float(sim.grid[-1]) for sim in sims.values())
    assert kept == [1.0, 3.0]  # 2.0 was the least recently used when 3.0 came
    assert runs[3.0].functions is runs[1.0].functions
    with pytest.raises(ac.OptionError, match=r"capacity=0"):
        Simulations(capacity=0)


def test_a_second_result_reuses_the_functions_given_simulations():
    """The same model simulated again with the caller's Simulations: the readout's
    functions built for the first result serve the second; another grid gets another
    integrator and the same functions (replaces test_lazy_results'
    test_a_second_result_reuses_the_functions, which counted on a process-wide cache)."""
    model = ac.compile(rc())
    sims = Simulations()
    first = simulate(model, t_end=1.0, dt=0.01, rtol=1e-10, atol=1e-12, simulators=sims)
    first["R1.v"]
    readout = first.functions.readout
    built = dict(readout._functions)
    res = simulate(
        model, t_end=1.0, dt=0.01, rtol=1e-10, atol=1e-12, params={"R1.R": 4.0}, simulators=sims
    )
    assert res.functions.readout is readout
    assert np.max(np.abs(res["R1.v"] - np.exp(-res.t / 4.0))) < 1e-7
    assert readout._functions == built  # nothing new was built for the second result
    other = simulate(model, t_end=0.5, dt=0.05, rtol=1e-10, atol=1e-12, simulators=sims)
    assert other.functions is first.functions
    np.testing.assert_allclose(other["R1.v"], first["R1.v"][::5][: other.t.size], atol=1e-9)


def _models_alive() -> int:
    gc.collect()
    return sum(isinstance(o, ac.Model) for o in gc.get_objects())


def test_a_simulated_model_is_freed_when_its_caller_lets_go():
    """After ``simulate`` and ``simulate_many`` (serial: the tasks run in this process),
    nothing of this package holds the model or a copy of it: with the caller's references
    gone, the number of live models is back where it was."""
    before = _models_alive()
    model = ac.compile(rc())
    ref = weakref.ref(model)
    res = simulate(model, t_end=1.0, dt=0.1)
    batch = simulate_many(
        model, {"R1.R": [1.0, 2.0]}, t_end=1.0, dt=0.1, rtol=1e-10, atol=1e-12, outputs=["C1.v"]
    )
    assert batch.errors == {}
    assert np.max(np.abs(batch["C1.v"][1] - (1.0 - np.exp(-batch.t / 2.0)))) < 1e-8
    assert res.model is model
    del model, res, batch
    assert _models_alive() == before
    assert ref() is None
