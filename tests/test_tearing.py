"""Tearing of linear loops (``acausal.structure.tearing``): the torn solution against a dense
solve of the same block, and the planar slider-crank's 42-equation block torn and its tear
unknowns solved."""

import casadi as cs
import numpy as np
import pytest

import acausal as ac
from acausal.structure.causalize import _solved_tears
from acausal.structure.tearing import inner_solutions, tear
from examples.references.slider_crank_reference import FRICTION, slider_crank
from solvers import simulate


def test_a_torn_block_solves_the_same_system_as_a_dense_solve():
    """A random sparse 12 x 12 system with a unit diagonal (safe to divide by) and
    state-dependent couplings (not): the inner unknowns as functions of the tears, the tears
    from the residual equations (a dense solve of the small system), give the solution of
    ``numpy.linalg.solve`` of the whole block at random states to 1e-12."""
    rng = np.random.default_rng(3)
    n = 12
    y, x = cs.SX.sym("y", n), cs.SX.sym("x", 3)
    res = []
    for i in range(n):
        terms = y[i] + x[i % 3] * y[(i + 1) % n]  # a ring: every choice of order is a loop
        if i % 4 == 0:
            terms += cs.sin(x[0]) * y[(i + 5) % n]
        res.append(terms - (i + 1) * x[(i + 1) % 3])
    res = cs.vertcat(*res)
    jac = cs.jacobian(res, y)
    tearing = tear(jac, lambda a: not cs.depends_on(a, x))
    assert 1 <= len(tearing.tears) <= 4 and len(tearing.residual) == len(tearing.tears)
    inner, values = inner_solutions(res, y, jac, tearing)
    t = cs.vertcat(*[y[j] for j in tearing.tears])
    _, (g, full) = cs.substitute_inplace(inner, values, [res[tearing.residual], y], False)
    torn = cs.Function("torn", [x], [cs.jacobian(g, t), cs.substitute(g, t, 0 * t)])
    chain = cs.Function("chain", [x, t], [full])
    dense = cs.Function("dense", [x], [jac, cs.substitute(res, y, cs.DM.zeros(n))])
    solved = cs.Function("solved", [x], [_solved_tears(res, y, tearing, inner, values)])
    for _ in range(5):
        xv = rng.uniform(0.2, 0.9, 3)
        G, g0 = (np.asarray(v) for v in torn(xv))
        tv = np.linalg.solve(G, -g0.ravel())
        A, r0 = (np.asarray(v) for v in dense(xv))
        exact = np.linalg.solve(A, -r0.ravel())
        got = np.asarray(chain(xv, tv)).ravel()
        assert got == pytest.approx(exact, rel=1e-12, abs=1e-12)
        # the tears solved symbolically (what causalization does with a few of them)
        symbolic = np.asarray(solved(xv)).ravel()
        assert symbolic == pytest.approx(exact[tearing.tears], rel=1e-12, abs=1e-12)


def test_the_slider_cranks_acceleration_block_is_torn_and_solved():
    """The planar slider-crank's 42 accelerations and joint forces form one linear block
    (the piston's frames, at its centre minus a fixed offset, are aliases of it), torn to 5
    tear unknowns that are solved symbolically: IDAS solves only the 4 Newton unknowns of
    the nonlinear position loop (46 before tearing, 9 with the tears in IDAS). Along a
    simulated run, the block's own equations, every unknown taken from the model's
    explicit values, vanish to rounding against the size of their terms (measured up to
    3.5e-14; a solve of the tears off by 1e-10 fails). Its accuracy against the
    hand-derived ODE is ``tests/test_planar.py``'s."""
    model = ac.compile(slider_crank(torque=0.3, friction=FRICTION))
    sizes = {(b.kind, len(b.equations)) for b in model.dae.blocks if len(b.equations) > 1}
    assert ("torn-solved", 42) in sizes and ("newton", 4) in sizes
    assert model.dae.z.numel() == 4
    (block,) = [b for b in model.dae.blocks if b.kind == "torn-solved"]
    ir, dae = model.ir, model.dae
    res = ir.residuals[list(block.equations)]
    unknowns = ir.syms(block.unknowns)
    terms = cs.mtimes(cs.fabs(cs.jacobian(res, unknowns)), cs.fabs(unknowns))
    algebraic = ir.syms(ir.algebraic)
    res, terms = (cs.substitute(e, algebraic, dae.values) for e in (res, terms))
    check = cs.Function("check", [dae.x, dae.z, model.p, model.t], [res, terms])
    run = simulate(model, t_end=1.0, dt=0.05, rtol=1e-8, atol=1e-10)
    assert run.x is not None  # (a run without a switch of states keeps x and z)
    for k in range(0, len(run.t), 4):
        r, scale = (
            np.abs(np.asarray(v)).ravel() for v in check(run.x[:, k], run.z[:, k], run.p, run.t[k])
        )
        assert np.all(r <= 1e-13 * np.maximum(scale, 1.0))
