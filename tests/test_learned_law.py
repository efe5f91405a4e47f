"""``fit.law(name)``: a learned law as a function on numpy arrays, for an explicit network
law and a template-3 pair of laws (a polynomial resistor is in test_experiment.py).

The independent reference is the DAE itself: along a simulation of the fitted model, the
law evaluated on the trajectory's inputs gives the flows (and potentials) the simulator
computed from the same equations, to rounding."""

import numpy as np
import pytest

import acausal as ac
import learning as ln
from components import electrical as el
from components import rotational as rot
from solvers import simulate

TOL = {"rtol": 1e-10, "atol": 1e-12}


def sine_rc(load):
    s = ac.System("rc")
    V, C, G = el.SineVoltage("V", V=1.0, f=0.5), el.Capacitor("C", C=0.5), el.Ground("G")
    s.connect(V.p, load.p)
    s.connect(load.n, C.p)
    s.connect(C.n, V.n, G.p)
    return s


def test_an_explicit_network_law_is_the_current_the_simulation_computed():
    truth = simulate(sine_rc(el.Resistor("Rx", R=2.0)), t_end=2.0, dt=0.05, **TOL)
    net = ln.Unknown("Rx", ac.Pin, law=ln.MLP(hidden=(4,), activation="tanh", inputs=("x",)))
    fit = ln.fit(sine_rc(net), ln.Experiment({"t": truth.t, "C.v": truth["C.v"]}), max_nfev=2,
                 progress=False)  # fmt: skip
    res = fit.simulate(t_end=2.0, dt=0.05, **TOL)
    law = fit.law("Rx")
    assert np.max(np.abs(res["Rx.i"])) > 1e-3  # a current flows
    assert np.allclose(law({"v": res["Rx.v"]}), res["Rx.i"], rtol=1e-12, atol=1e-15)
    with pytest.raises(ac.UnknownNameError, match="Did you mean 'Rx'"):
        fit.law("Rz")


@pytest.mark.filterwarnings("ignore:.*unconnected connectors")
def test_a_template_3_pair_gives_each_side_from_the_other():
    """A learned gear, ``G1(tau_a, tau_b) = 0`` and ``G2(phi_a, phi_b) = 0`` (linear, ratio 3
    at the start): each law returns flange b's torque and angle from flange a's, as the
    simulation of the fitted model has them."""

    def drive(gear, J2=4.0):
        s = ac.System("drive")
        T = rot.ConstantTorque("T", tau_constant=2.0)
        J1, J2 = rot.Inertia("J1", J=0.5, phi0=0.0, w0=0.0), rot.Inertia("J2", J=J2)
        s.connect(T.flange, J1.flange_a)
        s.connect(J1.flange_b, gear.flange_a)
        s.connect(gear.flange_b, J2.flange_a)
        return s

    truth = simulate(drive(rot.IdealGear("gear", ratio=3.0)), t_end=1.0, dt=0.05, **TOL)
    g1 = ln.Polynomial(order=1, constraint="feasible", signs=(1, -1), init={"fb1": -1 / 3})
    g2 = ln.Polynomial(order=1, constraint="feasible", init={"xb1": 3.0})
    gear = ln.Unknown("gear", ac.RotFlange, law=(g1, g2), template=3)
    data = ln.Experiment({"t": truth.t, "J1.phi": truth["J1.phi"]})
    fit = ln.fit(drive(gear, J2=3.0), data, physical=["J2.J"], max_nfev=2, progress=False)
    res = fit.simulate(t_end=1.0, dt=0.05, **TOL)
    law = fit.law("gear")
    tau_b = law({"f_a": res["gear.flange_a.tau"]})
    phi_b = law({"x_a": res["gear.flange_a.phi"]})
    assert np.max(np.abs(res["gear.flange_b.phi"])) > 0.01
    assert np.allclose(tau_b, res["gear.flange_b.tau"], rtol=1e-10, atol=1e-12)
    assert np.allclose(phi_b, res["gear.flange_b.phi"], rtol=1e-10, atol=1e-12)
