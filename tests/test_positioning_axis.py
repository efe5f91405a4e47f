"""The closed-loop positioning axis in small: 4 s of the carriage under its P/PI controller
(stick/slip Coulomb friction, viscous friction, a force offset), the encoder quantized to
1 um; mass, viscous, Coulomb and offset by equation error and by output error, with the
logged actuator force (option a) and with the controller in the model (option b), and the
validation on a second reference. The full experiment is
``examples/identify_positioning_axis.py``."""

import numpy as np
import pytest

import learning as ln
from examples import positioning_axis as pa

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
DURATION = 4.0  # s: three moves of the training reference


@pytest.fixture(scope="module")
def ref() -> pa.Reference:
    return pa.reference(0, DURATION)


@pytest.fixture(scope="module")
def data() -> dict[str, np.ndarray]:
    return pa.measure(seed=0, duration=DURATION)


@pytest.fixture(scope="module")
def record(data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    rec, r = pa.reconstructed(data)
    assert r.window == 15  # cutoff 71 Hz
    return rec


@pytest.fixture(scope="module")
def equation_error_a(record) -> ln.FitResult:
    return pa.fit_equation_error(record)


@pytest.fixture(scope="module")
def output_error_a(data, record, ref, equation_error_a) -> ln.FitResult:
    exps, starts = pa.open_loop_experiments(data, record, ref, equation_error_a.params)
    assert len(exps) == 3
    return pa.fit_output_error(exps, starts, equation_error_a.params)[0]


@pytest.fixture(scope="module")
def equation_error_b(data, record, ref) -> ln.FitResult:
    return pa.fit_equation_error(record, ref, data)


@pytest.fixture(scope="module")
def output_error_b(data, ref, equation_error_b) -> ln.FitResult:
    experiment = pa.closed_loop_experiment(data, ref, equation_error_b.params)
    return pa.fit_output_error([experiment], 0.0, equation_error_b.params)[0]


def errors(params: dict[str, float]) -> dict[str, float]:
    """Relative errors of mass, viscous and Coulomb, and the offset's error in N."""
    out = {k: params[k] / v - 1 for k, v in pa.TRUTH.items()}
    out["offset.f_constant"] = params["offset.f_constant"] - pa.OFFSET
    return out


def test_the_reference_is_a_smooth_rest_to_rest_motion(ref):
    t = np.linspace(0.0, DURATION, 400_001)
    s, v = ref.position(t), ref.velocity(t)
    assert np.max(np.abs(np.gradient(s, t) - v)) < 1e-6  # velocity is the position's slope
    assert np.max(np.abs(np.diff(s))) < 1e-5  # no jumps at the segments' boundaries
    ends = ref.starts[1:]
    assert np.max(np.abs(ref.velocity(ends))) < 1e-12  # each move ends (and starts) at rest


def test_the_record_is_encoder_counts_and_the_logged_force_is_the_controllers(data):
    counts = data["carriage.s"] / pa.STEP
    assert np.max(np.abs(counts - np.round(counts))) < 1e-6
    assert np.max(np.abs(data["carriage.s"] - data["true carriage.s"])) <= pa.STEP / 2 + 1e-12
    # the controller's law recomputed from the truth's states: the integrator rebuilt from
    # the unquantized position (trapezoid rule), the force kv e + ki x_i (measured within
    # 2.1e-3 N of the logged one, which reaches 43 N)
    exact = {**data, "carriage.s": data["true carriage.s"]}
    x_i = pa.integrator_state(exact)
    e = data["v_ref"] + pa.GAINS["kp"] * (data["s_ref"] - exact["carriage.s"])
    force = pa.GAINS["kv"] * (e - data["true carriage.v"]) + pa.GAINS["ki"] * x_i
    assert np.max(np.abs(force - data["force"])) < 5e-3
    stuck = np.mean(np.abs(data["true carriage.v"]) < 1e-9)
    assert 0.03 < stuck < 0.15  # the carriage sticks in the dwells (measured 7.7 %)


def test_the_reconstruction_is_close_to_the_truth(data, record):
    # measured 1.87 % and 0.036 %
    assert ln.relative_mae(record["der(carriage.v)"], data["true carriage.a"]) < 0.025
    assert ln.relative_mae(record["carriage.v"], data["true carriage.v"]) < 0.001


def test_equation_error_with_the_logged_force_finds_the_truth(record, equation_error_a):
    # started at 1.3, 0.7, 0.6 x the truth, offset 0; measured +0.000 %, -0.009 %,
    # +0.010 %, -0.00004 N
    err = errors(equation_error_a.params)
    for k in ("carriage.m", "viscous.d", "coulomb.f_coulomb"):
        assert abs(err[k]) < 1e-3
    assert abs(err["offset.f_constant"]) < 5e-3
    # the stuck samples (the guide's force there is what holds the carriage, not the
    # Coulomb level) spoil it when the speed threshold is dropped: mass measured +3.7 %
    assert errors(pa.fit_equation_error(record, v_min=0.0).params)["carriage.m"] > 0.02


def test_output_error_move_by_move_with_the_logged_force(output_error_a):
    # option a: measured -0.006 %, +0.003 %, -0.002 %, -0.00001 N
    err = errors(output_error_a.params)
    for k in ("carriage.m", "viscous.d", "coulomb.f_coulomb"):
        assert abs(err[k]) < 3e-4
    assert abs(err["offset.f_constant"]) < 1e-3


def test_the_controller_in_the_model_by_equation_then_output_error(
    equation_error_b, output_error_b
):
    # option b: equation error with the integrator rebuilt from the encoder is biased
    # (Coulomb measured -2.2 %, offset +0.025 N), output error on the closed loop from there
    # is not (measured -0.003 %, +0.006 %, -0.020 %, -0.0077 N)
    first, final = errors(equation_error_b.params), errors(output_error_b.params)
    assert abs(first["coulomb.f_coulomb"]) > 0.01
    for k in ("carriage.m", "viscous.d", "coulomb.f_coulomb"):
        assert abs(final[k]) < 1e-3
    assert abs(final["offset.f_constant"]) < 0.02


def test_validation_on_a_second_reference(output_error_a, output_error_b):
    check_ref = pa.reference(1, DURATION)
    check = pa.measure(seed=1, duration=DURATION)

    def rms(values, friction=pa.stick_slip_friction):
        s = pa.closed_loop_positions(values, check, check_ref, friction)
        return float(np.sqrt(np.mean((s - check["carriage.s"]) ** 2)))

    truth = rms(pa.TRUTH)
    # the true model misses the encoder by its rounding, 1 um / sqrt(12) (measured 0.271 um)
    assert truth == pytest.approx(pa.STEP / np.sqrt(12), rel=0.1)
    for fit in (output_error_a, output_error_b):
        assert rms(fit.params) < 1.2 * truth  # measured 1.000x and 1.001x
    # a smooth (tanh) Coulomb law with the truth's values does not (measured 23x)
    assert rms(pa.TRUTH, pa.smooth_friction) > 10 * truth
