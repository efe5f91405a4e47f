"""The stencil compile: a large array model's DAE replicated from two small ones.

A system whose arrays (:meth:`Component.array <acausal.Component.array>`) all have one
length ``n`` and whose connections join them element by element with shifts (``rs.n[:-1]``
to ``rs.p[1:]``), plain connectors to every element, or single elements near an end
(``rs.p[0]``, ``ms.flange_b[-1]``), is a chain of *cells*: cell ``c`` holds instance ``c``
of every array. The structural pipeline treats every interior cell alike, so the
semi-explicit DAE it gives is a stencil: the rates and named outputs of cell ``c`` are one
function ``F(x_{c-w..c+w}, p_{c-w..c+w}, x_g, p_g, t)`` of the states and parameters of the
cells around it and of the plain components' (``g``), for ``H <= c < n - T``; the first
``H`` and the last ``T`` cells have functions of their own.

Here the system is shrunk to ``K`` and ``K + 1`` cells (the arrays' first instances, the
connections' index ranges and end elements moved with the end they belong to; ``K`` is 8,
or 14 where the cells reach too far for 8) and both are compiled by the full pipeline
(:func:`acausal.model.compile_full`). Each cell's rows (its states'
rates and start values, its names' outputs) become a function of its window, compared
instruction by instruction: the interior ones must all be one function, in both small
models, and the end cells and the plain components' rows the same in both. The orders of
the states, parameters and names (runs of cells, each cell's names in one order) must be
those the ``K`` model's order gives at ``K + 1``. Then the model at ``n`` is the interior
function mapped over ``n - H - T`` cells (CasADi ``Function.map`` of eight cells at a
time, their common subexpressions merged, called on symbols: the same kind of expression
graph the full pipeline gives), the end cells' functions at their
places, and the plain components' rows; a plain connector joined to every element (a
ground, a wall) has its flow from Kirchhoff's law, the sum of the elements' flows, checked
against the small model's. Anything else - a block of equations spanning all cells (a
ladder solved as one tridiagonal system), events, Newton unknowns, a state choice made at
run time, an instance changed by hand, a 2-D grid - falls back to the full pipeline.

The model returned (:class:`StencilModel`) simulates from that DAE; its stage forms
(``flat``, ``reduced``, ``ir``, the BLT, :meth:`~acausal.Model.dump`) are the full
pipeline's, made when first read from a copy of the small system grown back to ``n``.
"""

from __future__ import annotations

from .model import StencilModel, compile_stencil
from .shape import EDGE, MIN_CELLS, SMALL

__all__ = ["EDGE", "MIN_CELLS", "SMALL", "StencilModel", "compile_stencil"]
