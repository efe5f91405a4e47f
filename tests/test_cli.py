"""The ``acausal`` command line: simulate / blt / check on model files written to tmp_path."""

import csv
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from learning.cli import main

HEADER = """
import acausal as ac
from components import electrical as el
"""

# V = 1 V across R1 = 2 ohm in series with C1 = 0.5 F from v = 0: C1.v = 1 - exp(-t / (R C))
RC = (
    HEADER
    + """
def build():
    s = ac.System("rc")
    V = el.ConstantVoltage("V", V=1.0)
    R1 = el.Resistor("R1", R=2.0)
    C1 = el.Capacitor("C1", C=0.5, v0=0.0)
    G = el.Ground("G")
    s.connect(V.p, R1.p)
    s.connect(R1.n, C1.p)
    s.connect(C1.n, V.n, G.p)
    return s
"""
)

# C1, C2, C3 form a loop of capacitors: one of the three voltages is not a state (index 2)
CAP_LOOP = (
    HEADER
    + """
system = ac.System("caploop")
V = el.ConstantVoltage("V", V=1.0)
R1, R2 = el.Resistor("R1"), el.Resistor("R2")
C1 = el.Capacitor("C1", C=1.0, v0=0.0)
C2 = el.Capacitor("C2", C=2.0, v0=0.0)
C3 = el.Capacitor("C3", C=3.0)
G = el.Ground("G")
system.connect(V.p, R1.p)
system.connect(R1.n, C1.p, C2.p)
system.connect(C2.n, C3.p, R2.p)
system.connect(V.n, C1.n, C3.n, R2.n, G.p)
"""
)

# a diode in series with a resistor: a nonlinear algebraic loop solved by Newton; R2.n dangles
DIODE = (
    HEADER
    + """
system = ac.System("diode")
V = el.ConstantVoltage("V", V=1.0)
R1, R2 = el.Resistor("R1", R=100.0), el.Resistor("R2")
D = el.Diode("D")
G = el.Ground("G")
system.connect(V.p, R1.p, R2.p)
system.connect(R1.n, D.p)
system.connect(D.n, V.n, G.p)
"""
)

# a user one-port that forgot its constitutive law for the current
UNBALANCED = (
    HEADER
    + """
class Half(ac.Component):
    def __init__(self, name):
        super().__init__(name)
        self.p = self.connector("p", ac.Pin)
        self.n = self.connector("n", ac.Pin)
        v, i = self.variable("v"), self.variable("i")
        self.equations(v == self.p.v - self.n.v, self.p.i + self.n.i == 0)

system = ac.System("broken")
H = Half("H1")
R1 = el.Resistor("R1")
G = el.Ground("G")
system.connect(H.p, R1.p)
system.connect(H.n, R1.n, G.p)
"""
)


def write(tmp_path, text, name="model.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], np.array(rows[1:], dtype=float)


def plain(header):
    """The names of CSV headers written with their units (``C1.v [V]`` -> ``C1.v``)."""
    return [re.sub(r" \[[^\]]*\]$", "", h) for h in header]


def field(out, label):
    """The integer after ``label`` in a check report, e.g. ``continuous states (2)`` -> 2."""
    m = re.search(rf"^\s*{re.escape(label)}\D*(\d+)", out, re.MULTILINE)
    assert m, f"no {label!r} in:\n{out}"
    return int(m.group(1))


# -- simulate ---------------------------------------------------------------------------------
def test_simulate_writes_selected_columns_matching_rc_closed_form(tmp_path, capsys):
    model, out = write(tmp_path, RC), tmp_path / "out.csv"
    args = ["simulate", model, "--t-end", "3", "--dt", "0.01", "--rtol", "1e-10"]
    code = main(args + ["--atol", "1e-12", "--vars", "C1.v, R1.i", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    header, data = read_csv(out)
    assert header == ["time [s]", "C1.v [V]", "R1.i [A]"]
    t = data[:, 0]
    assert t[0] == 0.0 and t[-1] == pytest.approx(3.0) and len(t) == 301
    tau = 2.0 * 0.5
    np.testing.assert_allclose(data[:, 1], 1 - np.exp(-t / tau), atol=1e-6, rtol=0)
    np.testing.assert_allclose(data[:, 2], np.exp(-t / tau) / 2.0, atol=1e-6, rtol=0)
    assert "wrote" in capsys.readouterr().out


def test_simulate_param_override_changes_time_constant(tmp_path):
    model, out = write(tmp_path, RC), tmp_path / "out.csv"
    args = ["simulate", model, "--t-end", "2", "--dt", "0.05", "--rtol", "1e-10", "--atol"]
    code = main(args + ["1e-12", "--param", "R1.R=4", "C1.C=0.25", "--out", str(out)])
    assert code == 0
    header, data = read_csv(out)
    t, v = data[:, 0], data[:, plain(header).index("C1.v")]
    np.testing.assert_allclose(v, 1 - np.exp(-t / (4.0 * 0.25)), atol=1e-6, rtol=0)


def test_simulate_default_columns_are_every_variable(tmp_path):
    model, out = write(tmp_path, RC), tmp_path / "out.csv"
    assert main(["simulate", model, "--t-end", "1", "--out", str(out)]) == 0
    header, data = read_csv(out)
    assert header[0] == "time [s]"
    # 4 components: V, R1, C1 (2 pins x 2 + v + i each), G (1 pin x 2), plus der(C1.v)
    assert len(header) == 1 + 3 * 6 + 2 + 1
    assert {"R1.p.v [V]", "C1.n.i [A]", "G.p.i [A]", "der(C1.v) [V/s]"} <= set(header)
    names = plain(header)
    i = data[:, names.index("R1.i")]
    np.testing.assert_allclose(data[:, names.index("C1.i")], i, atol=1e-12)  # series current


def test_simulate_plot_writes_png(tmp_path):
    pytest.importorskip("matplotlib")
    model, out, png = write(tmp_path, RC), tmp_path / "out.csv", tmp_path / "plot.png"
    code = main(["simulate", model, "--t-end", "1", "--out", str(out), "--plot", str(png)])
    assert code == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--vars", "C1.V"], "'C1.v'"),  # close match suggested
        (["--param", "R1.r=2"], "'R1.R'"),
        (["--param", "R1.R=abc"], "not a number"),
        (["--param", "R1.R=nan"], "R1.R"),
        (["--param", "R1.R"], "NAME=VALUE"),
        (["--dt", "-1"], "dt"),
    ],
)
def test_simulate_bad_option_is_one_message_exit_1(tmp_path, capsys, extra, expected):
    model, out = write(tmp_path, RC), tmp_path / "out.csv"
    code = main(["simulate", model, "--t-end", "1", "--out", str(out)] + extra)
    err = capsys.readouterr().err
    assert code == 1
    assert expected in err and err.startswith("error")
    assert "Traceback" not in err
    assert not out.exists()


def test_simulate_solver_failure_is_one_message_exit_1(tmp_path, capfd):
    text = """
import acausal as ac


class Root(ac.Component):
    def __init__(self, name):
        super().__init__(name)
        z = self.variable("z", start=1.0)
        x = self.variable("x", start=0.0, fixed=True)
        self.equations(z * z == 1 - ac.time, ac.der(x) == z)  # no real z after t = 1


system = ac.System("root")
system.add(Root("S1"))
"""
    out = tmp_path / "out.csv"
    assert main(["simulate", write(tmp_path, text), "--t-end", "2", "--out", str(out)]) == 1
    err = capfd.readouterr().err
    assert err.startswith("error (SimulationError)") and "S1" in err
    assert "Traceback" not in err and not out.exists()


def test_simulate_unwritable_output(tmp_path, capsys):
    model = write(tmp_path, RC)
    out = tmp_path / "no" / "such" / "dir" / "out.csv"
    assert main(["simulate", model, "--t-end", "1", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "cannot write" in err and str(out) in err


def test_simulate_usage_error_is_exit_2(tmp_path, capsys):
    out = str(tmp_path / "x.csv")
    assert main(["simulate", write(tmp_path, RC), "--out", out]) == 2  # no --t-end
    assert "--t-end" in capsys.readouterr().err


# -- blt --------------------------------------------------------------------------------------
def test_blt_prints_blocks_with_solved_unknowns(tmp_path, capsys):
    assert main(["blt", write(tmp_path, RC)]) == 0
    out = capsys.readouterr().out
    head = re.match(r"BLT of rc: (\d+) blocks, 1 continuous state, 0 discrete modes, index 1", out)
    assert head, out
    blocks = re.findall(r"^block (\d+) \(.*\): solves (.*)$", out, re.MULTILINE)
    assert [int(k) for k, _ in blocks] == list(range(1, int(head.group(1)) + 1))
    solved = " ".join(s for _, s in blocks)
    # the resistor's current (the loop's current) and the capacitor's derivative are
    # solved; the source voltage is the constant V.V and the resistor's voltage V.V - C1.v,
    # both eliminated with the aliases
    assert "R1.p.i" in solved and "der(C1.v)" in solved
    assert "V.v" not in solved and "R1.v" not in solved
    assert "states: C1.v" in out
    # each block lists its equations by component, e.g. "    R1: v == R*i"
    assert re.search(r"^    R1: .*==.*R", out, re.MULTILINE), out
    assert re.search(r"^    C1: i == C\*der\(v\)$", out, re.MULTILINE), out  # local names


# -- check ------------------------------------------------------------------------------------
def test_check_rc(tmp_path, capsys):
    assert main(["check", write(tmp_path, RC)]) == 0
    out = capsys.readouterr().out
    assert "structurally sound" in out
    n_eq = re.search(r"balance: (\d+) equations for (\d+) unknowns", out)
    assert n_eq and n_eq.group(1) == n_eq.group(2)
    assert field(out, "continuous states") == 1 and "C1.v" in out
    assert field(out, "index") == 1
    assert field(out, "dummy derivatives") == 0
    assert field(out, "algebraic loops") == 0
    assert field(out, "unconnected connectors") == 0


def test_check_capacitor_loop_is_index_2_with_two_states(tmp_path, capsys):
    assert main(["check", write(tmp_path, CAP_LOOP)]) == 0
    out = capsys.readouterr().out
    # three capacitors, one independent capacitor loop: 3 - 1 = 2 states
    assert field(out, "continuous states") == 2
    assert field(out, "index") == 2
    # C1 and C2 have fixed start values, so C3's derivative is the one demoted
    assert re.search(r"dummy derivatives \(1\): der\(C3\.v\)", out), out
    assert field(out, "algebraic loops") == 1  # the capacitor currents of the loop
    assert field(out, "Newton blocks") == 0  # ... a linear loop, solved symbolically


def test_check_reports_newton_block_and_unconnected_connector(tmp_path, capsys):
    assert main(["check", write(tmp_path, DIODE)]) == 0
    captured = capsys.readouterr()
    assert field(captured.out, "continuous states") == 0
    assert field(captured.out, "Newton blocks") == 1  # the diode's exponential
    assert re.search(r"unconnected connectors \(1\): R2\.n", captured.out), captured.out
    assert "warning" not in captured.err  # listed in the report, not repeated as a warning


def test_check_unbalanced_names_component_and_exits_1(tmp_path, capsys):
    assert main(["check", write(tmp_path, UNBALANCED)]) == 1
    err = capsys.readouterr().err
    assert "StructureError" in err and "unbalanced" in err
    assert "H1.i" in err and "H1" in err  # the unknown without an equation, and its owner
    assert "Traceback" not in err


# -- loading the file -------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["simulate", "blt", "check"])
def test_missing_file(tmp_path, capsys, command):
    missing = str(tmp_path / "nothere.py")
    extra = ["--t-end", "1", "--out", str(tmp_path / "o.csv")] if command == "simulate" else []
    assert main([command, missing] + extra) == 1
    err = capsys.readouterr().err
    assert missing in err and "does not exist" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "text, expected",
    [
        ("x = 3\n", "neither `system` nor a function `build()`"),
        ("system = 3\n", "not an acausal.System"),
        ("def build():\n    return None\n", "not an acausal.System"),
        ("import acausal\n\n\ndef build():\n    return undefined_name\n", "line 5: NameError"),
        ("x = (\n", "SyntaxError"),
    ],
)
def test_bad_model_file(tmp_path, capsys, text, expected):
    assert main(["blt", write(tmp_path, text)]) == 1
    err = capsys.readouterr().err
    assert expected in err and "model.py" in err
    assert "Traceback" not in err


def test_model_error_while_building_is_reported_without_traceback(tmp_path, capsys):
    text = HEADER + 'system = ac.System("s")\nsystem.add(el.Resistor("R1", R=float("nan")))\n'
    assert main(["check", write(tmp_path, text)]) == 1
    err = capsys.readouterr().err
    assert "ParameterError" in err and "R1.R" in err and "Traceback" not in err


def test_console_entry_point_has_no_traceback(tmp_path):
    """The real process boundary: ``python -m learning.cli`` on a missing file."""
    proc = subprocess.run(
        [sys.executable, "-m", "learning.cli", "check", str(tmp_path / "nothere.py")],
        capture_output=True,
        text=True,
        timeout=600,  # a cold start on a loaded machine; a hang still ends
    )
    assert proc.returncode == 1
    assert "does not exist" in proc.stderr and "Traceback" not in proc.stderr


NEGATIVE_RC = """
import acausal as ac
from components import electrical as el

system = ac.System("negative")
V, R = el.SineVoltage("V", V=1.0, f=1.0), el.Resistor("R", R=-1.0)
C, G = el.Capacitor("C", C=1.0, v0=0.0), el.Ground("G")
system.connect(V.p, R.p)
system.connect(R.n, C.p)
system.connect(C.n, V.n, G.p)
"""


def test_check_feasibility_flags_a_negative_resistor(tmp_path, capsys):
    path = tmp_path / "negative.py"
    path.write_text(NEGATIVE_RC)
    code = main(["check", str(path), "--feasibility", "--t-end", "1", "--dt", "0.01"])
    out = capsys.readouterr().out
    assert code == 1
    assert "R" in out and "dissipat" in out.lower() and "-i**2" in out
