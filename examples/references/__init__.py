"""The reference models: one builder each, shared by the tests, the examples and bench/.

* :mod:`.mechanisms`: the closed-loop planar slider-crank (MSL Engine1a's geometry) and a
  crank-rocker four-bar, in variants of start values and drive, with their exact geometry
  and the energy and loop-closure checks every run is held to;
* :mod:`.slider_crank_reference`: the paper's slider-crank data, its model from the planar
  library (:func:`~.slider_crank_reference.slider_crank`) and its Lagrangian by hand (sympy),
  an independent model to compare the components' one with;
* :mod:`.ivp_mechanisms`: Andrews' squeezer, the car axis and Simeon's elastic slider crank
  of the Test Set for IVP Solvers, as user components with index-3 constraints;
* :mod:`.oscillator`: a mass on a spring and a damper pushed by a force, and an RC node
  with a diode (a Newton block), the small models of the rollout and equation-error tests;
* :mod:`.rc_record`: an RC circuit driven by a long sampled record and its exact response;
* :mod:`.sine_rc`: a sine source, a resistor and a 1 F capacitor, with two user-written
  cubic resistors (the circuit of the output-error fits);
* :mod:`.switching`: a half-wave rectifier with an ideal diode, a stick-slip mass, and a
  sine source with a switching element and a load;
* :mod:`.pendulum`: the pendulum in Cartesian coordinates (index 3);
* :mod:`.thermal_plate`: an n x m plate of heat capacitors and conductors (2-D coupling,
  built with ``Component.array``) and its transient and steady state in closed form.
"""
