"""Units: declared on quantities, checked at declaration, values given with units converted
once, the unit-consistency check of equations, and units carried to models and results."""

import math

import pint
import pytest

import acausal as ac


class Coil(ac.Component):
    """A user's one-port with parameters in several units (no library component: these
    tests do not depend on the library's annotations)."""

    def __init__(self, name, R=1.0, L=1.0, w=1.0, T=300.0):
        super().__init__(name)
        self.p, self.n = self.connector("p", ac.Pin), self.connector("n", ac.Pin)
        self.R = self.parameter("R", R, "Ohm", min=0)
        self.L = self.parameter("L", L, "H")
        self.w = self.parameter("w", w, "rad/s")
        self.T = self.parameter("T", T, "K")
        self.v = self.variable("v", unit="V")
        self.i = self.variable("i", unit="A")
        self.equations(
            self.v == self.p.v - self.n.v,
            self.p.i + self.n.i == 0,
            self.i == self.p.i,
            self.v == self.R * self.i + self.L * ac.der(self.i),
        )


def value(component, name):
    return component.quantities[name].value


# -- values given with units ------------------------------------------------------------------
def test_quantity_strings_are_converted_once_to_the_declared_unit():
    c = Coil("c", R="2 kOhm", L="5 mH", w="10 rpm", T="20 degC")
    assert value(c, "R") == 2000.0  # k = 10^3, exactly
    assert value(c, "L") == pytest.approx(5e-3, rel=1e-15)
    # one revolution per minute is 2 pi rad / 60 s
    assert value(c, "w") == pytest.approx(10 * 2 * math.pi / 60, rel=1e-15)
    assert value(c, "T") == pytest.approx(293.15, rel=1e-15)  # the Celsius offset
    # numbers are taken as they are, in the declared unit
    assert value(Coil("d", R=2.0), "R") == 2.0


def test_a_pint_quantity_of_the_users_own_registry_is_converted():
    ureg = pint.UnitRegistry()  # not the package's registry
    c = Coil("c", R=ureg.Quantity(3, "kohm"), w=ureg.Quantity(60, "rpm"))
    assert value(c, "R") == 3000.0
    assert value(c, "w") == pytest.approx(2 * math.pi, rel=1e-15)  # one turn per second


@pytest.mark.parametrize(
    "given, words",
    [
        ({"R": "2 kg"}, ["c.R", "kg", "Ohm"]),  # another dimension
        ({"w": "10 Hz"}, ["c.w", "Hz", "rad/s", "rpm"]),  # 1 Hz is not 1 rad/s
        ({"R": "two Ohm"}, ["c.R", "'two Ohm'"]),  # no magnitude
        ({"L": "5 mHH"}, ["c.L", "'mHH'"]),  # a unit that does not exist
    ],
)
def test_a_value_in_a_wrong_unit_is_a_unit_error_naming_the_parameter(given, words):
    with pytest.raises(ac.UnitError) as err:
        Coil("c", **given)
    for word in words:
        assert word in str(err.value)


def test_a_value_with_a_unit_for_a_parameter_without_one_is_refused():
    class Gain(ac.Component):
        def __init__(self, name, k):
            super().__init__(name)
            self.parameter("k", k)

    with pytest.raises(ac.UnitError, match=r"g\.k = '2 V'.*declares no unit"):
        Gain("g", "2 V")
    assert Gain("h", 2.0).quantities["k"].value == 2.0


# -- unit strings checked where they are declared ---------------------------------------------
def test_a_misspelt_unit_fails_at_its_declaration_naming_it():
    class Typo(ac.Component):
        def __init__(self, name, kind):
            super().__init__(name)
            if kind == "parameter":
                self.parameter("R", 1.0, "Ohmm")
            else:
                self.variable("v", unit="Ohmm")

    for kind, where in (("parameter", "t.R"), ("variable", "t.v")):
        with pytest.raises(ac.UnitError) as err:
            Typo("t", kind)
        message = str(err.value)
        assert where in message and "'Ohmm'" in message and "did you mean Ohm" in message


def test_a_connector_types_misspelt_unit_names_the_type_and_variable():
    Wire = ac.ConnectorType("Wire", ("v",), ("i",), units={"v": "Vv", "i": "A"})

    class End(ac.Component):
        def __init__(self, name):
            super().__init__(name)
            self.connector("p", Wire)

    with pytest.raises(ac.UnitError, match=r"connector type Wire, variable v: unit 'Vv'"):
        End("e")


def test_inner_outer_and_initial_declare_units():
    class World(ac.Component):
        def __init__(self, name):
            super().__init__(name)
            self.g = self.inner("g", "981 cm/s^2", "m/s^2")

    class Ball(ac.Component):
        def __init__(self, name, h0):
            super().__init__(name)
            self.g = self.outer("g", 9.81, "m/s^2")
            self.h = self.variable("h", start=self.initial("h0", h0, "m"), unit="m")

    world, ball = World("world"), Ball("ball", "120 cm")
    assert world.quantities["g"].unit == "m/s^2"
    assert world.quantities["g"].value == pytest.approx(9.81, rel=1e-15)
    assert ball.quantities["g"].unit == "m/s^2"
    assert ball.quantities["h0"].unit == "m"
    assert ball.quantities["h0"].value == pytest.approx(1.2, rel=1e-15)
