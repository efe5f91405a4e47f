"""Every mistake a named error (issue 32): each class of bad option gets an OptionError whose
message names the function, the argument and the value it was given, and says what to give
instead; no bare KeyError, TypeError or CasADi dimension error from inside."""

import re
import sys

import numpy as np
import pytest

import acausal as ac
import learning as ln
from acausal.errors import OptionError
from components import electrical as el
from solvers import sample_design, simulate, simulate_many, tolerance_ranges


def rc(R: float = 2.0) -> ac.System:
    s = ac.System("rc")
    V, R = el.ConstantVoltage("V", V=1.0), el.Resistor("R", R=R)
    C, G = el.Capacitor("C", C=1.0, v0=0.0), el.Ground("G")
    s.connect(V.p, R.p)
    s.connect(R.n, C.p)
    s.connect(C.n, V.n, G.p)
    return s


def natural_stub() -> ln.NaturalCoordinates:
    """Natural coordinates of nothing: enough to reach reduce_mechanism's option checks."""
    return ln.NaturalCoordinates((), np.zeros((0, 0)), np.zeros(0), {}, {}, (), None, 1)


# The option checks come before anything is compiled or read: the other arguments need not
# be valid for the named error to be the one raised.
LEARNERS = {
    "train": lambda **kw: ln.train(None, [], **kw),
    "train_lagrangian": lambda **kw: ln.train_lagrangian(None, {}, **kw),
    "reduce_mechanism": lambda **kw: ln.reduce_mechanism(natural_stub(), **kw),
}
BAD_ADAM = [
    ("batch", 0),
    ("batch", -4),
    ("batch", 8.5),
    ("epochs", -1),
    ("lr", -1e-3),
    ("lr", 0.0),
    ("lr", float("nan")),
    ("decay", 0.0),
    ("decay", 1.5),
    ("patience", 0),
]


@pytest.mark.parametrize("learner", list(LEARNERS))
@pytest.mark.parametrize(("option", "value"), BAD_ADAM)
def test_a_bad_adam_option_is_named_with_its_value(learner, option, value):
    with pytest.raises(OptionError, match=rf"^{learner}: {option}={re.escape(repr(value))} must"):
        LEARNERS[learner](**{option: value})


@pytest.mark.parametrize(("option", "value"), [("horizon", 0), ("stride", -1), ("horizon", 2.0)])
def test_train_names_a_bad_horizon_or_stride(option, value):
    with pytest.raises(OptionError, match=rf"^train: {option}={value!r} must be an integer >= 1"):
        ln.train(None, [], **{option: value})


LAYERED = {
    "MLP": lambda h: ln.MLP(hidden=h),
    "NeuralNet": lambda h: ln.NeuralNet(hidden=h),
    "LagrangianNet": lambda h: ln.LagrangianNet(2, hidden=h),
    "reduce_mechanism": lambda h: ln.reduce_mechanism(natural_stub(), hidden=h),
}


@pytest.mark.parametrize("where", list(LAYERED))
@pytest.mark.parametrize(
    ("hidden", "says"),
    [
        ((0,), r"hidden=\(0,\): 0 is not a layer width"),
        ((8.7,), r"hidden=\(8\.7,\): 8\.7 is not a layer width"),  # no longer truncated to 8
        ((4, -2), r"hidden=\(4, -2\): -2 is not a layer width"),
        (8, r"hidden=8 is one number; .* hidden=\(8,\)"),
        ("8", r"hidden='8' must be a tuple of layer widths"),
    ],
)
def test_a_bad_layer_spec_is_named(where, hidden, says):
    with pytest.raises(OptionError, match=rf"^{where}: {says}"):
        LAYERED[where](hidden)


def test_good_layer_specs_are_kept_as_integers():
    assert ln.MLP(hidden=[3, 2]).hidden == (3, 2)
    assert ln.LagrangianNet(1, hidden=()).hidden == ()  # no hidden layer: allowed
    with pytest.raises(OptionError, match=r"^NeuralNet: hidden=\(\): no layer is a layer width"):
        ln.NeuralNet(hidden=())  # its feasibility pattern needs a hidden layer


def test_a_lagrangian_function_reading_a_missing_parameter_names_it():
    with pytest.raises(
        OptionError,
        match=r"^Lagrangian L: mass\(q, p\) reads the parameter 'm', which the component was "
        r"not given \(its parameters: 'k'\); add it to parameters=",
    ):
        ln.Lagrangian(
            "L",
            {"x": ac.Flange},
            mass=lambda q, p: [[p["m"]]],
            potential=lambda q, p: 0.5 * p["k"] * q["x"] ** 2,
            parameters={"k": 1.0},
        )
    with pytest.raises(OptionError, match=r"potential\(q, p\) reads the coordinate 'y'.*'x'"):
        ln.Lagrangian(
            "L",
            {"x": ac.Flange},
            mass=lambda q, p: [[1.0]],
            potential=lambda q, p: q["y"],
        )


def test_natural_coordinates_refuse_what_is_not_a_result_or_a_body_list():
    res = simulate(rc(), t_end=0.2, dt=0.1)
    with pytest.raises(
        OptionError,
        match=r"^reduce_mechanism: data must be ln\.Natural.*"
        r"got Result; .*ln\.natural_coordinates\(results, bodies=",
    ):
        ln.reduce_mechanism(res)
    with pytest.raises(
        OptionError, match=r"results must be one or more solvers\.Result.*got Model"
    ):
        ln.natural_coordinates(ac.compile(rc()), ["bar1"])
    with pytest.raises(OptionError, match=r"bodies='bar1' must be a list of the planar Body"):
        ln.natural_coordinates(res, "bar1")


@pytest.mark.parametrize(
    "params",
    [[{"R.R": 1.0}, {"R.R": "two"}], {"R.R": [1.0, "two"]}],
    ids=["list of dicts", "dict of arrays"],
)
def test_a_word_in_a_design_names_the_parameter_and_the_member(params):
    with pytest.raises(OptionError, match=r"^simulate_many: member 1 of R\.R is 'two', not a num"):
        simulate_many(ac.compile(rc()), params, 0.2, 0.1, outputs=["C.v"], progress=False)
    with pytest.raises(OptionError, match=r"^sample_design: the design of R\.R must be \(low, hi"):
        sample_design({"R.R": ("one", 3.0)}, 4)


@pytest.mark.parametrize("distribution", ["uniform", "normal", "truncnorm"])
def test_a_tolerance_of_one_or_more_is_refused_for_every_distribution(distribution):
    """v (1 -+ tol) reaches zero at tol = 1: members of the opposite sign (R = -0.5 ohm)."""
    model = ac.compile(rc())
    with pytest.raises(
        OptionError, match=r"^tolerance_ranges: R\.R = 2: the tolerance tol = 1\.5 must be < 1"
    ):
        tolerance_ranges(model, 1.5, ["R.R"], distribution=distribution)
    with pytest.raises(OptionError, match=r"tol = 1 must be < 1 .* \(0, 4\) reaches or crosses"):
        tolerance_ranges(model, 1.0, ["R.R"], distribution=distribution)
    low = sample_design(tolerance_ranges(model, 0.99, ["R.R"], distribution=distribution), 64)
    if distribution != "normal":  # below 1 the range keeps the sign
        assert np.all(low["R.R"] > 0)


def test_a_closed_dask_client_is_named():
    distributed = pytest.importorskip("distributed")
    client = distributed.Client(processes=False, n_workers=0, dashboard_address=":0")
    client.close()
    with pytest.raises(OptionError, match=r"^executor=<Client.* is a Dask client that is closed"):
        simulate_many(ac.compile(rc()), {"R.R": [1.0]}, 0.2, 0.1, outputs=["C.v"], executor=client)


def test_every_progress_option_takes_the_same_values():
    model = ac.compile(rc())
    for call in (
        lambda p: simulate_many(model, {"R.R": [1.0]}, 0.2, 0.1, outputs=["C.v"], progress=p),
        lambda p: ln.multi_start(ln.fit, rc(), {}, n_starts=1, physical=["R.R"], progress=p),
        lambda p: ln.train(model, [], physical=["R.R"], progress=p),
    ):
        with pytest.raises(OptionError, match=r"progress='bars' must be True, False, None, 'bar'"):
            call("bars")


@pytest.fixture(scope="module")
def rc_data():
    truth = simulate(rc(), t_end=4.0, dt=0.05, rtol=1e-10, atol=1e-12)
    return {"t": truth.t, "C.v": truth["C.v"]}


def test_progress_bar_runs_in_simulate_many_and_multi_start(rc_data, capsys):
    pytest.importorskip("tqdm")
    model = ac.compile(rc())
    design = {"R.R": [1.0, 2.0, 3.0]}
    bar = simulate_many(model, design, 1.0, 0.1, outputs=["C.v"], progress="bar")
    assert "3/3" in capsys.readouterr().err  # the bar reached every member
    quiet = simulate_many(model, design, 1.0, 0.1, outputs=["C.v"], progress=False)
    assert np.array_equal(bar["C.v"], quiet["C.v"]) and capsys.readouterr().err == ""
    many = ln.multi_start(ln.fit, rc(R=1.0), rc_data, n_starts=2, physical=["R.R"], progress="bar")
    assert "2/2" in capsys.readouterr().err and not many.errors
    assert many.best.params["R.R"] == pytest.approx(2.0, rel=1e-5)


def test_an_epoch_report_keeps_the_best_score_so_far_and_the_current_one(rc_data):
    """``best`` is the running minimum of the scores (the start's included: what the kept
    parameters scored), ``score`` the epoch's own (the validation loss here)."""
    seen = []
    model = ac.compile(rc())
    half = {k: v[: len(v) // 2] for k, v in rc_data.items()}
    rest = {"t": rc_data["t"][len(half["t"]) :], "C.v": rc_data["C.v"][len(half["t"]) :]}
    fit = ln.train(
        model,
        [half],
        validation=[rest],
        physical=["R.R"],
        x0={"R.R": 1.0},
        epochs=6,
        batch=8,
        lr=0.3,
        progress=seen.append,
    )
    scores = [info.score for info in seen]
    assert scores == fit.validation_history[1:]
    running = np.minimum.accumulate(fit.validation_history)[1:]
    assert [info.best for info in seen] == running.tolist()
    assert [info.loss for info in seen] == fit.loss_history


@pytest.mark.parametrize(
    ("bounds", "says"),
    [
        ({"R.X": (0.0, 5.0)}, r"bounds name 'R\.X', which is not trained \(R\.R\)"),
        ({"R.R": 5.0}, r"bounds\['R\.R'\]=5\.0 must be a pair \(low, high\)"),
        ({"R.R": (5.0, 0.0)}, r"bounds\['R\.R'\]=\(5\.0, 0\.0\) must be a pair .* low <= high"),
    ],
)
def test_train_names_bad_bounds(rc_data, bounds, says):
    with pytest.raises(OptionError, match=rf"^train: {says}"):
        ln.train(ac.compile(rc()), [rc_data], physical=["R.R"], bounds=bounds, progress=False)


def test_a_bar_without_tqdm_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # as if tqdm were not installed
    model = ac.compile(rc())
    for call in (
        lambda: simulate_many(model, {"R.R": [1.0]}, 0.2, 0.1, outputs=["C.v"], progress="bar"),
        lambda: ln.fit_progress_bar(total=3),
    ):
        with pytest.raises(
            ImportError, match=r'progress bar needs tqdm: pip install -e "\.\[progr'
        ):
            call()


def test_an_input_column_the_data_lack_is_named(rc_data):
    """``inputs={parameter: column}`` with a column the trajectory does not have was a bare
    ``KeyError: 'u'`` from inside the rollout."""
    with pytest.raises(OptionError, match=r"inputs=\{'V\.V': 'vv'\} reads the column 'vv'"):
        ln.train(ac.compile(rc()), [rc_data], physical=["R.R"], inputs={"V.V": "vv"})


@pytest.mark.parametrize("hidden", [0, -2, 2.5, (5,)])
def test_an_additive_networks_width_is_named_by_sum_additive(hidden):
    """``Sum.additive``'s ``hidden`` is one width (each input's network has one layer): a
    bad one was reported by the MLP inside, which the user did not call."""
    with pytest.raises(OptionError, match=rf"^Sum\.additive: hidden={re.escape(repr(hidden))}"):
        ln.Sum.additive(("x", "der(x)"), hidden=hidden)


def _with_nan(values, k):
    out = np.array(values, dtype=float)
    out[k] = np.nan
    return out


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("fit, NaN in t", r"^fit \(rc\): the time 't' is nan at sample 5"),
        ("train, NaN in t", r"^rollout: the time 't' is nan at sample 5"),
        (
            "train, NaN in a state",
            r"^rollout: column 'C\.v' is not finite at sample 7 \(nan, t = 0\.35\)",
        ),
        ("train, a short column", r"^rollout: column 'C\.v' has 79 samples, the time has 81"),
    ],
)
def test_data_given_as_dicts_name_the_column_and_the_sample(rc_data, case, says):
    """The older dict forms get the Experiment's checks: NaN in t passed train silently, and
    a NaN or a short column in a state named neither the column nor the sample."""
    t, v = rc_data["t"], rc_data["C.v"]
    data = {
        "fit, NaN in t": {"t": _with_nan(t, 5), "C.v": v},
        "train, NaN in t": {"t": _with_nan(t, 5), "C.v": v},
        "train, NaN in a state": {"t": t, "C.v": _with_nan(v, 7)},
        "train, a short column": {"t": t, "C.v": v[:-2]},
    }[case]
    with pytest.raises(OptionError, match=says):
        if case.startswith("fit"):
            ln.fit(rc(), data, physical=["R.R"], max_nfev=1, progress=False)
        else:
            ln.train(ac.compile(rc()), [data], physical=["R.R"], epochs=1, progress=False)


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("a misspelt weight", r"^fit: weights name 'C\.vv', which no experiment measures"),
        ("no evaluations", r"^fit: max_nfev=0 must be an integer >= 1"),
        ("a negative spread", r"^multi_start: spread=-1\.0 must be a positive number"),
        ("a state typo", r"^cross_validate: state='C\.vv' is not a state of rc"),
    ],
)
def test_what_passed_silently_or_as_a_foreign_error_is_named(rc_data, case, says):
    """A misspelt weight was ignored, a negative spread drew starts anyway, max_nfev=0 was
    scipy's ValueError and a misspelt state a bare KeyError after the first fold's training."""
    with pytest.raises(OptionError, match=says):
        if case == "a misspelt weight":
            ln.fit(rc(), rc_data, physical=["R.R"], weights={"C.vv": 1.0}, progress=False)
        elif case == "no evaluations":
            ln.fit(rc(), rc_data, physical=["R.R"], max_nfev=0, progress=False)
        elif case == "a negative spread":
            ln.multi_start(ln.fit, rc(), rc_data, n_starts=2, spread=-1.0, physical=["R.R"])
        else:
            ln.cross_validate(rc(), [rc_data] * 3, "C.vv", physical=["R.R"], epochs=1)


@pytest.mark.parametrize("learner", ["fit", "train", "fit_equations", "identifiability"])
def test_params_means_values_and_an_old_call_is_shown_the_new_one(rc_data, learner):
    """``params=`` named the parameters to fit in the learners and values in ``simulate`` and
    ``ln.Experiment``; it means values everywhere now, the learners take ``fitted=``."""
    call = {
        "fit": lambda **kw: ln.fit(rc(), rc_data, progress=False, **kw),
        "train": lambda **kw: ln.train(ac.compile(rc()), [rc_data], progress=False, **kw),
        "fit_equations": lambda **kw: ln.fit_equations(ac.compile(rc()), [rc_data], **kw),
        "identifiability": lambda **kw: ln.identifiability(rc(), rc_data, **kw),
    }[learner]
    with pytest.raises(OptionError, match=rf"^{learner}: params= means parameter values .* "
                       r"fitted=\['R\.R'\]"):  # fmt: skip
        call(params=["R.R"])
