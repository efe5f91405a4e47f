"""Readable infix text of scalar CasADi expressions, for equations shown to people.

CasADi's own printer names shared subexpressions (``@1=...``); here every node is
written out with the fewest parentheses that keep the meaning, using each operator's
precedence.
"""

from __future__ import annotations

from collections.abc import Callable

import casadi as cs

from .symbols import as_sx

_BINARY = {  # op: (text, precedence, right operand needs parentheses at equal precedence)
    cs.OP_ADD: (" + ", 1, False),
    cs.OP_SUB: (" - ", 1, True),
    cs.OP_MUL: ("*", 2, False),
    cs.OP_DIV: ("/", 2, True),
    cs.OP_POW: ("^", 4, True),
    cs.OP_CONSTPOW: ("^", 4, True),
    cs.OP_EQ: (" == ", 0, False),
    cs.OP_LT: (" < ", 0, False),
    cs.OP_LE: (" <= ", 0, False),
    cs.OP_NE: (" != ", 0, False),
    cs.OP_AND: (" and ", -1, False),
    cs.OP_OR: (" or ", -2, False),
}
_FUNCTIONS = {
    cs.OP_EXP: "exp",
    cs.OP_LOG: "log",
    cs.OP_SQRT: "sqrt",
    cs.OP_SIN: "sin",
    cs.OP_COS: "cos",
    cs.OP_TAN: "tan",
    cs.OP_TANH: "tanh",
    cs.OP_SINH: "sinh",
    cs.OP_COSH: "cosh",
    cs.OP_ASIN: "asin",
    cs.OP_ACOS: "acos",
    cs.OP_ATAN: "atan",
    cs.OP_FABS: "abs",
    cs.OP_SIGN: "sign",
    cs.OP_FMIN: "min",
    cs.OP_FMAX: "max",
    cs.OP_ATAN2: "atan2",
    cs.OP_FLOOR: "floor",
    cs.OP_CEIL: "ceil",
    cs.OP_LOG1P: "log1p",
    cs.OP_EXPM1: "expm1",
}


def infix(expr: cs.SX, name: Callable[[cs.SX], str] = lambda s: s.name()) -> str:
    """Text of a scalar expression; ``name`` gives each symbol's text."""
    return _text(as_sx(expr), name)[0]


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


def _text(e: cs.SX, name: Callable[[cs.SX], str]) -> tuple[str, int]:
    """(text, precedence of its outermost operator); atoms have precedence 9."""
    if e.is_symbolic():
        return name(e), 9
    if e.is_constant():
        v = float(e)
        return (_number(v), 9) if v >= 0 else (f"-{_number(-v)}", 3)
    op = e.op()
    args = [_text(e.dep(k), name) for k in range(e.n_dep())]
    if op in _BINARY:
        text, prec, strict = _BINARY[op]
        (a, pa), (b, pb) = args
        a = a if pa >= prec else f"({a})"
        b = b if pb > prec or (pb == prec and not strict) else f"({b})"
        return f"{a}{text}{b}", prec
    if op == cs.OP_NEG:
        a, pa = args[0]
        return f"-{a if pa > 2 else f'({a})'}", 3
    if op == cs.OP_SQ:
        a, pa = args[0]
        return f"{a if pa > 4 else f'({a})'}^2", 4
    if op == cs.OP_NOT:
        return f"not ({args[0][0]})", 3
    if op == cs.OP_IF_ELSE_ZERO:
        return f"(if {args[0][0]} then {args[1][0]} else 0)", 9
    if op == cs.OP_TWICE:
        a, pa = args[0]
        return f"2*{a if pa > 2 else f'({a})'}", 2
    if op in _FUNCTIONS:
        return f"{_FUNCTIONS[op]}({', '.join(a for a, _ in args)})", 9
    return f"[{e}]", 9
