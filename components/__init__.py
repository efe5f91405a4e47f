"""The component library, written in the acausal language.

Modules: :mod:`electrical`, :mod:`translational`, :mod:`rotational`, :mod:`thermal`,
:mod:`planar`; :mod:`friction` is the mode logic the friction elements share.

Every parameter and variable declares its SI unit, Modelica's (``R`` in ``Ohm``, ``J`` in
``kg*m^2``, ``d`` of a rotational damper in ``N*m*s/rad``, a dimensionless one ``"1"``).
"""
