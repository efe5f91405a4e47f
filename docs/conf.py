"""Sphinx configuration of the documentation site.

Build (strict: every warning is an error, every executed page must run)::

    sphinx-build -W --keep-going -b html docs site/html

(MyST-NB writes its executed notebooks beside the output folder, in site/jupyter_execute.)

Narrative pages are MyST Markdown executed by MyST-NB (their printed output is the real
one); tutorials are sphinx-gallery scripts in ``docs/tutorials`` run at build time, their
figures made by the build; the API reference is autodoc on the public package names.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import matplotlib
from sphinx.application import Sphinx

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# tutorials draw with Agg in this process; the MyST-NB kernels (which inherit the
# environment) with the inline backend, which renders each figure by Agg into the page
os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"

project = "acausal"
author = "the acausal developers"
copyright = "the acausal developers, BSD-3-Clause"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "myst_nb",
    "sphinx_gallery.gen_gallery",
]

root_doc = "index"
# sphinx-gallery also writes a notebook per tutorial: not a source here (MyST-NB would run it again)
exclude_patterns = ["_build", "jupyter_execute", "tutorials/**", "auto_tutorials/*.ipynb"]
templates_path = []
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme = "furo"
html_title = "acausal"
html_theme_options = {"navigation_with_keys": True}

# API reference: signatures as written, members in source order, no private names.
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"exclude-members": "__init__, __new__"}
add_module_names = False
python_display_short_literal_types = True

# MyST: $...$ math, ::: fences; MyST-NB: run every page on each build, stop on an error
# (a cell meant to raise is tagged raises-exception), 3 minutes per cell at most.
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_timeout = 180
nb_merge_streams = True
nb_kernel_rgx_aliases = {".*": "python3"}

sphinx_gallery_conf = {
    "examples_dirs": ["tutorials"],
    "gallery_dirs": ["auto_tutorials"],
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "show_memory": False,
    "line_numbers": False,
    "min_reported_time": 0,
    "reset_modules": ("matplotlib",),
    "capture_repr": ("__repr__",),
}

suppress_warnings = ["config.cache"]

# The docstrings are plain text with reST literals and roles; a set's size written |K|
# would be a reST substitution reference, so bars around a bare word are escaped outside
# literals and roles (inside them a backslash would show).
_BARS = re.compile(r"(?<![\\|])\|(\w+)\|(?!\|)")
_LITERALS = re.compile(r"(``.*?``|`[^`]*`)", re.DOTALL)  # may span lines


def escape_bars(text: str) -> str:
    """``text`` with ``|word|`` escaped where it is plain text (a grid table's cells have
    spaces inside their bars and are left alone)."""
    parts = _LITERALS.split(text)
    return "".join(p if k % 2 else _BARS.sub(r"\\|\1\\|", p) for k, p in enumerate(parts))


def _escape_bars(
    app: Sphinx, what: str, name: str, obj: object, options: object, lines: list[str]
) -> None:
    lines[:] = escape_bars("\n".join(lines)).split("\n")


def setup(app: Sphinx) -> None:
    app.connect("autodoc-process-docstring", _escape_bars)
