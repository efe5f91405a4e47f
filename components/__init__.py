"""The component library, written in the acausal language.

Modules: :mod:`electrical`, :mod:`translational`, :mod:`rotational`, :mod:`thermal`,
:mod:`planar`; :mod:`friction` is the mode logic the friction elements share.
"""
