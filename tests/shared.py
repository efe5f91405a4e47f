"""Helpers several test files share: data made once per process (runs at tight tolerances
that several files read), e.g. the oscillator's trajectories of
:mod:`examples.references.oscillator`."""

import functools

from examples.references.oscillator import oscillator_trajectories


def trajectories(freqs=(3.0, 5.0, 8.0), t_end=2.0, dt=2e-3):
    """:func:`oscillator_trajectories`, each call a fresh copy of one run per process."""
    return [{k: v.copy() for k, v in d.items()} for d in _runs(tuple(freqs), t_end, dt)]


@functools.lru_cache(maxsize=4)
def _runs(freqs, t_end, dt):
    return oscillator_trajectories(freqs, t_end, dt)
