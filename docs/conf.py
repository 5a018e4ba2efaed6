"""
Sphinx configuration of kubetwist's documentation: the user guide (``docs/guide/``), the
design and operations reference pages (``docs/*.md``), the flags reference generated from
``kubetwist.tap.Options`` (``_ext/kubetwist_flags.py``); the API reference is pydoctor's,
written into ``api/`` of the same HTML output by ``tools/build_docs.py``.

Build both (no warnings allowed, as CI's ``tests/docs/test_build.py`` builds them)::

    python tools/build_docs.py docs/_build/html
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(HERE, "_ext"))

import kubetwist  # noqa: E402
from kubetwist.tap import KUBERNETES_VERSION  # noqa: E402

project = "kubetwist"
author = "the kubetwist developers"
copyright = "2026, the kubetwist developers"
release = version = kubetwist.__version__

extensions = ["myst_parser", "kubetwist_flags"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]
myst_enable_extensions = ["deflist"]
myst_heading_anchors = 3
html_theme = "alabaster"
html_title = f"kubetwist {release} (Kubernetes {KUBERNETES_VERSION} API level)"
