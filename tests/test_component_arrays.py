"""Arrays of components (``Component.array``) and their connectors connected element by
element: the same components, names, equations and results as building and connecting the
instances one by one."""

import copy
import pickle

import casadi as cs
import numpy as np
import pytest

import acausal as ac
from acausal.structure.graph import flat_incidence, pattern
from components import electrical as el
from components import translational as tr
from examples.ladders import chain, rc_ladder
from tests.shared import same_equations


def test_instances_are_named_and_own_their_symbols():
    rs = el.Resistor.array("R", 3, R=2.0)
    assert [r.name for r in rs] == ["R1", "R2", "R3"]
    assert len({r.token for r in rs}) == 3
    r2 = rs[1]
    assert r2.p.owner is r2 and r2.connectors["n"].owner is r2
    assert r2.name_of(r2.v) == "R2.v" and r2.name_of(r2.p.i) == "R2.p.i"
    assert r2.quantities["R"].value == 2.0
    # its equations are the constructor's, in its own symbols
    built = el.Resistor("R2", R=2.0)
    assert [e.text() for e in r2.declared_equations] == [e.text() for e in built.declared_equations]
    names = {s.name() for e in r2.declared_equations for s in cs.symvar(e.residual)}
    assert all(r2.token in n for n in names)


def test_instances_made_alone_or_from_all_expressions_are_the_constructors():
    """The first few instances made objects get their equations' expressions alone, the
    later ones from every instance's, made once (and a flattened array's origins read
    them): either way the constructor's equations, in the instance's own symbols."""
    from acausal.arrays import _ALONE

    caps = el.Capacitor.array("C", _ALONE + 9, C=2.0, v0=0.0)
    want = [e.text() for e in el.Capacitor("C7", C=2.0, v0=0.0).declared_equations]
    for c in caps:
        assert [e.text() for e in c.declared_equations] == want
        held = {s.name() for e in c._equations for s in cs.symvar(e.expr)}
        assert all(c.token in n for n in held)
    assert caps._layout.exprs.made


def test_start_values_and_derivatives_refer_to_the_instance():
    caps = el.Capacitor.array("C", 2, C=0.5, v0=1.5)
    c2 = caps[1]
    start = c2.quantities["v"].start
    assert start.is_symbolic() and c2.name_of(start) == "C2.v0"
    assert c2.quantities["v"].fixed and c2.quantities["v0"].value == 1.5
    (eq,) = [e for e in c2.declared_equations if "der" in e.text()]
    assert eq.text() == "i == C*der(v)"


def _results(model: ac.Model, names: list[str]) -> np.ndarray:
    from solvers import simulate

    res = simulate(model, t_end=1.0, dt=0.05, rtol=1e-10, atol=1e-12)
    return np.array([res[q] for q in names])


@pytest.mark.parametrize("build", [rc_ladder, chain])
def test_array_ladders_compile_and_simulate_as_built_one_by_one(build):
    """Arrays connected element by element (a chain by slices, a ground to all) and the
    same ladder built and connected instance by instance: the same equations, names and
    states, and the same trajectories (to rounding) for every variable."""
    by_array, one_by_one = ac.compile(build(6, True)), ac.compile(build(6, False))
    assert same_equations(by_array, one_by_one)
    names = sorted(by_array.names)
    a, b = _results(by_array, names), _results(one_by_one, names)
    assert np.max(np.abs(a - b)) <= 1e-12 * np.max(np.abs(b))
    assert "R4.v" in by_array.names or "S4.f" in by_array.names


def test_an_array_system_copies_and_pickles():
    s = rc_ladder(3, True)
    model = ac.compile(s)
    assert ac.compile(copy.deepcopy(s)) == model
    assert ac.compile(pickle.loads(pickle.dumps(s))) == model
    assert pickle.loads(pickle.dumps(model)) == model
    # a copy of one instance leaves its array behind: a component of its own
    resistors = el.Resistor.array("R", 50, R=2.0)
    alone = copy.deepcopy(resistors[7])
    assert alone.name == "R8" and alone.__dict__["_element"].array is None
    lone = ac.System("lone")
    lone.add(alone)
    assert lone.components == [alone]
    # a pickle of arrays holds their matrices, not an object per instance
    assert len(pickle.dumps(rc_ladder(30, True))) < 1.2 * len(pickle.dumps(rc_ladder(30, False)))


def test_classes_that_cannot_be_copied_are_built_by_their_constructor():
    # the mass between hard stops has events: each instance is constructed
    stops = tr.MassWithStop.array("M", 3, m=2.0, smin=-1.0, smax=1.0)
    assert [m.name for m in stops] == ["M1", "M2", "M3"]
    assert [len(m.events) for m in stops] == [1, 1, 1]
    assert stops[2].quantities["m"].value == 2.0
    # behind the same interface: connected element by element, the model built one by one
    s1, s2 = ac.System("stops"), ac.System("stops")
    wall1, wall2 = tr.Fixed("wall"), tr.Fixed("wall")
    springs = tr.Spring.array("S", 3, c=5.0)
    s1.connect(wall1.flange, springs.flange_a)
    s1.connect(springs.flange_b, stops.flange_a)
    for k in range(3):
        spring = tr.Spring(f"S{k + 1}", c=5.0)
        mass = tr.MassWithStop(f"M{k + 1}", m=2.0, smin=-1.0, smax=1.0)
        s2.connect(wall2.flange, spring.flange_a)
        s2.connect(spring.flange_b, mass.flange_a)
    with pytest.warns(UserWarning, match="unconnected"):
        a, b = ac.compile(s1), ac.compile(s2)
    assert same_equations(a, b) and a.modes == b.modes


@pytest.mark.filterwarnings("ignore:oscillators. unconnected connectors")
def test_a_mass_array_simulates_like_the_closed_form():
    """Three masses on springs to the wall, released from 0.1 m: each oscillates as
    ``s = 0.1 cos(w t)``, ``w = sqrt(c / m)`` (closed form)."""
    from solvers import simulate

    s = ac.System("oscillators")
    wall = tr.Fixed("wall")
    masses = tr.Mass.array("M", 3, m=0.5, s0=0.1, v0=0.0)
    springs = tr.Spring.array("S", 3, c=8.0)
    s.connect(wall.flange, springs.flange_a)  # the wall to every spring
    s.connect(springs.flange_b, masses.flange_a)
    res = simulate(s, t_end=1.0, dt=0.01, rtol=1e-10, atol=1e-12)
    exact = 0.1 * np.cos(4.0 * res.t)
    for k in (1, 2, 3):
        assert np.max(np.abs(res[f"M{k}.s"] - exact)) < 1e-7


@pytest.mark.parametrize("n", [0, -2, 1.5, True])
def test_a_bad_count_is_an_error(n):
    with pytest.raises(ac.OptionError, match="n must be an int"):
        el.Resistor.array("R", n)


def test_time_stays_shared_and_sources_agree():
    """Sources read ``time``, which is not the template's own symbol: every instance reads
    the same ``time``, and the model equals the one built instance by instance."""

    def build(arrays: bool) -> ac.System:
        s = ac.System("sources")
        ground = el.Ground("G")
        if arrays:
            sources = el.SineVoltage.array("V", 3, V=2.0, f=0.5)
            loads = el.Resistor.array("R", 3, R=4.0)
            s.connect(sources.p, loads.p)
            s.connect(sources.n, loads.n, ground.p)
            return s
        sources = [el.SineVoltage(f"V{k}", V=2.0, f=0.5) for k in (1, 2, 3)]
        loads = [el.Resistor(f"R{k}", R=4.0) for k in (1, 2, 3)]
        for v, r in zip(sources, loads):
            s.connect(v.p, r.p)
            s.connect(v.n, r.n, ground.p)
        return s

    model = ac.compile(build(True))
    assert same_equations(model, ac.compile(build(False)))
    current = model.outputs[model.check_name("R3.i")]  # V sin(2 pi f t) / R at t = 0.5
    values = cs.DM(list(model.defaults.values()))
    at = cs.substitute(current, cs.vertcat(model.p, model.t), cs.vertcat(values, 0.5))
    assert float(cs.evalf(at)) == pytest.approx(0.5, rel=1e-12)


def test_changed_instances_are_flattened_one_by_one():
    """The chain's arrays with one spring given a variable and an equation after the
    array was made, and one mass its start value replaced: those two instances are
    flattened as components of their own, the others from their arrays' matrices, and the
    model is the one built one by one with the same changes (equations and results)."""

    def changed(arrays: bool) -> tuple[ac.System, list]:
        s = chain(5, arrays=arrays)
        comps = {c.name: c for c in s.all_components()}
        spring, mass = comps["S3"], comps["M4"]
        power = spring.variable("power")
        spring.equations(power == spring.f * spring.flange_a.s)
        mass.quantities["s"].start = mass.quantities["v"].start  # 0 as well: same results
        return s, [c for c in s._order if isinstance(c, ac.ComponentArray)]

    s, arrays = changed(True)
    loose = {a.prefix: [c.name for c in a._split()[0]] for a in arrays}
    assert loose == {"M": ["M4"], "S": ["S3"], "D": []}
    by_array, one_by_one = ac.compile(s), ac.compile(changed(False)[0])
    assert "S3.power" in by_array.names
    assert ac.compile(pickle.loads(pickle.dumps(s))) == by_array  # the changes travel
    assert same_equations(by_array, one_by_one)
    start = by_array.flat.symbols["M4.s"].start
    assert by_array.flat.display(start) == "M4.v0"
    names = sorted(by_array.names)
    a, b = _results(by_array, names), _results(one_by_one, names)
    assert np.max(np.abs(a - b)) <= 1e-12 * np.max(np.abs(b))


def test_an_instance_and_its_array_element_are_one_connector():
    """``caps[k].port`` (the instance as an object) and ``caps.port[k]`` (the array's
    element) are one node: connecting either gives the same model."""
    s1, s2 = ac.System("one"), ac.System("two")
    for s, by_object in ((s1, True), (s2, False)):
        ground, source = el.Ground("G"), el.ConstantVoltage("V", V=1.0)
        rs = el.Resistor.array("R", 4, R=2.0)
        s.connect(source.n, ground.p)
        s.connect(source.p, rs.p)
        if by_object:
            s.connect(rs[2].n, ground.p)
            s.connect(rs.n[[0, 1, 3]], ground.p)
        else:
            s.connect(rs.n, ground.p)
    a, b = ac.compile(s1), ac.compile(s2)
    assert same_equations(a, b)
    assert len(s1.connection_sets()) == len(s2.connection_sets()) == 2
    assert sorted(len(c) for c in s1.connection_sets()) == [5, 6]


def test_connector_arrays_index_like_numpy_arrays():
    rs = el.Resistor.array("R", 5, R=1.0)
    assert isinstance(rs.p, ac.ConnectorArray) and len(rs.p) == 5
    assert rs.p[2] is rs[2].p and rs.p[-1] is rs[4].p
    assert rs.p[1:3].name == "R[2..3].p" and rs.n[[4]].name == "R[5].n"
    assert [c.name for c in rs.p[np.array([0, 4])]] == ["R1.p", "R5.p"]
    assert rs.connector("p").name == "R[1..5].p"
    assert repr(rs) == "<ComponentArray R1..R5 of Resistor>" and len(rs[1:3]) == 2
    assert rs.p[np.array([True, False, True, False, True])].name == "R[1..5].p"
    assert len(rs.p[np.arange(5) % 2 == 0]) == 3
    with pytest.raises(ac.OptionError, match="index with an int"):
        rs.p[0.5, 1]
    with pytest.raises(AttributeError, match="'q' is not a connector of Resistor"):
        rs.connector("q")


def test_mistakes_with_arrays_are_named_errors():
    rs = el.Resistor.array("R", 3, R=1.0)
    cs_ = el.Capacitor.array("C", 4, C=1.0)
    s = ac.System("bad")
    with pytest.raises(ac.ConnectError, match=r"R\[1..3\].n \(3\), C\[1..4\].p \(4\)\): arrays"):
        s.connect(rs.n, cs_.p)
    with pytest.raises(ac.ConnectError, match="R2.n is connected to itself"):
        s.connect(rs.n, rs.n[[2, 1, 0]])  # R2.n with R2.n
    with pytest.raises(ac.ConnectError, match="must have the same type"):
        s.connect(rs.n, tr.Mass.array("M", 3, m=1.0).flange_a)
    with pytest.raises(ac.ConnectError, match="not a connector or a connector array"):
        s.connect(rs.n, rs)
    s.connect(rs.n, cs_.p[:3])
    with pytest.raises(ac.NameClashError, match="R2 is both a component and one of"):
        s.add(el.Resistor("R2", R=1.0))
    s.add(el.Capacitor.array("C1", 2, C=1.0))  # C11, C12: not among C1..C4
    with pytest.raises(ac.NameClashError, match=r"C1 is one of <ComponentArray C1..C4 .* C1..C2"):
        s.add(el.Capacitor.array("C", 2, C=1.0))
    other = ac.System("other")
    with pytest.raises(ac.ConnectError, match="already belongs to system bad"):
        other.connect(rs.p, cs_.n[:3])
    with pytest.raises(ac.ConnectError, match="already belongs to system bad"):
        other.add(rs[1])


def _same_entries(a: cs.SX, b: cs.SX) -> bool:
    """Same pattern, and entries equal as expressions (compared a few levels deep)."""
    return a.sparsity() == b.sparsity() and all(
        cs.is_equal(x, y, 10) for x, y in zip(cs.vertsplit(a), cs.vertsplit(b))
    )


def test_vstack_is_vertcat():
    from acausal.symbols import vstack

    x, y = cs.SX.sym("x", 4), cs.SX.sym("y", 3)
    dense = [x, cs.sin(y), cs.SX(0, 1), x[1] * y[2], cs.SX(2.0)]
    sparse = [x, cs.SX(3, 1), y]  # structural zeros: kept, as vertcat keeps them
    many = [x[k % 4] for k in range(40)]
    for parts in (dense, sparse, many, [x]):
        assert _same_entries(vstack(parts), cs.vertcat(*parts))
    assert vstack(sparse).nnz() == 7


def test_an_array_inside_a_component_connects_element_by_element():
    """A component holding an array of three resistors in series (a chain by slices,
    inside the component): fed by 1 V, the current is 1 / (3 R) (closed form)."""
    from solvers import simulate

    class Series(ac.Component):
        def __init__(self, name: str, R: float) -> None:
            super().__init__(name)
            self.rs = el.Resistor.array("R", 3, R=R)
            self.connect(self.rs.n[:-1], self.rs.p[1:])
            self.p = self.expose("p", self.rs.p[0])
            self.n = self.expose("n", self.rs.n[-1])

    s = ac.System("series")
    source, ground, series = el.ConstantVoltage("V", V=1.0), el.Ground("G"), Series("S", 2.0)
    s.connect(source.p, series.p)
    s.connect(source.n, series.n, ground.p)
    res = simulate(s, t_end=1.0, dt=0.5)
    assert [c.full_name for c in series.subcomponents()] == ["S.R1", "S.R2", "S.R3"]
    np.testing.assert_allclose(res["S.R2.i"], 1.0 / 6.0, rtol=1e-12)


@pytest.mark.parametrize("bulk, chunk", [(True, 1 << 15), (True, 7), (False, 1 << 15)])
def test_symbols_made_in_bulk_are_those_sx_sym_makes(bulk, chunk, monkeypatch):
    """An array's further instances get their symbols from deserializations of columns
    CasADi's own serializer would write (checked at import; ``SX.sym`` per name
    otherwise), one per ``_CHUNK`` symbols: the same names in the same order, each its
    own symbol (distinct nodes, unlike the copies of one), with either path and in one
    part or many; and a whole ladder built either way compiles to the same equations."""
    import acausal.symbols as symbols

    assert symbols._BULK  # this CasADi writes the format the bulk path writes
    monkeypatch.setattr(symbols, "_BULK", bulk)
    monkeypatch.setattr(symbols, "_CHUNK", chunk)
    around, tokens = [("R@", ":v"), ("der(C@", ":x)")], symbols.new_tokens(40)
    assert len(set(tokens)) == 40 and all(len(t) == 10 for t in tokens)
    made = symbols.symbols_around(around, tokens)
    expected = [f"{a}{t}{b}" for t in tokens for a, b in around]
    assert [s.name() for s in cs.vertsplit(made)] == expected
    assert made.is_valid_input() and len({s.element_hash() for s in cs.vertsplit(made)}) == 80
    assert cs.symvar(made[5] + made[7])[0].name() == expected[5]  # usable as a symbol
    assert same_equations(ac.compile(rc_ladder(5, True)), ac.compile(rc_ladder(5, False)))


@pytest.mark.parametrize("build", [lambda: rc_ladder(7, True), lambda: chain(7, True)])
def test_the_arrays_rows_incidence_from_their_templates_is_casadis(build):
    """flatten names the variables each array instance's row holds from its template's
    incidence (repeated through the instance's names): the same 0/1 rows as CasADi's
    sparsity pass over those rows' residuals, derivatives and time included."""
    from examples.references.thermal_plate import plate

    for system in (build(), plate(4)):
        flat = ac.structure.flatten(system)
        assert flat.array_entries is not None and flat.array_rows > 0
        names = [*flat.variables, *flat.symbols.keys() - set(flat.variables)]
        names = [n for n in names if n in flat.symbols]
        position = {n: k for k, n in enumerate(names)}
        position[None] = len(names)
        allsyms = cs.vertcat(*[flat.sym(n) for n in names], flat.t)
        n_conn = len(flat.connection_entries.indptr) - 1
        stop = flat.residuals.numel() - n_conn
        start = stop - flat.array_rows
        ours = flat_incidence(flat, flat.residuals, lambda s=allsyms: s, position)[start:stop]
        theirs = pattern(flat.residuals[start:stop], allsyms)
        assert (ours != theirs).nnz == 0 and theirs.nnz > 2 * flat.array_rows


@pytest.mark.parametrize("build", [lambda: rc_ladder(7, True), lambda: chain(7, True)])
def test_the_arrays_affine_rows_from_their_templates_are_casadis(build):
    """Alias elimination reads the arrays' rows' incidence, Jacobian in the variables,
    offsets at zero and whether those are affine or depend on parameters off their
    templates: the same as CasADi's sparsity and affine_rows over those rows' residuals,
    value for value."""
    from acausal.structure.alias import Classes
    from acausal.structure.alias_rows import Rows
    from acausal.structure.graph import affine_rows
    from examples.references.thermal_plate import plate

    class Lag(ac.Component):  # (one row of variables only, two of them: a Jacobian row)
        def __init__(self, name: str) -> None:
            super().__init__(name)
            x, y, k = (
                self.variable("x", 1.0, fixed=True),
                self.variable("y"),
                self.parameter("k", 2.0),
            )
            self.equations(ac.der(x) == -k * x, y == 3 * x)

    lags = ac.System("lags")
    lags.add(Lag.array("L", 3))
    for system in (build(), plate(4), lags):
        flat = ac.structure.flatten(system)
        rows = Rows(flat, Classes(flat))
        arrays = list(range(rows.array_start, rows.array_start + flat.array_rows))
        theirs = pattern(rows.residuals[arrays], rows.allsyms)  # (the incidence too)
        assert (rows.pattern[arrays] != theirs).nnz == 0
        t = rows.templates
        at = np.flatnonzero(t.covered)
        assert at.size > flat.array_rows // 4
        inc = rows.pattern[(at + rows.array_start).tolist()]
        held = np.flatnonzero(np.bincount(inc.indices, minlength=len(rows.columns)))
        x, p = held[held < rows.n_variables], held[held >= rows.n_variables]
        assert ((p >= rows.params[0]) & (p < rows.params[1])).all()
        res = rows.residuals[(at + rows.array_start).tolist()]
        lin = affine_rows(
            res, rows.allsyms[x.tolist()], rows.allsyms[p.tolist()], rows.values[p - rows.params[0]]
        )
        theirs = np.zeros((at.size, len(rows.columns)))
        theirs[lin.rows, x[lin.cols]] = lin.values
        ours = t.entries[at].toarray()
        assert (ours == theirs).all() and (t.entries[at] != 0).nnz == len(lin.rows)
        assert (t.offsets[at] == lin.offsets).all() and (t.affine[at] == lin.affine).all()
        assert (t.symbolic[at] == lin.symbolic).all()


@pytest.mark.parametrize("build", [chain, rc_ladder])
def test_equation_records_made_when_read_are_the_stacked_residuals(build):
    """The flat, reduced and index-reduced forms make an array's equation records only
    when read: read out of order, by slices and negative positions, each is the residual
    of its row of the stacked column, with the source of the row it came from."""
    model = ac.compile(build(4, True))
    for form in (model.flat, model.reduced, model.ir):
        n = len(form.equations)
        rows = [n - 1, 0, n // 2, 1, n - 2]
        records = [form.equations[r] for r in rows]
        assert records == form.equations.take(rows)
        assert form.equations[-1] is form.equations[n - 1]
        assert form.equations[1:3] == [form.equations[1], form.equations[2]]
        assert list(form.equations) == form.equations.take(range(n))
        for r, e in zip(rows, records):
            assert cs.is_equal(e.residual, form.residuals[r], 2)
        with pytest.raises(IndexError):
            form.equations[n]
    flat_sources = {id(e.source) for e in model.flat.equations}
    assert all(id(e.source) in flat_sources for e in model.reduced.equations)
    assert [e.source for e in model.ir.equations] == list(model.reduced.equations)
