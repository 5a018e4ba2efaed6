# -*- test-case-name: tests.testing.test_pytest_plugin -*-
"""
The pytest plugin of L{kubetwist.testing} (entry point C{pytest11}: C{kubetwist}).

Fixtures:
  - C{kubetwist_server}: a started L{KubeServer}; its scope is C{--kubetwist-scope} (ini
    C{kubetwist_scope}), C{session} by default, or C{function}, C{module}...  CRDs named by
    the ini option C{kubetwist_crds} (paths relative to the rootdir) are installed when it
    starts; those of a test's C{@pytest.mark.kubetwist_crds(path, ...)} marker before that
    test.  Ini C{kubetwist_args}: more C{kubeapi} flags; C{kubetwist_mode}: C{thread} (the
    default) or C{subprocess}.
  - C{kubetwist_function_server}: a fresh server for each test (its CRDs: the ini option,
    the marker, and C{request.param} when parametrized indirectly with a list of paths).
  - C{kubetwist_kubeconfig}: the path of C{kubetwist_server}'s admin kubeconfig.
  - C{kubetwist_client}: an official C{kubernetes} C{ApiClient} for C{kubetwist_server}.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Iterator

import pytest

if TYPE_CHECKING:
    from kubetwist.testing.server import KubeServer

SCOPES = ("session", "package", "module", "class", "function")


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("kubetwist")
    group.addoption("--kubetwist-scope", default=None, choices=SCOPES,
                    help="scope of the kubetwist_server fixture (default: session)")
    parser.addini("kubetwist_scope", "scope of the kubetwist_server fixture", default="session")
    parser.addini("kubetwist_crds", "CRD files or directories installed in every kubetwist "
                  "server (relative to the rootdir)", type="linelist", default=[])
    parser.addini("kubetwist_args", "more kubeapi flags for kubetwist servers",
                  type="args", default=[])
    parser.addini("kubetwist_mode", "thread (default) or subprocess (twistd kubeapi)",
                  default="thread")


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers", "kubetwist_crds(*paths): CRD files or directories installed in the "
        "kubetwist server before the test (relative to the test file's directory)")


def _scope(fixture_name: str, config: Any) -> str:
    return config.getoption("--kubetwist-scope") or config.getini("kubetwist_scope")


def _ini_crds(config: Any) -> list[str]:
    return [os.path.join(str(config.rootpath), p) for p in config.getini("kubetwist_crds")]


def _marked_crds(node: Any) -> list[str]:
    base = os.path.dirname(str(node.path))
    return [os.path.join(base, os.fspath(p))
            for mark in node.iter_markers("kubetwist_crds") for p in mark.args]


def _server(request: Any, crds: list[str]) -> Iterator[KubeServer]:
    from kubetwist.testing.server import KubeServer

    server = KubeServer(crds, args=request.config.getini("kubetwist_args"),
                        mode=request.config.getini("kubetwist_mode"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope=_scope)
def kubetwist_server(request: Any) -> Iterator[KubeServer]:
    crds = _ini_crds(request.config)
    if request.scope == "function":
        crds += _marked_crds(request.node)
    yield from _server(request, crds)


@pytest.fixture(autouse=True)
def _kubetwist_marked_crds(request: Any) -> None:
    """Install a test's marked CRDs in a shared C{kubetwist_server} (idempotent)."""
    crds = _marked_crds(request.node)
    if crds and "kubetwist_server" in request.fixturenames:
        request.getfixturevalue("kubetwist_server").install_crds(crds)


@pytest.fixture
def kubetwist_function_server(request: Any) -> Iterator[KubeServer]:
    crds = _ini_crds(request.config) + _marked_crds(request.node)
    crds += [os.fspath(p) for p in getattr(request, "param", None) or []]
    yield from _server(request, crds)


@pytest.fixture
def kubetwist_kubeconfig(kubetwist_server: KubeServer) -> str:
    return kubetwist_server.kubeconfig


@pytest.fixture
def kubetwist_client(kubetwist_server: KubeServer) -> Any:
    return kubetwist_server.api_client()
