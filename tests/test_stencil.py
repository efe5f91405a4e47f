"""The stencil compile (``acausal.stencil``): a large array model's DAE replicated from two
small ones is the full pipeline's DAE, to rounding, in the same orders; what does not have
the stencil's form goes to the full pipeline."""

import pickle
import warnings

import casadi as cs
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import acausal as ac
from acausal.model import compile_full
from acausal.stencil import MIN_CELLS, StencilModel
from components import electrical as el
from components import translational as tr
from examples.ladders import chain, rc_ladder
from solvers import simulate

N = MIN_CELLS + 20


def rlc_ladder(n: int) -> ac.System:
    """Stages of a series resistor and inductor with a shunt capacitor: two kinds of state
    per cell, each array's in a run of its own."""
    s = ac.System(f"rlc_{n}")
    source, ground = el.StepVoltage("V", V=1.0), el.Ground("G")
    rs = el.Resistor.array("R", n, R=1.0 / n)
    ls = el.Inductor.array("L", n, L=1.0 / n, i0=0.0)
    caps = el.Capacitor.array("C", n, C=1.0 / n, v0=0.0)
    s.connect(source.n, ground.p)
    s.connect(source.p, rs.p[0])
    s.connect(rs.n, ls.p)
    s.connect(ls.n[:-1], rs.p[1:])
    s.connect(ls.n, caps.p)
    s.connect(caps.n, ground.p)
    return s


def rc_ladder_with_ends(n: int) -> ac.System:
    """An RC ladder fed through a capacitor (a state of a plain component at the head) and
    loaded by a resistor at its end (a plain component at the tail)."""
    s = ac.System(f"rc_ends_{n}")
    source, ground = el.StepVoltage("V", V=1.0), el.Ground("G")
    rs = el.Resistor.array("R", n, R=1.0 / n)
    caps = el.Capacitor.array("C", n, C=1.0 / n, v0=0.0)
    coupling, load = el.Capacitor("C0", C=0.5, v0=0.1), el.Resistor("RL", R=2.0)
    s.connect(source.n, ground.p)
    s.connect(source.p, coupling.p)
    s.connect(coupling.n, rs.p[0])
    s.connect(rs.n[:-1], rs.p[1:])
    s.connect(rs.n, caps.p)
    s.connect(caps.n, ground.p)
    s.connect(rs.n[-1], load.p)
    s.connect(load.n, ground.p)
    return s


def chain_of_two_reaches(n: int) -> ac.System:
    """The chain with a second spring from each mass to the one after next (a cell's
    rates reach two cells each way: the small copies have 14 and 15 cells), the last two
    of those springs to the wall."""
    s = ac.System(f"reach_{n}")
    wall, force = tr.Fixed("W"), tr.ConstantForce("F", f_constant=1.0)
    masses = tr.Mass.array("M", n, m=1.0 / n, s0=0.0, v0=0.0)
    near = tr.Spring.array("S", n, c=100.0 * n)
    far = tr.Spring.array("T", n, c=30.0 * n)
    dampers = tr.Damper.array("D", n, d=float(n))
    s.connect(wall.flange, near.flange_a[0])
    s.connect(masses.flange_b[:-1], near.flange_a[1:])
    s.connect(near.flange_b, masses.flange_a, dampers.flange_b)
    s.connect(dampers.flange_a, wall.flange)
    s.connect(masses.flange_b[:-2], far.flange_a[:-2])
    s.connect(far.flange_b[:-2], masses.flange_a[2:])
    for k in (-2, -1):
        s.connect(far.flange_a[k], wall.flange)
        s.connect(far.flange_b[k], wall.flange)
    s.connect(masses.flange_b[-1], force.flange)
    return s


def _pair(build, n=N):
    stencil, full = ac.compile(build(n)), compile_full(build(n))
    assert isinstance(stencil, StencilModel) and not isinstance(full, StencilModel)
    return stencil, full


def _at(names, order):
    position = {q: k for k, q in enumerate(order)}
    return np.array([position[q] for q in names])


@pytest.mark.parametrize(
    "build", [rc_ladder, chain, rlc_ladder, rc_ladder_with_ends, chain_of_two_reaches]
)
def test_the_stencils_dae_is_the_full_pipelines(build):
    """The same states, parameters and names in the same orders, the same rates, outputs,
    breakpoints and start values at random states and parameters (the flow of the
    ground or wall, a sum over every cell, to rounding; everything else exactly)."""
    st, full = _pair(build)
    assert st.x_names == full.x_names and st.states == full.states
    assert st.names == full.names and list(st.defaults.items()) == list(full.defaults.items())
    assert st.dae.z.numel() == full.dae.z.numel() == 0
    rng = np.random.default_rng(3)
    x = rng.uniform(-1.0, 1.0, st.dae.x.numel())
    p = np.array(list(full.defaults.values())) * rng.uniform(0.5, 1.5, full.p.numel())

    def values(m):
        s = m.initial_starts.states
        starts = cs.vertcat(*[q.value if q is not None else 0.0 for q in s])
        fun = cs.Function("f", [m.dae.x, m.p, m.t], [m.dae.ode, m.outputs, m.breakpoints, starts])
        return [np.asarray(v).ravel() for v in fun(x, p, 0.3)]

    (ode, y, bp, s0), (ode_f, y_f, bp_f, s0_f) = values(st), values(full)
    assert np.array_equal(ode, ode_f) and np.array_equal(bp, bp_f) and np.array_equal(s0, s0_f)
    summed = [q for q in st.names if q in ("G.p.i", "wall.flange.f", "W.flange.f")]
    rest = np.setdiff1d(np.arange(len(y)), _at(summed, st.names))
    assert np.array_equal(y[rest], y_f[rest])
    scale = np.abs(y_f).max()
    assert np.max(np.abs(y - y_f)) <= 1e-13 * scale
    meta = [(s.fixed, s.source) for s in st.initial_starts.states]
    assert meta == [(s.fixed, s.source) for s in full.initial_starts.states]
    assert [f.at for f in st.initial_starts.fixed_on_states] == [
        f.at for f in full.initial_starts.fixed_on_states
    ]


def test_the_rc_ladder_by_the_stencil_is_its_hand_written_ode():
    """The last capacitor's voltage of the stencil's RC ladder against scipy's Radau on
    the ladder's ODE written by hand (``R = C = 1/n``, a 1 V step at 0)."""
    n = N
    res = simulate(ac.compile(rc_ladder(n)), t_end=1.0, dt=0.01, rtol=1e-10, atol=1e-12)
    rc = (1.0 / n) ** 2

    def rates(t, v):
        left = np.concatenate([[1.0], v[:-1]])
        right = np.concatenate([v[1:], [v[-1]]])
        return ((left - v) - (v - right)) / rc

    ref = solve_ivp(rates, (0.0, 1.0), np.zeros(n), "Radau", res.t, rtol=1e-10, atol=1e-12)
    assert np.max(np.abs(res[f"C{n}.v"] - ref.y[-1])) <= 1e-7


@pytest.mark.parametrize("build", [rc_ladder, chain])
def test_the_stencils_simulation_is_the_full_pipelines(build):
    st, full = _pair(build)
    names = ["G.p.i", "V.i", "C3.i", f"C{N}.v"] if build is rc_ladder else []
    names = names or ["wall.flange.f", "M1.a", "S3.f", f"M{N}.s", f"D{N - 1}.v_rel"]
    kw = {"t_end": 1.0, "dt": 0.01, "rtol": 1e-8, "atol": 1e-10}
    a, b = simulate(st, **kw), simulate(full, **kw)
    for q in names:
        assert np.max(np.abs(a[q] - b[q])) <= 1e-12 * max(1.0, np.abs(b[q]).max()), q
    # other parameter values, by name, as the full model takes them
    params = {"M5.m": 0.5 / N, "S1.c": 50.0 * N} if build is chain else {"R7.R": 2.0 / N}
    a, b = simulate(st, params=params, **kw), simulate(full, params=params, **kw)
    last = names[-2] if build is chain else names[-1]
    assert np.max(np.abs(a[last] - b[last])) <= 1e-12 * np.abs(b[last]).max()
    assert dict(st.with_parameters(params).defaults) == dict(full.with_parameters(params).defaults)


def test_the_stencil_models_forms_are_the_full_pipelines_when_read():
    """Its forms, BLT and summary are those of the full pipeline's model (made when first
    read); it pickles, and the copy simulates alike."""
    st, full = _pair(chain)
    for q in (f"M{N}.s", "der(M7.v)", "S3.c", "wall.flange.f", "F.f", "D5.d", "nothing"):
        assert st.unit(q) == full.unit(q), q
    assert st.n_states == full.n_states == 2 * N
    assert "_full" not in st.__dict__  # (units from the small model's)
    assert st.summary() == full.summary() and st.blt() == full.blt()
    assert st.flat.variables == full.flat.variables and len(st.blocks) == len(full.blocks)
    copy = pickle.loads(pickle.dumps(ac.compile(chain(N))))
    assert isinstance(copy, StencilModel) and "_full" not in copy.__dict__
    kw = {"t_end": 0.5, "dt": 0.01, "rtol": 1e-8, "atol": 1e-10}
    assert np.array_equal(simulate(copy, **kw)[f"M{N}.v"], simulate(st, **kw)[f"M{N}.v"])
    assert copy.summary() == full.summary()
    changed = st.with_parameters({"S3.c": 7.0})
    assert changed.full.defaults["S3.c"] == changed.defaults["S3.c"] == 7.0
    assert st.defaults["S3.c"] == st.full.defaults["S3.c"] == 100.0 * N
    # the equations' residuals along a run: the full model's functions on its vectors
    kw = {"t_end": 0.2, "dt": 0.01, "rtol": 1e-10, "atol": 1e-12}
    mine, theirs = simulate(st, **kw).residuals(top=3), simulate(full, **kw).residuals(top=3)
    assert [o for o, _ in mine] == [o for o, _ in theirs]
    assert np.allclose([v for _, v in mine], [v for _, v in theirs], rtol=0.0, atol=1e-12)
    assert max(v for _, v in mine) <= 1e-9
    assert st.parameter_symbol("S3.c").name() == "S3.c" == st.display(st.parameter_symbol("S3.c"))


def test_what_has_not_the_stencils_form_compiles_by_the_full_pipeline():
    # too few cells
    assert not isinstance(ac.compile(chain(MIN_CELLS - 1)), StencilModel)
    # arrays of different lengths
    s = ac.System("two_lengths")
    rs = el.Resistor.array("R", N, R=1.0)
    cs_ = el.Capacitor.array("C", N + 1, C=1.0, v0=0.0)
    ground = el.Ground("G")
    s.connect(rs.n, cs_.p[1:])
    s.connect(rs.p, cs_.p[:-1])
    s.connect(cs_.n, ground.p)
    assert not isinstance(ac.compile(s), StencilModel)
    # a resistor ladder: a block of equations spanning every cell (solved as one)
    s = ac.System("divider")
    source, ground = el.ConstantVoltage("V", V=1.0), el.Ground("G")
    series = el.Resistor.array("R", N, R=1.0)
    shunt = el.Resistor.array("S", N, R=2.0)
    cap = el.Capacitor("C", C=1.0, v0=0.0)
    s.connect(source.n, ground.p)
    s.connect(source.p, series.p[0])
    s.connect(series.n[:-1], series.p[1:])
    s.connect(series.n, shunt.p)
    s.connect(shunt.n, ground.p)
    s.connect(series.n[-1], cap.p)
    s.connect(cap.n, ground.p)
    model = ac.compile(s)
    assert not isinstance(model, StencilModel)
    res = simulate(model, t_end=1.0, dt=0.1)
    assert np.isfinite(res["C.v"]).all()
    # masses joined rigidly: index reduction across every cell (one body, two states)
    s = ac.System("rigid")
    masses = tr.Mass.array("M", N, m=1.0 / N, s0=0.0, v0=0.0)
    force, wall, spring = (
        tr.ConstantForce("F", f_constant=1.0),
        tr.Fixed("W"),
        tr.Spring("K", c=1.0),
    )
    s.connect(masses.flange_b[:-1], masses.flange_a[1:])
    s.connect(force.flange, masses.flange_a[0])
    s.connect(masses.flange_b[-1], spring.flange_a)
    s.connect(spring.flange_b, wall.flange)
    model = ac.compile(s)
    assert not isinstance(model, StencilModel) and model.n_states == 2


def test_an_element_connected_in_the_middle_or_changed_falls_back():
    s = chain(N)
    masses = s._arrays["M"]
    probe, extra = tr.Fixed("probe"), tr.Spring("K", c=1.0)
    s.connect(masses[N // 2].flange_b, extra.flange_a)
    s.connect(extra.flange_b, probe.flange)
    model = ac.compile(s)
    assert not isinstance(model, StencilModel) and "K.f" in model.names
    # one spring given a variable and an equation after its array was made
    s = chain(N)
    spring = s._arrays["S"][N // 2]
    power = spring.variable("power")
    spring.equations(power == spring.f * spring.flange_a.s)
    model = ac.compile(s)
    assert not isinstance(model, StencilModel) and f"S{N // 2 + 1}.power" in model.names


def test_unconnected_connectors_are_warned_of_by_the_full_pipeline():
    s = ac.System("loose")
    masses = tr.Mass.array("M", N, m=1.0, s0=0.0, v0=0.0)
    springs = tr.Spring.array("S", N - 1, c=1.0)
    s.connect(masses.flange_b[:-1], springs.flange_a)
    s.connect(springs.flange_b, masses.flange_a[1:])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = ac.compile(s)
    assert any("unconnected connectors" in str(w.message) for w in caught)
    assert not isinstance(model, StencilModel)


def test_the_stencil_models_sensitivities_are_the_full_pipelines_and_finite_differences():
    """Forward sensitivities of the last voltage, the source's current and the ground's
    (a sum over every cell, zero but for rounding: the source returns through the ground)
    to one resistance: the full model's to rounding (of the source current's scale), and
    central differences of the stencil model's own runs."""
    st, full = _pair(rc_ladder)
    kw = {"t_end": 0.5, "dt": 0.01, "rtol": 1e-10, "atol": 1e-12}
    a, b = simulate(st, sensitivities=["R5.R"], **kw), simulate(full, sensitivities=["R5.R"], **kw)
    last = f"C{N}.v"
    scale = np.abs(b.sensitivity("V.i", "R5.R")).max()
    for q in (last, "V.i", "G.p.i"):
        want = b.sensitivity(q, "R5.R")
        assert np.max(np.abs(a.sensitivity(q, "R5.R") - want)) <= 1e-12 * max(
            scale, np.abs(want).max()
        )
    h = 1e-4 / N
    up = simulate(st, params={"R5.R": 1 / N + h}, **kw)[last]
    down = simulate(st, params={"R5.R": 1 / N - h}, **kw)[last]
    sens = a.sensitivity(last, "R5.R")
    assert np.max(np.abs((up - down) / (2 * h) - sens)) <= 1e-3 * np.abs(sens).max()


def test_a_parameter_of_a_stencil_model_is_fitted_back():
    """Output-error fitting (``learning.fit``) on the stencil's model: the first resistance
    recovered from the last voltage and the source current of a run with it tripled."""
    import learning as ln

    model = ac.compile(rc_ladder(N))
    assert isinstance(model, StencilModel)
    true = 3.0 / N
    kw = {"t_end": 1.0, "dt": 0.05, "rtol": 1e-10, "atol": 1e-12}
    run = simulate(model, params={"R1.R": true}, **kw)
    data = {"t": run.t, f"C{N}.v": run[f"C{N}.v"], "V.i": run["V.i"]}
    fitted = ln.fit(rc_ladder(N), data, physical=["R1.R"], progress=False)
    assert abs(fitted.params["R1.R"] - true) <= 1e-8 * true


def test_a_ground_joined_to_all_but_the_end_elements_gives_the_full_pipelines_results():
    """Capacitors to one ground but the first two and the last two, those to another: its
    flow a sum over the cells between (compiled either way, the full model's numbers)."""

    def split_grounds(n: int) -> ac.System:
        s = ac.System("split")
        source, ground, other = el.StepVoltage("V", V=1.0), el.Ground("G"), el.Ground("H")
        rs = el.Resistor.array("R", n, R=1.0 / n)
        caps = el.Capacitor.array("C", n, C=1.0 / n, v0=0.0)
        s.connect(source.n, ground.p)
        s.connect(source.p, rs.p[0])
        s.connect(rs.n[:-1], rs.p[1:])
        s.connect(rs.n, caps.p)
        s.connect(caps.n[2:-2], ground.p)
        s.connect(caps.n[:2], other.p)
        s.connect(caps.n[-2:], other.p)
        return s

    kw = {"t_end": 1.0, "dt": 0.01, "rtol": 1e-9, "atol": 1e-11}
    a = simulate(ac.compile(split_grounds(N)), **kw)
    b = simulate(compile_full(split_grounds(N)), **kw)
    for q in (f"C{N}.v", "G.p.i", "H.p.i", "C3.i"):
        assert np.max(np.abs(a[q] - b[q])) <= 1e-12 * max(1.0, np.abs(b[q]).max()), q


def test_a_misused_stencil_model_or_compile_is_a_named_error():
    st = ac.compile(chain(N))
    with pytest.raises(ac.UnknownNameError, match="S3.c"):
        st.parameter_symbol("S3.cc")
    with pytest.raises(ac.UnknownNameError, match="unknown variable"):
        simulate(st, t_end=0.1, dt=0.05)["M3.ss"]
    for compiler in (ac.compile, compile_full):
        with pytest.raises(ac.OptionError, match="takes an ac.System"):
            compiler(chain)
