"""Natural coordinates and the dynamics-aware autoencoder (``ln.reduce_mechanism``) on the
two-bar actuator: energies against the planar bodies' own, the loss gradient against finite
differences, the reduced component's energy balance and mass matrix, a small training run
against the full DAE (the example's size in the slow tier), the range flag, clear errors."""

import numpy as np
import pytest

import learning as ln
from acausal.errors import OptionError
from examples import two_bar_actuator as tb
from learning.mechanics.reduction import _residual, _samples
from learning.training import SampleLoss
from solvers import simulate

pytestmark = pytest.mark.filterwarnings("ignore:.*unconnected connectors:UserWarning")


@pytest.fixture(scope="module")
def sim1():
    return tb.simulate_case("sim1", duration=4.0)


def test_natural_coordinates_carry_the_bodies_energies(sim1):
    """``1/2 x'^T M_n x'`` is the bars' kinetic energy and ``-f_g . x`` their potential
    energy (up to a constant), from the bodies' own variables; the elbow's two copies
    coincide and the bases stay on their rails."""
    nc = tb.natural(sim1)
    r = nc.records[0]
    kinetic = 0.5 * np.einsum("ki,ij,kj->k", r["v"], nc.mass, r["v"])
    truth = sum(sim1[f"{b}.E_kin"] for b in tb.BODIES)
    assert np.max(np.abs(kinetic - truth)) < 1e-10 * np.max(truth)
    potential = -r["x"] @ nc.gravity
    assert np.ptp(potential - sum(sim1[f"{b}.E_pot"] for b in tb.BODIES)) < 1e-9
    assert np.max(np.abs(r["x"][:, 2:4] - r["x"][:, 6:8])) < 1e-8  # the elbow
    assert np.max(np.abs(r["x"][:, [0, 4]] - [0.0, tb.RAIL])) < 1e-12  # the rails
    assert np.allclose(r["xm"], np.column_stack([sim1[m] for m in tb.MINIMAL]))
    assert nc.mobility == 2 and np.all(np.linalg.eigvalsh(nc.mass) > -1e-12)


@pytest.mark.parametrize("given", [True, False])
def test_the_loss_gradient_agrees_with_finite_differences(sim1, given):
    """Given minimal coordinates (decoder, one-step loss) and learned ones (encoder and
    decoder, the loss on velocities and accelerations); on two threads as on one."""
    nc = tb.natural(sim1) if given else ln.natural_coordinates(sim1, tb.BODIES)
    red = ln.reduce_mechanism(nc, hidden=(6,), epochs=0, progress=False)
    X, A, V = (np.vstack([r[k] for r in nc.records]) for k in ("x", "a", "v"))
    varying = X.std(axis=0) > 1e-9
    scales = tuple(Z.std(axis=0)[varying] for Z in (X, A, V))
    residual = _residual(nc, red.decoder, red.encoder, varying, scales, {"rec": 1.0, "sim": 1.0})
    columns, _ = _samples(nc, 0.05)
    theta = red.decoder_theta if given else np.concatenate([red.decoder_theta, red.encoder_theta])
    loss = SampleLoss(residual, theta.size, threads=2)
    index = np.arange(0, columns.shape[1], 37)
    value, grad = loss(columns, index, theta)
    # the samples split over two threads give the one-thread loss and gradient
    one = SampleLoss(residual, theta.size, threads=1)(columns, index, theta)
    assert value == pytest.approx(one[0], rel=1e-13)
    assert np.allclose(grad, one[1], rtol=1e-12, atol=1e-14 * np.max(np.abs(one[1])))
    for j in np.random.default_rng(0).choice(theta.size, 10, replace=False):
        h = 1e-5  # the one-step loss divides by dt^2: at 1e-6 rounding is 1e-5 of the step
        up, down = theta.copy(), theta.copy()
        up[j] += h
        down[j] -= h
        fd = (loss(columns, index, up)[0] - loss(columns, index, down)[0]) / (2 * h)
        assert grad[j] == pytest.approx(fd, rel=1e-5, abs=1e-8 * value)


@pytest.fixture(scope="module")
def small(sim1):
    """A small decoder, ``(8, 8)``, trained 10 epochs on 4 s of sim1 in batches of 32."""
    return ln.reduce_mechanism(
        tb.natural(sim1), hidden=(8, 8), epochs=10, batch=32, lr=1e-2, decay=0.98, progress=False
    )


def test_the_reduced_model_conserves_energy_and_its_mass_is_positive_definite(small):
    """Without springs, dampers and forces (load points unconnected), the reduced
    Lagrangian's energy stays at its start to the integrator's tolerance; ``M_m = J^T M_n
    J`` is symmetric positive definite along the trajectory. Both hold for any decoder's
    weights, so a small one shows them."""
    zero = dict.fromkeys(small.names, 0.0)
    comp = small.component("red", q0=zero, v0=dict.fromkeys(small.names, 0.3))
    import acausal as ac

    s = ac.System("free")
    s.add(comp)
    res = simulate(s, t_end=1.0, dt=0.001, rtol=1e-10, atol=1e-12)
    assert np.ptp(res["red.T"]) > 0.5  # it moves and trades energy
    assert np.max(np.abs(res["red.E"] - res["red.E"][0])) < 1e-6
    q = np.column_stack([res[f"red.q_{n}"] for n in small.names])
    M = small.mass(q)
    assert np.allclose(M, M.transpose(0, 2, 1), atol=1e-12)
    assert np.min(np.linalg.eigvalsh(M)) > 0


def tracks_sim2_and_flags_sim1_twice(reduction):
    """The reduced model's error on 4 s of sim2 (never seen: no range flag), and that on
    sim1 x 2 the range flag is raised."""
    system, comp = tb.reduced(reduction, "sim2")
    full = tb.simulate_case("sim2", duration=4.0)
    res = simulate(system, t_end=4.0, dt=tb.DT, rtol=1e-8, atol=1e-10)
    assert comp.outside_range(res) is None
    system, comp = tb.reduced(reduction, "sim1", scale=2.0)
    flag = comp.outside_range(simulate(system, t_end=4.0, dt=tb.DT, rtol=1e-8, atol=1e-10))
    assert flag is not None and "leave the training range" in flag
    return tb.centres_error(full, res)


def test_a_small_training_tracks_unseen_forces_and_flags_leaving_its_range(small):
    """The small decoder on 4 s of sim2: the centres of mass within 10 % of their range of
    motion (measured 4.8 %; 3.8 % and 6.7 % with seeds 1 and 2)."""
    assert tracks_sim2_and_flags_sim1_twice(small) < 0.10


@pytest.mark.slow
def test_the_examples_decoder_trained_briefly_tracks_unseen_forces(sim1):
    """The example's decoder ``(32, 32)`` trained 60 epochs on 4 s of sim1: on 4 s of sim2
    the centres of mass within 5 % of their range of motion (measured 3.5 %)."""
    trained = ln.reduce_mechanism(
        tb.natural(sim1), hidden=(32, 32), epochs=60, lr=3e-3, decay=0.98, progress=False
    )
    assert tracks_sim2_and_flags_sim1_twice(trained) < 0.05


def test_bad_input_gets_clear_errors(sim1):
    nc = tb.natural(sim1)
    with pytest.raises(OptionError, match="is not a planar Body"):
        ln.natural_coordinates(sim1, ["spring1"])
    with pytest.raises(OptionError, match="no variable 'slide9.f'"):
        ln.natural_coordinates(sim1, ["bar1"], loads={"b": ln.PointLoad("bar1", force="slide9.f")})
    with pytest.raises(OptionError, match="forces on \\['slide2.s'\\], which are not minimal"):
        ln.natural_coordinates(sim1, tb.BODIES, minimal=["slide1.s"], forces={"slide2.s": "x"})
    with pytest.raises(OptionError, match="losses="):
        ln.reduce_mechanism(nc, losses={"energy": 1.0})
    with pytest.raises(OptionError, match="threads=2.0 must be an int >= 1"):
        ln.reduce_mechanism(nc, threads=2.0)
    with pytest.raises(OptionError, match="differentiates the decoder twice"):
        ln.reduce_mechanism(nc, activation="relu")
    red = ln.reduce_mechanism(nc, hidden=(4,), epochs=0, progress=False)
    with pytest.raises(OptionError, match="ports \\['s9'\\] name no minimal coordinate"):
        red.component("red", ports={"s9": None})
    with pytest.raises(OptionError, match="were given, not learned"):
        red.encode(nc.records[0]["x"])
