"""The component library, written in the acausal language.

Modules: :mod:`electrical`, :mod:`translational`, :mod:`rotational`, :mod:`thermal`,
:mod:`planar`; :mod:`friction` is the mode logic the friction elements share. Each 1-D
mechanical domain states its own equations and imports the rest of its classes from the
modules beside it, split as Modelica's packages: ``translational_masses``,
``<domain>_sources``, ``<domain>_sensors``, ``<domain>_friction``. Each domain has sensors
(Modelica's names), whose reading is a variable.

Every parameter and variable declares its SI unit, Modelica's (``R`` in ``Ohm``, ``J`` in
``kg*m^2``, ``d`` of a rotational damper in ``N*m*s/rad``, a dimensionless one ``"1"``).
A parameter with a physical minimum (resistance, conductance, capacitance, inductance, mass,
inertia, stiffness, damping, friction forces and coefficients, heat capacity, thermal
conductance, absolute temperature: 0; a friction's ``peak``: 1, as in Modelica) declares it
with ``min=``: a smaller value builds, with an ``ac.ParameterWarning`` naming the parameter.
"""
