"""Units of quantities: parsing, conversion of given values, display (pint underneath).

A unit is declared as a string pint parses (``"V"``, ``"N*m/(rad/s)"``, ``"1"`` for a
dimensionless quantity; ``""`` means none was declared). Modelica's spellings are accepted
besides pint's own: ``"Ohm"`` (with prefixes: ``"kOhm"``) and ``"N.m"`` for ``N*m``.

One pint ``UnitRegistry`` serves the package; it is made when a unit is first parsed
(importing pint and making it cost some 0.3-0.5 s, which a process that never meets a unit
does not pay), and each unit string is parsed once (:func:`parse_unit` is cached). The
units the component library declares are known without pint (:data:`LIBRARY_UNITS`, with
their derivatives): a model built from library components is built, compiled and
simulated without it; a value given with a unit, a unit check or another unit loads it.

Radians count as dimensionless, as in pint and SI (``rad/s`` has the dimension of ``1/s``).
A *given value* (:func:`convert`) must however carry as many angles as its declared unit:
pint would convert ``"10 Hz"`` to ``10 rad/s``, where the user almost always meant
``2 pi 10 rad/s``, so that is refused with the spellings that say it (``"600 rpm"``).
"""

from __future__ import annotations

import difflib
import functools
import re
import sys
from numbers import Real
from typing import TYPE_CHECKING

from .errors import UnitError
from .table import Table

if TYPE_CHECKING:
    import pint

_REGISTRY: pint.UnitRegistry | None = None

#: a magnitude, then the unit (``"2 kOhm"``, ``"-1.5e-3 N*m"``, ``"20degC"``)
_QUANTITY = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*")


#: The units the component library declares, each with its first and second time derivative
#: as :func:`derivative_unit` writes them (the tests check every entry against pint): with
#: them, building, compiling and simulating library models never imports pint, whose import
#: and registry cost some 0.3-0.4 s (a third of a 1,000-stage ladder's first result).
LIBRARY_UNITS = Table(
    {
        "1": ("1/s", "1/s^2"),
        "A": ("A/s", "A/s^2"),
        "F": ("F/s", "F/s^2"),
        "H": ("H/s", "H/s^2"),
        "Hz": ("Hz/s", "Hz/s^2"),
        "J": ("J/s", "J/s^2"),
        "J/K": ("J/K/s", "J/K/s^2"),
        "K": ("K/s", "K/s^2"),
        "K/W": ("K/W/s", "K/W/s^2"),
        "K/s": ("K/s^2", "K/s^3"),
        "N": ("N/s", "N/s^2"),
        "N*m": ("N*m/s", "N*m/s^2"),
        "N*m*s/rad": ("N*m/rad", "N*m/s/rad"),
        "N*m/A": ("N*m/A/s", "N*m/A/s^2"),
        "N*m/rad": ("N*m/rad/s", "N*m/rad/s^2"),
        "N*s/m": ("N/m", "N/s/m"),
        "N/m": ("N/m/s", "N/m/s^2"),
        "Ohm": ("Ohm/s", "Ohm/s^2"),
        "S": ("S/s", "S/s^2"),
        "V": ("V/s", "V/s^2"),
        "W": ("W/s", "W/s^2"),
        "W/K": ("W/K/s", "W/K/s^2"),
        "kg": ("kg/s", "kg/s^2"),
        "kg*m^2": ("kg*m^2/s", "kg*m^2/s^2"),
        "m": ("m/s", "m/s^2"),
        "m/s": ("m/s^2", "m/s^3"),
        "m/s^2": ("m/s^3", "m/s^4"),
        "rad": ("rad/s", "rad/s^2"),
        "rad/s": ("rad/s^2", "rad/s^3"),
        "rad/s^2": ("rad/s^3", "rad/s^4"),
        "s": ("1", "1/s"),
        "s/m": ("1/m", "1/s/m"),
    }
)


def registry() -> pint.UnitRegistry:
    """The package's pint registry, made on first use (with Modelica's ``Ohm``)."""
    global _REGISTRY
    if _REGISTRY is None:
        import pint

        reg = pint.UnitRegistry()
        reg.define("Ohm = ohm")  # Modelica's spelling; prefixes work: kOhm, MOhm
        reg.formatter.default_sort_func = None  # units shown in the order written: N*m/s
        _REGISTRY = reg
    return _REGISTRY


@functools.cache
def _parsed(text: str) -> pint.Unit:
    return registry().parse_units(text)


def parse_unit(text: str, where: str) -> pint.Unit:
    """The pint unit ``text`` spells, or a :class:`UnitError` naming ``where`` (the
    quantity that declares it, e.g. ``R1.R``) and the bad string, with the closest known
    unit names."""
    if not isinstance(text, str) or not text.strip():
        raise UnitError(
            f"{where}: unit {text!r} is not a unit; give a string such as 'Ohm', 'N*m', "
            "'rad/s', or '1' for a dimensionless quantity"
        )
    try:
        return _parsed(text)
    except Exception as exc:  # pint raises several types for text it cannot read
        import pint

        hint = ""
        if isinstance(exc, pint.UndefinedUnitError):
            bad = exc.unit_names[0] if exc.unit_names else text
            close = difflib.get_close_matches(bad, dir(registry()), n=3, cutoff=0.6)
            hint = f" (unknown: {bad!r}" + (
                f"; did you mean {', '.join(close)}?)" if close else ")"
            )
        raise UnitError(
            f"{where}: unit {text!r} is not a unit{hint}; write SI symbols such as 'Ohm', "
            "'V', 'N*m', 'rad/s', or '1' for a dimensionless quantity"
        ) from None


def check_unit(text: str, where: str) -> str:
    """``text`` itself after checking that it parses (``""``: no unit declared; one of
    :data:`LIBRARY_UNITS` is known to)."""
    if text != "" and text not in LIBRARY_UNITS:
        parse_unit(text, where)
    return text


def unit_text(unit: pint.Unit) -> str:
    """A unit as short text: ``V/s``, ``m/s^2``, ``Ohm*A``; ``1`` when dimensionless."""
    return f"{unit:~C}".replace("**", "^") or "1"


@functools.cache
def derivative_unit(unit: str, order: int = 1) -> str:
    """The unit of the ``order``-th time derivative of a quantity in ``unit``:
    ``unit / s^order`` (``V`` -> ``V/s``, ``m`` -> ``m/s^2``); ``""`` stays ``""``. The
    library's units' first two from :data:`LIBRARY_UNITS`, the others by pint
    (:func:`pint_derivative_unit`)."""
    if unit == "" or order == 0:
        return unit
    known = LIBRARY_UNITS.get(unit)
    return (
        known[order - 1] if known is not None and order <= 2 else pint_derivative_unit(unit, order)
    )


def pint_derivative_unit(unit: str, order: int) -> str:
    """``unit / s^order`` as pint writes it (:func:`unit_text`)."""
    return unit_text(parse_unit(unit, unit) / registry().second ** order)


def _angles(q: pint.Quantity) -> float:
    """The power of radians in ``q``'s unit (1 in ``rad/s``, ``rpm``; 0 in ``Hz``)."""
    return dict(q.to_root_units().unit_items()).get("radian", 0)


def is_quantity(value: object) -> bool:
    """Whether ``value`` is a pint quantity (of any registry). No pint imported: none
    can exist."""
    pint = sys.modules.get("pint")
    return pint is not None and isinstance(value, pint.Quantity)


def convert(value: object, unit: str, where: str) -> float:
    """A value given with its unit, as a string (``"2 kOhm"``) or a pint quantity, as a
    number in the declared ``unit``: ``magnitude * factor`` (offsets included: ``"20
    degC"`` in ``K`` is 293.15). A :class:`UnitError` naming ``where`` when ``unit`` is
    undeclared, the dimensions differ, or the angles do (see the module docstring)."""
    shown = f"{where} = {str(value)!r}"
    if unit == "":
        raise UnitError(
            f"{shown}: {where} declares no unit, so a value with a unit cannot be converted; "
            "give a finite number (or declare the parameter's unit)"
        )
    reg = registry()
    if isinstance(value, str):
        m = _QUANTITY.fullmatch(value)
        if m is None:
            raise UnitError(
                f"{shown} is not a number followed by a unit (e.g. '2 kOhm'); give a finite "
                f"number in {unit}, or a finite number and a unit"
            )
        magnitude, text = float(m[1]), m[2]
        given_unit = parse_unit(text, where) if text else reg.dimensionless
    else:  # a pint quantity, perhaps of the user's own registry
        magnitude, text = value.magnitude, str(value.units)
        if isinstance(magnitude, bool) or not isinstance(magnitude, Real):
            raise UnitError(f"{shown}: the magnitude must be one real number")
        given_unit = parse_unit(text, where)
    given = reg.Quantity(float(magnitude), given_unit)
    target = parse_unit(unit, where)
    if given.dimensionality != target.dimensionality:
        raise UnitError(
            f"{shown}: its unit {unit_text(given_unit)} ({given.dimensionality}) is not of "
            f"the dimension of {unit} ({target.dimensionality}), {where}'s unit; give a finite "
            f"number in {unit}, or a number with a unit of that dimension"
        )
    if _angles(given) != _angles(reg.Quantity(1.0, target)):
        raise UnitError(
            f"{shown}: {unit_text(given_unit)} and {unit} differ in angles (pint would take "
            f"1 Hz as 1 rad/s); write the angle: e.g. '600 rpm' or '62.83 rad/s' for 10 "
            "turns per second"
        )
    return float(given.to(target).magnitude)
