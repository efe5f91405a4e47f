"""``Dense``: the fully connected networks of :func:`learning.reduce_mechanism`'s decoder and
encoder, with standardized inputs, scaled outputs and outputs that copy an input exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as cs
import numpy as np

from ..laws import ACTIVATIONS, draw_weights


@dataclass(frozen=True)
class Dense:
    """``y = out_offset + out_scale * (W_L h_{L-1} + b_L)``, ``h_k = sigma(W_k h_{k-1} + b_k)``,
    ``h_0 = (x - in_offset) / in_scale``; ``theta`` the weights layer by layer (``W`` row-major,
    then ``b``); ``copies``: ``(k, j)`` pairs whose output ``y_k`` is the input ``x_j`` itself."""

    sizes: tuple[int, ...]
    activation: str
    in_offset: np.ndarray
    in_scale: np.ndarray
    out_offset: np.ndarray
    out_scale: np.ndarray
    copies: tuple[tuple[int, int], ...] = ()

    @property
    def count(self) -> int:
        return sum(o * (i + 1) for i, o in zip(self.sizes[:-1], self.sizes[1:]))

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        parts = []
        for k, (i, o) in enumerate(zip(self.sizes[:-1], self.sizes[1:])):
            last = k == len(self.sizes) - 2
            parts += [draw_weights(rng, i, o, "tanh" if last else self.activation).ravel()]
            parts += [np.zeros(o)]
        return np.concatenate(parts)

    def __call__(self, x: cs.SX | cs.MX, theta: cs.SX | cs.MX | np.ndarray) -> cs.SX | cs.MX:
        h = (x - cs.DM(self.in_offset)) / cs.DM(self.in_scale)
        sigma, at = ACTIVATIONS[self.activation], 0
        layers = list(zip(self.sizes[:-1], self.sizes[1:]))
        for k, (i, o) in enumerate(layers):
            W = cs.reshape(theta[at : at + i * o], i, o).T
            b = theta[at + i * o : at + i * o + o]
            at += i * o + o
            h = cs.mtimes(W, h) + b
            if k < len(layers) - 1:
                h = sigma(h)
        y = cs.DM(self.out_offset) + cs.DM(self.out_scale) * h
        if not self.copies:
            return y
        rows = [y[k] for k in range(self.sizes[-1])]
        for k, j in self.copies:
            rows[k] = x[j]
        return cs.vertcat(*rows)


def _rows(net: Dense, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
    x = np.atleast_2d(np.asarray(x, dtype=float))
    sym = cs.SX.sym("x", net.sizes[0])
    fn = cs.Function("net", [sym], [net(sym, theta)])
    return np.asarray(fn.map(x.shape[0])(x.T)).T
