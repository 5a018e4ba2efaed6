# -*- test-case-name: tests.integration.test_admission -*-
"""
The built-in admission plugins and C{--admission-control-config-file} with the real
C{kubectl} against a real C{twistd -n kubeapi}: a LimitRange defaults a pod's resources and
refuses one above its maximum with upstream's message; a configuration file whose plugin file
cannot be opened stops the start with upstream's text.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import (
    KubeAPIProcess,
    ServerFixture,
    ServerTestMixin,
    class_units,
    free_port,
    venv_binary,
)

CONFIG = """\
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  path: podsecurity.yaml
- name: NoSuchPlugin
  configuration: {kind: Anything}
"""


class LimitRangeTests(ServerTestMixin, SynchronousTestCase):
    """One server started with C{--admission-control-config-file} (a plugin file by relative
    path, an entry for a plugin kube-apiserver does not know) for the class."""

    @classmethod
    def start_fixture(cls) -> ServerFixture:
        server = KubeAPIProcess()
        conf_dir = os.path.join(server.work_dir, "conf")
        os.makedirs(conf_dir)
        with open(os.path.join(conf_dir, "admission.yaml"), "w") as f:
            f.write(CONFIG)
        with open(os.path.join(conf_dir, "podsecurity.yaml"), "w") as f:
            f.write("apiVersion: pod-security.admission.config.k8s.io/v1\n"
                    "kind: PodSecurityConfiguration\ndefaults: {enforce: privileged}\n")
        server.extra_args += [
            f"--admission-control-config-file={os.path.join(conf_dir, 'admission.yaml')}"]
        try:
            server.start()
        except BaseException:
            server.cleanup()
            raise
        return ServerFixture(server, None)

    def test_limit_range_defaults_and_max(self) -> None:
        ns = self.namespace()
        self.server.kubectl("create", "-n", ns, "-f", "-", input="""
apiVersion: v1
kind: LimitRange
metadata: {name: limits}
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 256Mi}
    defaultRequest: {cpu: 100m, memory: 128Mi}
    max: {cpu: "1"}
""")
        self.server.kubectl("run", "web", "-n", ns, "--image=nginx", "--restart=Never")
        pod = self.get_json(ns, "pod", "web")
        self.assertEqual(pod["spec"]["containers"][0]["resources"], {
            "limits": {"cpu": "500m", "memory": "256Mi"},
            "requests": {"cpu": "100m", "memory": "128Mi"}})
        self.assertEqual(pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
                         "LimitRanger plugin set: cpu, memory request for container web; cpu, "
                         "memory limit for container web")
        r = self.server.kubectl("run", "big", "-n", ns, "--image=nginx", "--restart=Never",
                                "--overrides", '{"spec": {"containers": [{"name": "big", '
                                '"image": "nginx", "resources": {"limits": {"cpu": "2"}}}]}}',
                                check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(r.stderr.strip(), 'Error from server (Forbidden): pods "big" is '
                         'forbidden: maximum cpu usage per Container is 1, but limit is 2')


class BadConfigurationTests(SynchronousTestCase):
    def test_unreadable_plugin_file(self) -> None:
        """An enabled plugin's configuration file that cannot be opened stops the start with
        upstream's text, and no traceback."""
        work = tempfile.mkdtemp(prefix="kubetwist-it-adm-")
        self.addCleanup(shutil.rmtree, work, True)
        with open(os.path.join(work, "admission.yaml"), "w") as f:
            f.write("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n"
                    "plugins:\n- name: LimitRanger\n  path: missing.yaml\n")
        result = subprocess.run(
            [venv_binary("twistd"), "-n", "--pidfile=", "kubeapi", "--data-dir=data",
             f"--secure-port={free_port()}", "--bind-address=127.0.0.1",
             "--admission-control-config-file=admission.yaml"],
            check=False, capture_output=True, text=True, cwd=work, timeout=60,
            stdin=subprocess.DEVNULL)
        output = result.stdout + result.stderr
        self.assertNotEqual(result.returncode, 0, output)
        self.assertNotIn("Traceback", output)
        # a relative path is resolved against the configuration file's directory (here the
        # working directory), as upstream's makeAbs does
        missing = os.path.join(os.path.realpath(work), "missing.yaml")
        self.assertIn(f"Couldn't open admission plugin configuration {missing}: "
                      f'&fs.PathError{{Op:"open", Path:"{missing}", Err:0x2}}', output)


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
