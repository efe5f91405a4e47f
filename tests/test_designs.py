"""Normal and truncated-normal tolerance designs (issue 31): ``sample_design`` draws each
parameter from its distribution by the inverse distribution function of the method's
uniform points, so the samples follow the distribution and a Latin hypercube stratifies
each parameter's probability.

The bounds are those of the sampling distributions, at 5 standard errors, for n = 4000
members with fixed seeds: the sample mean's standard error ``sd / sqrt(n)``, the sample
standard deviation's ``sd sqrt((kurtosis + 2) / (4 n))`` (the delta method on the sample
variance, whose variance is ``(mu_4 - sd^4) / n``; ``kurtosis`` the excess, 0 for a normal).
The truncated normal's moments are scipy.stats.truncnorm's, built here on its own.
"""

import numpy as np
import pytest
from scipy import stats

import acausal as ac
from acausal.errors import OptionError
from components import electrical as el
from solvers import Normal, TruncatedNormal, Uniform, sample_design, tolerance_ranges

N = 4000


def within_sampling_error(x: np.ndarray, dist: stats.rv_continuous) -> None:
    """The sample mean and standard deviation of ``x`` within 5 standard errors of the
    distribution's."""
    mean, sd = float(dist.mean()), float(dist.std())
    kurtosis = float(dist.stats(moments="k"))
    assert abs(x.mean() - mean) < 5 * sd / np.sqrt(x.size)
    assert abs(x.std(ddof=1) - sd) < 5 * sd * np.sqrt((kurtosis + 2) / (4 * x.size))


@pytest.mark.parametrize("method", ["random", "lhs"])
def test_normal_samples_have_the_requested_mean_and_sd(method):
    design = sample_design(
        {"R1.R": Normal(2.0, 0.03), "C1.C": Normal(-1.0, 0.5)}, N, method, seed=4
    )
    within_sampling_error(design["R1.R"], stats.norm(2.0, 0.03))
    within_sampling_error(design["C1.C"], stats.norm(-1.0, 0.5))
    # the two parameters are drawn independently: correlation within 5 / sqrt(n)
    assert abs(np.corrcoef(design["R1.R"], design["C1.C"])[0, 1]) < 5 / np.sqrt(N)


def test_a_latin_hypercube_puts_one_member_in_each_nth_of_the_probability():
    x = sample_design({"a": Normal(10.0, 2.0)}, N, "lhs", seed=3)["a"]
    strata = np.floor(stats.norm(10.0, 2.0).cdf(x) * N).astype(int)
    assert sorted(strata) == list(range(N))
    t = sample_design({"b": TruncatedNormal(0.0, 1.0, -1.0, 2.0)}, N, "lhs", seed=3)["b"]
    strata = np.floor(stats.truncnorm(-1.0, 2.0).cdf(t) * N).astype(int)
    assert sorted(strata) == list(range(N))


@pytest.mark.parametrize("method", ["random", "lhs", "halton"])
def test_a_5_percent_resistor_as_3_sigma_stays_within_5_percent(method):
    spec = TruncatedNormal.tolerance(100.0, 0.05)
    assert spec == TruncatedNormal(100.0, 5.0 / 3.0, 95.0, 105.0)
    x = sample_design({"R1.R": spec}, N, method, seed=11)["R1.R"]
    assert x.min() >= 95.0 and x.max() <= 105.0
    reference = stats.truncnorm(-3.0, 3.0, loc=100.0, scale=5.0 / 3.0)
    within_sampling_error(x, reference)
    assert spec.dist.std() == pytest.approx(reference.std(), rel=1e-12)


def test_a_one_sided_truncation_keeps_a_value_positive():
    spec = TruncatedNormal(0.5, 1.0, 0.0, np.inf)
    x = sample_design({"k": spec}, N, "random", seed=2)["k"]
    assert x.min() >= 0.0
    within_sampling_error(x, stats.truncnorm(-0.5, np.inf, loc=0.5, scale=1.0))


def test_random_members_are_the_inverse_cdf_of_the_seeded_uniforms():
    """Plain Monte Carlo: column j of the Generator's uniforms through F_j^-1, whether the
    seed is a number or a Generator."""
    ranges = {"a": (1.0, 3.0), "b": Normal(5.0, 0.1), "c": Uniform(-1.0, 1.0)}
    design = sample_design(ranges, 50, "random", seed=np.random.default_rng(8))
    u = np.random.default_rng(8).random((50, 3))
    np.testing.assert_allclose(design["a"], 1.0 + 2.0 * u[:, 0], rtol=1e-15)
    np.testing.assert_allclose(design["b"], stats.norm(5.0, 0.1).ppf(u[:, 1]), rtol=1e-15)
    np.testing.assert_allclose(design["c"], -1.0 + 2.0 * u[:, 2], rtol=1e-15)
    again = sample_design(ranges, 50, "random", seed=8)
    for name in ranges:
        np.testing.assert_array_equal(design[name], again[name])


def rc() -> ac.System:
    s = ac.System("rc")
    r, c = el.Resistor("R", R=2.0), el.Capacitor("C", C=0.5, v0=0.0)
    v, g = el.ConstantVoltage("V"), el.Ground("G")
    s.connect(v.p, r.p)
    s.connect(r.n, c.p)
    s.connect(c.n, v.n, g.p)
    return s


def test_tolerances_as_normal_and_truncated_normal_distributions():
    model = ac.compile(rc())
    assert tolerance_ranges(model, 0.05, ["R.R"]) == {"R.R": pytest.approx((1.9, 2.1))}
    (normal,) = tolerance_ranges(model, 0.05, ["R.R"], distribution="normal").values()
    assert normal.mean == 2.0 and normal.sd == pytest.approx(2.0 * 0.05 / 3, rel=1e-15)
    design = tolerance_ranges(model, {"R.R": 0.05, "C.C": 0.1}, distribution="truncnorm", sigmas=2)
    assert design["R.R"] == TruncatedNormal.tolerance(2.0, 0.05, sigmas=2)
    c = design["C.C"]
    assert (c.mean, c.low, c.high) == (0.5, pytest.approx(0.45), pytest.approx(0.55))
    assert c.sd == pytest.approx(0.5 * 0.1 / 2, rel=1e-15)


def test_bad_distributions_name_the_parameter():
    with pytest.raises(OptionError, match=r"sd = -0.1 must be > 0"):
        Normal(1.0, -0.1)
    with pytest.raises(OptionError, match=r"sd = 0 must be > 0"):
        TruncatedNormal(1.0, 0.0, 0.0, 2.0)
    with pytest.raises(OptionError, match=r"low = 2 and high = 1 must satisfy low < high"):
        TruncatedNormal(1.0, 0.1, 2.0, 1.0)
    with pytest.raises(OptionError, match=r"low = 1 and high = 1 must satisfy low < high"):
        TruncatedNormal(1.0, 0.1, 1.0, 1.0)
    with pytest.raises(OptionError, match=r"mean = nan must be finite"):
        Normal(float("nan"), 1.0)
    with pytest.raises(OptionError, match=r"Normal: sd must be a number, got '1'"):
        Normal(0.0, "1")
    with pytest.raises(OptionError, match=r"low = 3 must be <= high = 1"):
        Uniform(3.0, 1.0)
    with pytest.raises(OptionError, match=r"the design of R1.R must be \(low, high\), Uniform"):
        sample_design({"R1.R": "5 %"}, 4)
    model = ac.compile(rc())
    with pytest.raises(OptionError, match=r"R.R = 2: the tolerance tol = 0.0 must be > 0"):
        tolerance_ranges(model, 0.0, ["R.R"], distribution="truncnorm")
    with pytest.raises(OptionError, match=r"distribution='lognormal' is not one of"):
        tolerance_ranges(model, 0.05, ["R.R"], distribution="lognormal")
