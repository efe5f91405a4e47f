"""Every mistake a named error (issue 32): each class of bad option gets an OptionError whose
message names the function, the argument and the value it was given, and says what to give
instead; no bare KeyError, TypeError or CasADi dimension error from inside."""

import re

import numpy as np
import pytest

import acausal as ac
import learning as ln
from acausal.errors import OptionError
from components import electrical as el
from solvers import simulate


def rc() -> ac.System:
    s = ac.System("rc")
    V, R = el.ConstantVoltage("V", V=1.0), el.Resistor("R", R=2.0)
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
