"""Forms are values: compiled models and fit results travel to another process, compiling is
a pure function of the system, the user's objects stay as they were, every stage can be run
and printed on its own, and misuse gets a clear error."""

import copy
import pickle
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import casadi as cs
import numpy as np
import pytest

import acausal as ac
import learning as ln
from components import electrical as el
from components import translational as tr
from examples.references.sine_rc import T, rc
from solvers import simulate

ROOT = Path(__file__).resolve().parents[1]


def rc_circuit(R=2.0):
    """Step source, resistor, 1 F capacitor from 0 V: ``v = 1 - exp(-t / R)``."""
    s = ac.System("rc")
    V, Rs = el.StepVoltage("V", V=1.0, start_time=0.0), el.Resistor("R", R=R)
    C, G = el.Capacitor("C", C=1.0, v0=0.0), el.Ground("G")
    s.connect(V.p, Rs.p)
    s.connect(Rs.n, C.p)
    s.connect(C.n, V.n, G.p)
    return s


def fingerprint(system):
    """Everything a user could observe of their system: every component's attributes and
    quantities (kind, value, start, fixed), equations and connections, as text."""
    lines = [repr(system)]
    for comp in system.all_components():
        lines.append(f"{comp!r} {sorted(vars(comp))}")
        for q in comp.quantities.values():
            lines.append(f"  {q.name} {q.kind} {q.value!r} {q.start!s} {q.fixed} {q.key}")
        lines += [f"  {e.text()}" for e in comp.declared_equations]
    lines += [" -- ".join(c.name for c in conn) for conn in system.connections()]
    return "\n".join(lines)


# -- travel to another process --------------------------------------------------------------
def test_model_and_fit_result_round_trip_through_pickle_into_a_fresh_process(tmp_path):
    """A compiled model and a fit result are pickled here and simulated in a new Python
    process: the trajectories are identical to the last bit."""
    data = {"t": T, "C.v": simulate(rc(el.Resistor("R1", R=2.0)), grid=T, rtol=1e-10)["C.v"]}
    Rx = ln.Unknown("Rx", ac.Pin, law=ln.Polynomial(order=1, constraint="dissipative"))
    fit = ln.fit(rc(Rx), data, progress=False, rtol=1e-8, atol=1e-10)
    model = ac.compile(rc_circuit())
    here = {
        "model": simulate(model, t_end=3.0, dt=0.01, params={"R.R": 3.0})["C.v"],
        "fit": fit.simulate(grid=T, rtol=1e-8, atol=1e-10)["C.v"],
        "fit_system": simulate(fit.system, grid=T, rtol=1e-8, atol=1e-10)["C.v"],
    }
    path = tmp_path / "objects.pkl"
    path.write_bytes(pickle.dumps((model, fit)))
    script = textwrap.dedent(
        f"""
        import pickle, sys
        import numpy as np
        from solvers import simulate
        model, fit = pickle.loads(open({str(path)!r}, "rb").read())
        T = np.linspace(0.0, 6.0, 61)
        np.savez({str(tmp_path / "there.npz")!r},
            model=simulate(model, t_end=3.0, dt=0.01, params={{"R.R": 3.0}})["C.v"],
            fit=fit.simulate(grid=T, rtol=1e-8, atol=1e-10)["C.v"],
            fit_system=simulate(fit.system, grid=T, rtol=1e-8, atol=1e-10)["C.v"],
            loss=fit.loss)
        """
    )
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=True, timeout=600)
    there = np.load(tmp_path / "there.npz")
    for key, values in here.items():
        assert np.array_equal(there[key], values), key
    assert float(there["loss"]) == fit.loss
    # and against the closed form, so the identical numbers are also right
    t = np.arange(301) * 0.01
    assert np.max(np.abs(here["model"] - (1 - np.exp(-t / 3.0)))) < 1e-5


@pytest.mark.parametrize("which", ["diode_events", "friction_events", "cart_pendulum_index_3"])
def test_models_with_events_and_index_reduction_round_trip_through_pickle(which):
    """The forms of index reduction (new derivative symbols) and of events (modes, crossing
    functions, updates) survive pickling: equal models, identical runs and event logs."""
    from examples.references.mechanisms import cart_pendulum
    from examples.references.switching import friction_system, half_wave

    build, kw = {
        "diode_events": (half_wave, dict(t_end=0.05, dt=1e-4)),
        "friction_events": (friction_system, dict(t_end=2.0, dt=0.01)),
        "cart_pendulum_index_3": (cart_pendulum, dict(t_end=1.0, dt=0.01, rtol=1e-8)),
    }[which]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a free flange: zero force, on purpose
        model = ac.compile(build())
    restored = pickle.loads(pickle.dumps(model))
    assert restored == model
    a, b = simulate(model, **kw), simulate(restored, **kw)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.z, b.z) and a.events == b.events
    assert len(a.events) >= (1 if "events" in which else 0)


def test_symbol_tables_stack_their_own_symbols_also_after_pickling():
    """Each form's symbol table keeps its symbols stacked in its order, so a stage takes
    any list of them by one indexing: the stack must hold the records' very symbols (the
    ones the equations use), in every form, after the stages' additions, and in a model
    restored from a pickle."""
    from examples.references.mechanisms import cart_pendulum

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = ac.compile(cart_pendulum())
    restored = pickle.loads(pickle.dumps(model))
    for m in (model, restored):
        tables = (m.flat.symbols, m.reduced.symbols, m.ir.symbols)
        assert len(tables[0]) <= len(tables[1]) < len(tables[2])  # index reduction adds some
        for table in tables:
            names = list(table)[::-1][::2]  # another order, and not all of them
            one_by_one = cs.vertcat(*[table[n].sym for n in names])
            assert cs.is_equal(table.take(names), one_by_one)
            assert table.take([]).shape == (0, 1)
        # the stack is the symbols the equations hold: substituting through it removes them
        res = m.ir.residuals
        zeroed = cs.substitute(res, m.ir.symbols.stack, cs.DM.zeros(len(m.ir.symbols)))
        assert not cs.depends_on(zeroed, m.ir.symbols.stack)
        assert cs.symvar(zeroed) == [] or all(s.name() == "time" for s in cs.symvar(zeroed))
        assert cs.depends_on(res, m.ir.syms(m.ir.states))
    with pytest.raises(TypeError, match="read-only"):
        model.flat.symbols["x"] = None
    with pytest.raises(ValueError, match="already in the table"):
        first = next(iter(model.flat.symbols))
        model.flat.symbols.extended({first: model.flat.symbols[first]})


def test_a_copied_system_is_independent_and_compiles_to_an_equal_model():
    s = rc_circuit()
    twin = copy.deepcopy(s)
    assert ac.compile(twin) == ac.compile(s)
    twin.components[1].quantities["R"].value = 5.0  # only the copy changes
    assert ac.compile(s).parameters["R.R"] == 2.0
    assert ac.compile(twin).parameters["R.R"] == 5.0
    assert ac.compile(twin) != ac.compile(s)
    restored = pickle.loads(pickle.dumps(s))
    assert ac.compile(restored) == ac.compile(s)


# -- compiling is a pure function ---------------------------------------------------------
def test_compiling_twice_or_two_builds_gives_equal_models():
    a, b = ac.compile(rc_circuit()), ac.compile(rc_circuit())
    s = rc_circuit()
    assert a == b and ac.compile(s) == ac.compile(s)
    assert a.dump() == b.dump() and str(a) == str(b)
    assert ac.compile(rc_circuit(R=3.0)) != a  # a different parameter value is a different model
    assert a.with_parameters({"R.R": 3.0}) == ac.compile(rc_circuit(R=3.0))


def test_compile_simulate_and_fit_leave_the_users_objects_unchanged():
    data = {"t": T, "C.v": simulate(rc(el.Resistor("R1", R=2.0)), grid=T, rtol=1e-10)["C.v"]}
    Rx = ln.Unknown("Rx", ac.Pin, law=ln.Polynomial(order=1, constraint="dissipative"))
    s = rc(Rx)
    before = fingerprint(s)
    model = ac.compile(s)
    simulate(model, grid=T, params={"Rx.theta_x1": 0.3}, sensitivities=["Rx.theta_x1"])
    first = ln.fit(s, data, progress=False)
    assert fingerprint(s) == before
    assert model.parameters == ac.compile(s).parameters  # overrides never stick
    second = ln.fit(s, data, progress=False)  # from the same start: the same result
    # the start and its simulation are the same deterministic computation (the declared
    # values, CasADi's arithmetic): equal to the bit; the optimizer's steps go through
    # the BLAS, which need not be bitwise reproducible (MKL by memory alignment)
    assert second.start == first.start and second.loss_history[0] == first.loss_history[0]
    assert second.params == pytest.approx(first.params, rel=1e-8)
    assert second.loss == pytest.approx(first.loss, rel=1e-8)
    assert fingerprint(first.system) != before  # the fitted copy carries the fitted values
    fitted = first.system.all_components()
    theta = {
        q.name: q.value for c in fitted for q in c.quantities.values() if q.kind == "parameter"
    }
    assert all(theta[k] == v for k, v in first.params.items())


# -- the stages one by one ------------------------------------------------------------------
def test_the_stages_run_one_by_one_and_print_like_a_compiler_dump():
    st = ac.structure
    flat = st.flatten(rc_circuit())
    red = st.eliminate_aliases(flat)
    ir = st.reduce_index(red)
    blocks = st.sort_blt(ir)
    dae = st.causalize(ir, blocks)
    # 20 variables, 16 of them aliases or constants; the capacitor voltage is the state
    assert (len(flat.variables), len(red.eliminated), len(red.unknowns)) == (20, 16, 4)
    assert [ir.name(c) for c in ir.states] == ["C.v"]
    assert [b.kind for b in dae.blocks] == ["explicit"] * 4
    assert "C: i == C*der(v)" in str(flat) and "alias R.n.v = C.v" in str(red)
    assert "states: C.v" in str(ir)
    assert "4 explicit, 0 linear, 0 newton" in str(dae)
    # x' = (1 - v) / (R C) = 0.375 at v = 0.25, t = 0.5 (R = 2, C = 1), the same from
    # the stage-by-stage form and from ac.compile
    model = ac.compile(rc_circuit())
    assert str(model.dae).splitlines()[3] == str(dae).splitlines()[3]  # x' = ..., named
    assert (
        str(dae).splitlines()[3]
        == "x' = (-(((C.v-(V.offset+((V.start_time<=time)?V.V:0)))/R.R)/C.C))"
    )
    params = cs.vertcat(*[flat.sym(n) for n in flat.parameters])
    rate = cs.Function("f", [dae.x, params, flat.t], [dae.ode])
    values = list(flat.parameter_values.values())
    assert float(rate(0.25, values, 0.5)) == pytest.approx(0.375, rel=1e-15)
    assert flat.parameter_values == model.parameters
    with pytest.raises(TypeError, match="read-only"):
        flat.symbols["C.v"] = None


# -- misuse --------------------------------------------------------------------------------
def test_a_component_in_two_systems_is_refused():
    s = rc_circuit()
    other = ac.System("other")
    with pytest.raises(ac.ConnectError, match="R already belongs to system rc"):
        other.connect(s.components[1].p, el.Ground("G2").p)


def test_assigning_a_parameter_after_construction_is_refused():
    R = el.Resistor("R", R=1.0)
    with pytest.raises(ac.ParameterError, match=r"params=\{'R.R': 5\}"):
        R.R = 5


def test_an_empty_system_is_refused():
    with pytest.raises(ac.StructureError, match="system nothing is empty"):
        ac.compile(ac.System("nothing"))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"t_end": 1.0, "params": [2.0]}, "params must be a mapping"),
        ({"t_end": "10"}, "t_end = '10' must be a number"),
        ({"t_end": 1.0, "dt": "0.1"}, "dt = '0.1' must be a number"),
        ({"t_end": 1.0, "rtol": None}, "rtol = None must be a number"),
        ({"t_end": 1.0, "max_steps": 0}, "max_steps = 0 must be a positive whole number"),
        ({"t_end": 1.0, "max_steps": 1e5}, "max_steps = 100000.0 must be a positive whole"),
    ],
)
def test_misused_simulate_arguments_get_an_option_error(kwargs, match):
    model = ac.compile(rc_circuit())
    with pytest.raises(ac.OptionError, match=match):
        simulate(model, **kwargs)


def test_a_result_is_indexed_by_name_not_by_position():
    res = simulate(ac.compile(rc_circuit()), t_end=1.0)
    with pytest.raises(ac.OptionError, match="looked up by name"):
        res[0]
    with pytest.raises(ac.UnknownNameError, match="Did you mean 'C.v'"):
        res["C.vv"]


def test_fit_data_with_text_or_no_finite_sample_is_refused():
    Rx = ln.Unknown("Rx", ac.Pin, law=ln.Polynomial(order=1))
    s = rc(Rx)
    with pytest.raises(ac.OptionError, match=r"data\['C.v'\] of rc holds values that are not"):
        ln.fit(s, {"t": T, "C.v": ["a"] * len(T)}, progress=False)
    with pytest.raises(ac.OptionError, match=r"data\['C.v'\] of rc has no finite sample"):
        ln.fit(s, {"t": T, "C.v": np.full(len(T), np.nan)}, progress=False)


def test_negative_storage_parameters_warn_with_the_components_name():
    with pytest.warns(ac.ParameterWarning, match=r"C1.C = -1e-06 is below its physical minimum 0"):
        el.Capacitor("C1", C=-1e-6)
    with pytest.warns(ac.ParameterWarning, match=r"m.m = -2 is below its physical minimum 0"):
        tr.Mass("m", m=-2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        el.Inductor("L1", L=1e-3)  # positive: no warning


def test_a_fit_keeps_one_simulator_per_experiment_whatever_their_number():
    """More experiments than a :class:`solvers.Simulations` keeps by default: each keeps its
    own simulator, built once and reused at every evaluation (no rebuilding of integrators
    in the loop)."""
    from learning.fitting.objective import Objective
    from solvers.simulate import KEPT_SIMULATORS

    data = {"t": T, "C.v": simulate(rc(el.Resistor("R1", R=2.0)), grid=T, rtol=1e-10)["C.v"]}
    exps = [(rc(el.Resistor("R1", R=2.0)), data) for _ in range(KEPT_SIMULATORS + 2)]
    obj = Objective(exps, ["R1.R"])
    assert obj.loss([2.0]) < 1e-10  # the truth: every experiment matches its data
    first = [next(iter(e.simulators.values())) for e in obj.exps]
    obj.loss([2.5])
    obj.jacobian([2.5])
    assert [len(e.simulators) for e in obj.exps] == [1] * len(exps)
    assert all(next(iter(e.simulators.values())) is s for e, s in zip(obj.exps, first))


def _mass_on_damped_spring(s0: float, length: float) -> ac.System:
    """A mass of length ``length`` (from rest, centre at 0) hung on a spring and a damper
    from a wall at ``s0``."""
    s = ac.System("hung")
    wall = tr.Fixed("wall", s0=s0)
    spring, damper = tr.Spring("S", c=4.0), tr.Damper("D", d=0.4)
    mass = tr.Mass("M", m=1.0, L=length, s0=0.0, v0=0.0)
    s.connect(wall.flange, spring.flange_a, damper.flange_a)
    s.connect(spring.flange_b, damper.flange_b, mass.flange_a)
    return s


@pytest.mark.filterwarnings("ignore:.*unconnected connectors")
def test_aliases_with_parameter_offsets_keep_a_mechanism_index_one():
    """The flange at s - L/2 and the wall at s0 are aliases of the mass's position with
    offsets of parameters: the damper's s_rel is s - L/2 - s0, its der() der(s), so nothing
    is differentiated. The motion is the closed form of a damped oscillator, and moves
    with the parameters of a run (no recompiling: the offsets stay expressions)."""
    model = ac.compile(_mass_on_damped_spring(0.1, 0.2))
    assert model.index == 1 and model.dummy_derivatives == []
    sign, root, offset = model.reduced.eliminated["D.s_rel"]
    assert (sign, root) == (1.0, "M.s") and isinstance(offset, cs.SX)
    assert "alias D.s_rel = M.s + " in str(model.reduced)
    t = np.linspace(0.0, 5.0, 501)
    for s0, length in ((0.1, 0.2), (-0.3, 0.6)):
        res = simulate(model, grid=t, rtol=1e-10, atol=1e-12, params={"wall.s0": s0, "M.L": length})
        # m s'' = -c (s - L/2 - s0) - d s', s(0) = s'(0) = 0: s = e + A e^(-a t) cos(w t + phi)
        rest, a = s0 + length / 2, 0.2
        w = np.sqrt(4.0 - a**2)
        exact = rest - rest * np.exp(-a * t) * (np.cos(w * t) + a / w * np.sin(w * t))
        assert np.max(np.abs(res["M.s"] - exact)) < 1e-8
        assert np.allclose(res["D.s_rel"], res["M.s"] - length / 2 - s0, rtol=0, atol=1e-14)
        assert np.allclose(res["M.flange_b.s"], res["M.s"] + length / 2, rtol=0, atol=1e-14)
        assert np.allclose(res["der(D.s_rel)"], res["M.v"], rtol=0, atol=1e-14)
        assert np.all(res["wall.flange.s"] == s0)


@pytest.mark.filterwarnings("ignore:.*unconnected connectors")
def test_sensitivities_of_offset_aliases_match_central_differences():
    """An alias's offset of parameters enters its sensitivities: d/ds0 and d/dL of the
    damper's s_rel, the wall's position and der(s_rel) against central differences."""
    model = ac.compile(_mass_on_damped_spring(0.1, 0.2))
    run = {"grid": np.linspace(0.0, 3.0, 31), "rtol": 1e-11, "atol": 1e-13}
    res = simulate(model, sensitivities=["wall.s0", "M.L"], **run)
    h = 1e-6
    for p, v in (("wall.s0", 0.1), ("M.L", 0.2)):
        up = simulate(model, params={p: v + h}, **run)
        down = simulate(model, params={p: v - h}, **run)
        for name in ("D.s_rel", "wall.flange.s", "der(D.s_rel)"):
            fd = (up[name] - down[name]) / (2 * h)
            assert np.max(np.abs(res.sensitivity(name, p) - fd)) < 1e-7, (p, name)
    assert np.all(res.sensitivity("wall.flange.s", "wall.s0") == 1.0)
