"""A user-written relation as a law."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import casadi as cs

from acausal.errors import OptionError

from .law import Law


class Known(Law):
    """A user-written relation ``relation(*inputs, **params)``: an ``lhs == rhs`` expression
    or a residual (meaning ``residual == 0``). ``params`` (name -> value) become raw
    parameters under their own names (``Known(lambda i, v, R: v == R * i, {"R": 2.0})``).
    No condition is imposed; ``check_feasibility`` analyses such laws.

    Pickling (and so ``copy.deepcopy`` of a system, which fits do) stores the relation traced
    into a CasADi Function of the inputs and parameters, so a lambda's law pickles too.
    """

    def __init__(
        self,
        relation: Callable[..., cs.SX],
        params: Mapping[str, float] | None = None,
        *,
        n_inputs: int | None = None,
        labels: Sequence[str] | None = None,
    ) -> None:
        if not callable(relation):
            raise OptionError(f"Known: relation={relation!r} is not callable")
        self.relation_fn, self.params = relation, dict(params or {})
        super().__init__(n_inputs, labels)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        if not isinstance(self.relation_fn, _Traced):
            state["relation_fn"] = _Traced(self.relation_fn, self.n_inputs, list(self.params))
        return state

    def _setup(self) -> None:
        for name, value in self.params.items():
            self._add(name, "raw", 1, float(value), raw=name)

    def _relation(self, u: list[cs.SX], w: dict[str, cs.SX]) -> tuple[cs.SX, cs.SX]:
        out = self.relation_fn(*u, **w)
        if isinstance(out, (int, float)):
            out = cs.SX(out)
        if not isinstance(out, cs.SX) or not out.is_scalar():
            raise OptionError(
                f"Known: the relation returned {out!r}; return one scalar expression "
                "lhs == rhs or a residual"
            )
        if out.is_op(cs.OP_EQ):
            return out.dep(0), out.dep(1)
        return out, cs.SX(0)


class _Traced:
    """``relation(*u, **params)`` traced once into a CasADi Function returning ``lhs, rhs``
    (picklable where the user's callable may not be)."""

    def __init__(self, relation: Callable[..., cs.SX], n: int, names: Sequence[str]) -> None:
        u = [cs.SX.sym(f"u{k}") for k in range(n)]
        w = {k: cs.SX.sym(k) for k in names}
        out = cs.SX(relation(*u, **w))
        lhs, rhs = (out.dep(0), out.dep(1)) if out.is_op(cs.OP_EQ) else (out, cs.SX(0))
        self.names = list(names)
        self.function = cs.Function("known", [*u, *w.values()], [lhs, rhs])

    def __call__(self, *u: cs.SX, **w: cs.SX) -> cs.SX:
        lhs, rhs = self.function(*u, *(w[k] for k in self.names))
        return lhs == rhs
