"""``compile(system)``: a system's :class:`~acausal.Model`, by the stencil compile where the
system has its form (:mod:`acausal.stencil`), else by the full structural pipeline
(:func:`acausal.model.compile_full`: flatten -> alias elimination -> balance / singularity
check -> Pantelides + dummy derivatives -> BLT (Tarjan) -> symbolic solution of linear
blocks -> semi-explicit DAE)."""

from __future__ import annotations

from .gc_pause import paused_gc
from .model import Model, check_system, compile_full
from .stencil import compile_stencil
from .system import System


def compile(system: System) -> Model:  # noqa: A001 - the public name fixed by the design
    """Compile ``system`` to a :class:`~acausal.Model` (see the module docstring). Each
    stage is a function of :mod:`acausal.structure` that can be called on its own. A large
    system of arrays of one length connected element by element is compiled from two
    small ones by the stencil compile (a :class:`~acausal.stencil.StencilModel`, the same
    DAE to rounding) where they show its form, else by the full pipeline.

    Python's cyclic garbage collector is paused meanwhile (and restored): the stages
    allocate millions of small objects that form no cycles."""
    check_system(system, "compile")
    with paused_gc():
        found = compile_stencil(system)
        return found if found is not None else compile_full(system)
