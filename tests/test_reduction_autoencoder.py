"""The full autoencoder (an encoder learns the minimal coordinate) on the slider-crank of
``examples/reduce_slider_crank.py``, small: trained briefly on 3 s of its training force,
the reduced component against the full DAE on the unseen force, with and without the
simulation loss."""

import numpy as np
import pytest

import learning as ln
from examples import reduce_slider_crank as ex

pytestmark = pytest.mark.filterwarnings("ignore:.*unconnected connectors:UserWarning")
DURATION = 3.0


@pytest.fixture(scope="module")
def runs():
    full = {case: ex.full_run(case, DURATION) for case in ("train", "lower")}
    data = ln.natural_coordinates(full["train"], ex.bodies(), loads=ex.LOADS)
    return full, data


def reduced_error(red, full, case):
    start = ln.natural_coordinates(full[case], ex.bodies(case)).records[0]
    res, comp, failed = ex.reduced_run(red, case, start, DURATION)
    assert failed is None
    return ex.centres_error(full[case], res), comp.outside_range(res)


def chart_and_errors(runs, hidden, epochs, batch, lr):
    """For the full losses and the paper's ablation (reconstruction loss only, same seed and
    epochs): the encoder's coordinate is monotone in the crank angle (a chart of the
    one-dimensional configuration manifold) and the reduced model stays in its training
    range on the never-seen force; its centres-of-mass errors there, by loss set."""
    full, data = runs
    assert data.mobility == 1  # from the compiled model's two states
    errors = {}
    for name, losses in (("both", {"rec": 1.0, "sim": 1.0}), ("rec", {"rec": 1.0})):
        red = ln.reduce_mechanism(
            data,
            hidden=hidden,
            losses=losses,
            epochs=epochs,
            batch=batch,
            lr=lr,
            decay=0.95,
            progress=False,
        )
        z = red.encode(data.records[0]["x"])[:, 0]
        steps = np.sign(np.diff(z[np.argsort(full["train"]["sc.crank.phi"])]))
        assert abs(steps.mean()) == 1.0
        errors[name], flag = reduced_error(red, full, "lower")
        assert flag is None
    return errors


def test_a_small_encoder_learns_a_chart_that_simulates_the_unseen_force(runs):
    """``(8, 8)`` networks, 10 epochs on 3 s in batches of 32: on the never-seen force the
    centres of mass within 4 % of their range (measured 2.3 %; 1.3 % with seeds 1 and 2),
    and the ablation misses by more than 3x that (measured 9.4 %, 4.1x; 4.8x and 6.3x)."""
    errors = chart_and_errors(runs, (8, 8), epochs=10, batch=32, lr=1e-2)
    assert errors["both"] < 0.04
    assert errors["rec"] > 3 * errors["both"]


@pytest.mark.slow
def test_the_encoder_learns_a_chart_that_simulates_the_unseen_force(runs):
    """The example's networks ``(32, 32)``, 15 epochs on 3 s: within 2 % of the range
    (measured 0.73 %), and the ablation misses by more than 3x that (measured 3.6 %, 4.9x)."""
    errors = chart_and_errors(runs, (32, 32), epochs=15, batch=64, lr=3e-3)
    assert errors["both"] < 0.02
    assert errors["rec"] > 3 * errors["both"]
