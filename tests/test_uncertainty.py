"""Standard errors from the residual Jacobian (learning.uncertainty): the Schur complement
against the block of the full inverse, and the reported spread against the spread of
estimates over repeated noisy experiments."""

import numpy as np
import pytest

import acausal as ac
from examples.references.oscillator import C_TRUE, D_TRUE, INPUTS, oscillator
from learning.optimization.uncertainty import from_jacobian
from learning.training import train
from tests.shared import trajectories


def test_profiling_out_nuisance_columns_is_the_block_of_the_full_inverse():
    rng = np.random.default_rng(0)
    J = rng.standard_normal((200, 6)) @ np.diag([1, 10, 0.1, 3, 1, 5])
    r = rng.standard_normal(200)
    full = from_jacobian([f"p{j}" for j in range(6)], np.ones(6), r, J)
    part = from_jacobian(["p1", "p4"], [1.0, 1.0], r, J, nuisance=[0, 2, 3, 5])
    cov = np.sum(r**2) / (200 - 6) * np.linalg.inv(J.T @ J)
    assert np.allclose(full.std, np.sqrt(np.diag(cov)), rtol=1e-12)
    assert np.allclose(part.std, np.sqrt(np.diag(cov)[[1, 4]]), rtol=1e-10)
    c14 = cov[1, 4] / np.sqrt(cov[1, 1] * cov[4, 4])
    assert part.correlation[0, 1] == pytest.approx(c14, rel=1e-10)
    # a rank-deficient nuisance block (a repeated column) changes nothing
    twice = from_jacobian(["p1", "p4"], [1, 1], r, np.hstack([J, J[:, [0]]]), [0, 2, 3, 5, 6])
    assert np.allclose(twice.std * np.sqrt(193 / 194), part.std, rtol=1e-10)  # one dof less
    # scaled columns: standard errors come back in the parameters' own units
    scaled = from_jacobian(["p1", "p4"], [1, 1], r, J * 2.0, [0, 2, 3, 5], scales=np.full(6, 2.0))
    assert np.allclose(scaled.std, part.std, rtol=1e-12)
    with pytest.raises(ac.OptionError, match="no parameter 'p9'"):
        part["p9"]


def test_the_reported_spread_matches_the_spread_over_repeated_experiments():
    """40 copies of the same two trajectories with fresh noise on the measured speed: the
    feedforward fit's standard errors against the standard deviation of its estimates."""
    clean = trajectories(freqs=(3.0, 5.0), t_end=1.0)
    model = ac.compile(oscillator())
    rng = np.random.default_rng(1)
    estimates, reported = [], []
    for _ in range(40):
        noisy = [{**d, "m.v": d["m.v"] + 2e-3 * rng.standard_normal(d["t"].size)} for d in clean]
        fit = train(
            model,
            noisy,
            physical=["k.c", "d.d"],
            inputs=INPUTS,
            epochs=0,
            batch=1000,
            polish="least_squares",
            uncertainty=True,
            progress=False,
        )
        estimates.append([fit.params["k.c"], fit.params["d.d"]])
        reported.append(fit.uncertainty.std)
    spread, said = np.std(estimates, axis=0, ddof=1), np.mean(reported, axis=0)
    # 40 draws: the sample standard deviation is within ~25 % of the truth (2 sigma);
    # measured 0.97 and 0.94; noise="process" (independent residuals) says 21 x and 16 x
    assert np.all(np.abs(said / spread - 1) < 0.3), (said, spread)
    # the spring is unbiased; the damper is not: its regressor is the noisy measured speed
    # (errors in variables, the one-step fit's known weakness: +9.2 %, 3.6 sigma, measured)
    assert abs(np.mean(estimates, axis=0)[0] - C_TRUE) < 3 * said[0]
    assert 0 < np.mean(estimates, axis=0)[1] - D_TRUE < 6 * said[1]
    with pytest.raises(ac.OptionError, match="uncertainty=True needs horizon=1"):
        train(model, clean, physical=["k.c"], inputs=INPUTS, horizon=5, uncertainty=True)
