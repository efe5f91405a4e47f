"""The README's example runs as written and its numbers are right."""

import re
from pathlib import Path

import numpy as np

import acausal as ac

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example(tmp_path, monkeypatch):
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    monkeypatch.chdir(tmp_path)
    calls = []
    real = ac.compile
    monkeypatch.setattr(ac, "compile", lambda system: calls.append(system) or real(system))
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert len(calls) == 1  # compiled once on the README's path
    res = scope["res"]
    # R = 2 kOhm (from params), C = 1 uF: tau = 2 ms; a 1 V step at t = 1 ms
    t = res.t
    exact = np.where(t >= 1e-3, 1 - np.exp(-(t - 1e-3) / 2e-3), 0.0)
    assert np.max(np.abs(res["C.v"] - exact)) < 1e-5
    assert (tmp_path / "rc.csv").exists() and (tmp_path / "rc.png").exists()


def test_readme_many_runs_example(tmp_path, monkeypatch):
    """The batch snippet after the first model: every member against the RC step's closed
    form with its own R and C."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    many = next(b for b in blocks if "simulate_many" in b)
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(blocks[0] + many, "README.md", "exec"), scope)
    batch = scope["batch"]
    assert not batch.errors and batch["C.v"].shape == (1000, len(batch.t))
    tau = batch.design["R.R"] * batch.design["C.C"]
    assert np.ptp(tau) > 0.09 * 1e-3  # the design spans +-5 % of R C = 1 ms
    t = batch.t[None, :]
    exact = np.where(t >= 1e-3, 1 - np.exp(-(t - 1e-3) / tau[:, None]), 0.0)
    assert np.max(np.abs(batch["C.v"] - exact)) < 1e-4
