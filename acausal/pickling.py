"""Pickling objects that hold CasADi ``SX`` expressions.

CasADi pickles ``SX`` only inside its serialization contexts, which also keep one symbol
one symbol across all the expressions of a pickle. :class:`PicklesWithCasadi` makes an
object (a System, a Model) pickle as one blob written inside such a context, so
``pickle.dumps(model)`` and ``copy.deepcopy(system)`` work without the caller knowing.
"""

from __future__ import annotations

import io
import pickle
import threading
from typing import Any

import casadi as cs

_state = threading.local()


def _load(blob: bytes) -> Any:
    with cs.global_unpickle_context():
        return pickle.loads(blob)


class PicklesWithCasadi:
    """Mixin: the outermost such object of a pickle serializes everything it reaches in
    one CasADi context; objects met inside it pickle the ordinary way."""

    def __reduce_ex__(self, protocol: int) -> Any:
        if getattr(_state, "active", False):
            return super().__reduce_ex__(protocol)
        _state.active = True
        try:
            with cs.global_pickle_context():
                blob = pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)
        finally:
            _state.active = False
        return (_load, (blob,))


def detached_copy(obj: Any, leave: Any) -> Any:
    """A deep copy of ``obj`` in which every reference to ``leave`` is None (one pickle in a
    CasADi context, ``leave`` written as a persistent id): a copy of some components that
    does not copy the system they belong to."""
    buffer = io.BytesIO()
    _state.active = True
    try:
        with cs.global_pickle_context():
            writer = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
            writer.persistent_id = lambda o: "left" if o is leave else None
            writer.dump(obj)
    finally:
        _state.active = False
    with cs.global_unpickle_context():
        reader = pickle.Unpickler(io.BytesIO(buffer.getvalue()))
        reader.persistent_load = lambda pid: None
        return reader.load()
