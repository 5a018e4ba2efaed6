"""
Run the official Python client's own e2e suite (C{kubernetes/e2e_test} of
kubernetes-client/python) against a L{kubetwist.testing.KubeServer}.

    PYTHONPATH=. python tools/run_client_e2e.py EXPORT [pytest args...]

C{EXPORT} is a directory holding C{kubernetes/e2e_test} (an export of that repository at the
installed client's version; it is not part of kubetwist).  The suite runs in a pytest
subprocess with C{KUBECONFIG} naming the fixture server's admin kubeconfig; its package is
grafted onto the installed C{kubernetes} package.  The cases that need a kubelet are
deselected (L{NEEDS_KUBELET}, the reasons in C{docs/testing.md}).  Exit status: pytest's.
"""

from __future__ import annotations

import os
import subprocess
import sys

from kubetwist.testing import KubeServer

#: test id -> why it cannot pass without a kubelet (kubetwist is an API server only).
NEEDS_KUBELET = {
    "test_client.py::TestClient::test_pod_apis":
        "waits for a pod to be Running, then execs into it (pods/exec to a kubelet)",
    "test_client.py::TestClient::test_pod_exec_close_channel":
        "execs into a running pod (pods/exec to a kubelet)",
    "test_client.py::TestClient::test_exit_code":
        "execs into a running pod and reads the exit codes (pods/exec to a kubelet)",
    "test_client.py::TestClient::test_portforward_raw":
        "port-forwards into a running pod (pods/portforward to a kubelet)",
    "test_client.py::TestClient::test_portforward_http":
        "port-forwards into a running pod (pods/portforward to a kubelet)",
    "test_utils.py::TestUtils::test_metrics_utilities_integration":
        "waits for a pod to be Running and reads its metrics (a kubelet and metrics-server)",
}

BOOT = ("import sys, kubernetes; kubernetes.__path__.append(sys.argv[1]); "
        "import pytest; sys.exit(pytest.main(sys.argv[2:]))")


def main(argv: list[str]) -> int:
    export = os.path.abspath(argv[0])
    suite = os.path.join(export, "kubernetes", "e2e_test")
    deselect = [a for test in NEEDS_KUBELET
                for a in ("--deselect", f"kubernetes/e2e_test/{test}")]
    with KubeServer() as server:
        env = dict(os.environ, KUBECONFIG=server.kubeconfig)
        command = [sys.executable, "-c", BOOT, os.path.join(export, "kubernetes"),
                   "-p", "no:cacheprovider", "-rA", *deselect, *argv[1:], suite]
        return subprocess.call(command, env=env, cwd=export)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
