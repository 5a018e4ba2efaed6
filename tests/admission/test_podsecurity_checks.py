# -*- test-case-name: tests.admission.test_podsecurity_checks -*-
"""
Tests for L{kubetwist.admission.plugins.podsecurity.checks}: every baseline and restricted
check of v1.32 with upstream's reason and detail texts, and which checks each level runs at
each version.
"""

from __future__ import annotations

import copy
from typing import Any

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.admission.plugins.podsecurity import checks
from kubetwist.admission.plugins.podsecurity.api import LATEST, LevelVersion, v1
from kubetwist.admission.plugins.podsecurity.checks import (
    DEFAULT_EVALUATOR,
    CheckResult,
    Evaluator,
    aggregate,
)


def restricted_pod(**spec: Any) -> dict:
    """A pod that passes the restricted level at every version (two containers, one init
    container), with C{spec} keys replaced."""
    sc = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    pod = {
        "metadata": {"name": "p"},
        "spec": {
            "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
            "initContainers": [{"name": "i", "image": "x", "securityContext": copy.deepcopy(sc)}],
            "containers": [{"name": "a", "image": "x", "securityContext": copy.deepcopy(sc)},
                           {"name": "b", "image": "x", "securityContext": copy.deepcopy(sc)}],
            "volumes": [{"name": "v", "emptyDir": {}}],
        },
    }
    pod["spec"].update(spec)
    return pod


def container_sc(pod: dict, name: str, **sc: Any) -> dict:
    """Set C{securityContext} fields of the (init/ephemeral) container C{name}."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in pod["spec"].get(key) or []:
            if c["name"] == name:
                c.setdefault("securityContext", {}).update(sc)
    return pod


def evaluate(pod: dict, level: str = "restricted", version: Any = LATEST):
    return aggregate(DEFAULT_EVALUATOR.evaluate_pod(LevelVersion(level, version),
                                                    pod.get("metadata"), pod.get("spec")))


class CheckTestCase(SynchronousTestCase):
    def assertRefused(self, fn, pod: dict, reason: str, detail: str) -> None:
        self.assertEqual(fn(pod.get("metadata") or {}, pod["spec"]),
                         CheckResult(False, reason, detail))

    def assertAllowed(self, fn, pod: dict) -> None:
        self.assertEqual(fn(pod.get("metadata") or {}, pod["spec"]), CheckResult(True))


class BaselineCheckTests(CheckTestCase):
    def test_privileged(self) -> None:
        pod = restricted_pod()
        self.assertAllowed(checks.privileged_1_0, container_sc(pod, "a", privileged=False))
        container_sc(pod, "a", privileged=True)
        self.assertRefused(checks.privileged_1_0, pod, "privileged",
                           'container "a" must not set securityContext.privileged=true')
        container_sc(pod, "i", privileged=True)
        self.assertRefused(checks.privileged_1_0, pod, "privileged",
                           'containers "i", "a" must not set securityContext.privileged=true')

    def test_host_namespaces(self) -> None:
        self.assertAllowed(checks.host_namespaces_1_0, restricted_pod(hostNetwork=False))
        self.assertRefused(checks.host_namespaces_1_0,
                           restricted_pod(hostIPC=True, hostPID=True, hostNetwork=True),
                           "host namespaces", "hostNetwork=true, hostPID=true, hostIPC=true")

    def test_host_path_volumes(self) -> None:
        pod = restricted_pod(volumes=[{"name": "a", "hostPath": {"path": "/"}},
                                      {"name": "b", "emptyDir": {}},
                                      {"name": "c", "hostPath": {"path": "/x"}}])
        self.assertRefused(checks.host_path_volumes_1_0, pod, "hostPath volumes",
                           'volumes "a", "c"')

    def test_host_ports(self) -> None:
        pod = restricted_pod()
        pod["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 0}]
        self.assertAllowed(checks.host_ports_1_0, pod)
        pod["spec"]["containers"][1]["ports"] = [{"containerPort": 80, "hostPort": 20}]
        self.assertRefused(checks.host_ports_1_0, pod, "hostPort",
                           'container "b" uses hostPort 20')
        pod["spec"]["containers"][0]["ports"] = [{"containerPort": 1, "hostPort": 9},
                                                 {"containerPort": 2, "hostPort": 10}]
        self.assertRefused(checks.host_ports_1_0, pod, "hostPort",
                           'containers "a", "b" use hostPorts 10, 20, 9')

    def test_capabilities_baseline(self) -> None:
        pod = restricted_pod()
        container_sc(pod, "a", capabilities={"add": ["CHOWN", "NET_BIND_SERVICE"]})
        self.assertAllowed(checks.capabilities_baseline_1_0, pod)
        container_sc(pod, "a", capabilities={"add": ["FOO", "CHOWN", "BAR"]})
        container_sc(pod, "b", capabilities={"add": ["BAZ", "FOO"]})
        self.assertRefused(
            checks.capabilities_baseline_1_0, pod, "non-default capabilities",
            'containers "a", "b" must not include "BAR", "BAZ", "FOO" in '
            "securityContext.capabilities.add")

    def test_app_armor(self) -> None:
        pod = restricted_pod(securityContext={"appArmorProfile": {"type": "Localhost",
                                                                  "localhostProfile": "x"}})
        pod["metadata"]["annotations"] = {
            "container.apparmor.security.beta.kubernetes.io/a": "runtime/default",
            "container.apparmor.security.beta.kubernetes.io/b": "localhost/foo"}
        self.assertAllowed(checks.app_armor_profile_1_0, pod)
        pod["spec"]["securityContext"]["appArmorProfile"] = {"type": "Unconfined"}
        self.assertRefused(checks.app_armor_profile_1_0, pod, "forbidden AppArmor profile",
                           'pod must not set AppArmor profile type to "Unconfined"')
        container_sc(pod, "b", appArmorProfile={"type": "Unconfined"})
        pod["metadata"]["annotations"] = {
            "container.apparmor.security.beta.kubernetes.io/b": "unconfined",
            "container.apparmor.security.beta.kubernetes.io/a": "bad"}
        self.assertRefused(
            checks.app_armor_profile_1_0, pod, "forbidden AppArmor profiles",
            'pod and container "b" and annotations must not set AppArmor profile type to '
            '"Unconfined", "container.apparmor.security.beta.kubernetes.io/a="bad"", '
            '"container.apparmor.security.beta.kubernetes.io/b="unconfined""')

    def test_se_linux_options(self) -> None:
        pod = restricted_pod(securityContext={"seLinuxOptions": {"type": "container_t",
                                                                 "level": "s0:c1"}})
        self.assertAllowed(checks.se_linux_options_1_0, pod)
        pod["spec"]["securityContext"]["seLinuxOptions"] = {"type": "foo", "user": "u",
                                                            "role": "r"}
        container_sc(pod, "a", seLinuxOptions={"type": "bar"})
        self.assertRefused(
            checks.se_linux_options_1_0, pod, "seLinuxOptions",
            'pod and container "a" set forbidden securityContext.seLinuxOptions: '
            'types "bar", "foo"; user may not be set; role may not be set')
        engine = restricted_pod(securityContext={"seLinuxOptions": {
            "type": "container_engine_t"}})
        self.assertRefused(checks.se_linux_options_1_0, engine, "seLinuxOptions",
                           'pod set forbidden securityContext.seLinuxOptions: type '
                           '"container_engine_t"')
        self.assertAllowed(checks.se_linux_options_1_31, engine)

    def test_proc_mount(self) -> None:
        pod = restricted_pod()
        container_sc(pod, "a", procMount="Default")
        self.assertAllowed(checks.proc_mount_1_0, pod)
        container_sc(pod, "a", procMount="Unmasked")
        container_sc(pod, "b", procMount="other")
        self.assertRefused(checks.proc_mount_1_0, pod, "procMount",
                           'containers "a", "b" must not set securityContext.procMount to '
                           '"Unmasked", "other"')

    def test_seccomp_baseline(self) -> None:
        pod = restricted_pod(securityContext={"seccompProfile": {"type": "Unconfined"}})
        container_sc(pod, "b", seccompProfile={"type": "Localhost", "localhostProfile": "x"})
        self.assertRefused(checks.seccomp_profile_baseline_1_19, pod, "seccompProfile",
                           'pod must not set securityContext.seccompProfile.type to '
                           '"Unconfined"')
        unset = restricted_pod(securityContext={})
        self.assertAllowed(checks.seccomp_profile_baseline_1_19, unset)

    def test_seccomp_annotations_before_1_19(self) -> None:
        pod = restricted_pod()
        pod["metadata"]["annotations"] = {
            "seccomp.security.alpha.kubernetes.io/pod": "unconfined",
            "container.seccomp.security.alpha.kubernetes.io/b": "unknown",
            "container.seccomp.security.alpha.kubernetes.io/a": "docker/default",
            "container.seccomp.security.alpha.kubernetes.io/nope": "unconfined"}
        self.assertRefused(
            checks.seccomp_profile_baseline_1_0, pod, "seccompProfile",
            'forbidden annotations container.seccomp.security.alpha.kubernetes.io/b="unknown",'
            ' seccomp.security.alpha.kubernetes.io/pod="unconfined"')
        # the annotations mean nothing from v1.19 on
        self.assertTrue(evaluate(pod, "baseline", v1(19)).allowed)
        self.assertEqual(evaluate(pod, "baseline", v1(18)).reasons, ["seccompProfile"])

    def test_sysctls(self) -> None:
        pod = restricted_pod(securityContext={"sysctls": [
            {"name": "kernel.shm_rmid_forced", "value": "0"},
            {"name": "net.ipv4.tcp_rmem", "value": "4096 87380 16777216"},
            {"name": "kernel.msgmax", "value": "1"}]})
        self.assertRefused(checks.sysctls_1_32, pod, "forbidden sysctls", "kernel.msgmax")
        self.assertRefused(checks.sysctls_1_29, pod, "forbidden sysctls",
                           "net.ipv4.tcp_rmem, kernel.msgmax")

    def test_windows_host_process(self) -> None:
        pod = restricted_pod(securityContext={"windowsOptions": {"hostProcess": True}})
        container_sc(pod, "a", windowsOptions={"hostProcess": True})
        container_sc(pod, "b", windowsOptions={"hostProcess": False})
        self.assertRefused(checks.windows_host_process_1_0, pod, "hostProcess",
                           'pod and container "a" must not set '
                           "securityContext.windowsOptions.hostProcess=true")


class RestrictedCheckTests(CheckTestCase):
    def test_passes(self) -> None:
        """The base pod passes both levels at every version up to v1.32 and latest."""
        for minor in range(0, 34):
            for level in ("baseline", "restricted"):
                self.assertTrue(evaluate(restricted_pod(), level, v1(minor)).allowed,
                                (level, minor))
        self.assertTrue(evaluate(restricted_pod()).allowed)

    def test_allow_privilege_escalation(self) -> None:
        pod = restricted_pod()
        del pod["spec"]["containers"][0]["securityContext"]["allowPrivilegeEscalation"]
        container_sc(pod, "b", allowPrivilegeEscalation=True)
        self.assertRefused(checks.allow_privilege_escalation_1_8, pod,
                           "allowPrivilegeEscalation != false",
                           'containers "a", "b" must set '
                           "securityContext.allowPrivilegeEscalation=false")

    def test_windows_pods_from_1_25(self) -> None:
        """From v1.25 a pod with C{spec.os.name: windows} needs no allowPrivilegeEscalation,
        capabilities or seccomp profile."""
        pod = restricted_pod(os={"name": "windows"}, securityContext={"runAsNonRoot": True})
        for c in pod["spec"]["containers"] + pod["spec"]["initContainers"]:
            c["securityContext"] = {}
        self.assertTrue(evaluate(pod, "restricted", v1(25)).allowed)
        self.assertEqual(evaluate(pod, "restricted", v1(24)).reasons, [
            "allowPrivilegeEscalation != false", "unrestricted capabilities", "seccompProfile"])

    def test_capabilities_restricted(self) -> None:
        pod = restricted_pod()
        container_sc(pod, "a", capabilities={"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]})
        self.assertAllowed(checks.capabilities_restricted_1_22, pod)
        container_sc(pod, "a", capabilities={"drop": ["NET_RAW"], "add": ["FOO", "CHOWN"]})
        pod["spec"]["containers"][1]["securityContext"] = {}
        container_sc(pod, "i", capabilities={"drop": ["ALL"], "add": ["BAR"]})
        self.assertRefused(
            checks.capabilities_restricted_1_22, pod, "unrestricted capabilities",
            'containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; '
            'containers "i", "a" must not include "BAR", "CHOWN", "FOO" in '
            "securityContext.capabilities.add")

    def test_capabilities_before_1_22(self) -> None:
        """Before v1.22 the restricted level checks capabilities as baseline does."""
        pod = restricted_pod()
        container_sc(pod, "a", capabilities={"add": ["SYS_ADMIN"]})
        self.assertEqual(evaluate(pod, "restricted", v1(21)).forbidden_detail(),
                         'non-default capabilities (container "a" must not include '
                         '"SYS_ADMIN" in securityContext.capabilities.add)')
        self.assertEqual(evaluate(pod, "restricted", v1(22)).reasons,
                         ["unrestricted capabilities"])

    def test_restricted_volumes(self) -> None:
        ok = [{"name": k, k: {}} for k in ("configMap", "csi", "downwardAPI", "emptyDir",
                                           "ephemeral", "persistentVolumeClaim", "projected",
                                           "secret")]
        self.assertAllowed(checks.restricted_volumes_1_0, restricted_pod(volumes=ok))
        pod = restricted_pod(volumes=ok + [{"name": "h", "hostPath": {"path": "/"}},
                                           {"name": "n", "nfs": {"server": "s", "path": "/"}},
                                           {"name": "h2", "hostPath": {"path": "/x"}},
                                           {"name": "i", "image": {"reference": "x"}}])
        self.assertRefused(checks.restricted_volumes_1_0, pod, "restricted volume types",
                           'volumes "h", "n", "h2", "i" use restricted volume types '
                           '"hostPath", "nfs", "unknown"')
        # restrictedVolumes replaces baseline's hostPathVolumes in the restricted level
        self.assertEqual(evaluate(pod).reasons, ["restricted volume types"])
        self.assertEqual(evaluate(pod, "baseline").reasons, ["hostPath volumes"])

    def test_run_as_non_root(self) -> None:
        pod = restricted_pod(securityContext={"seccompProfile": {"type": "RuntimeDefault"}})
        container_sc(pod, "a", runAsNonRoot=True)
        self.assertRefused(checks.run_as_non_root_1_0, pod, "runAsNonRoot != true",
                           'pod or containers "i", "b" must set '
                           "securityContext.runAsNonRoot=true")
        pod["spec"]["securityContext"]["runAsNonRoot"] = False
        container_sc(pod, "b", runAsNonRoot=False)
        self.assertRefused(checks.run_as_non_root_1_0, pod, "runAsNonRoot != true",
                           'pod and container "b" must not set '
                           "securityContext.runAsNonRoot=false")

    def test_run_as_user(self) -> None:
        pod = restricted_pod(securityContext={"runAsNonRoot": True, "runAsUser": 0,
                                              "seccompProfile": {"type": "RuntimeDefault"}})
        container_sc(pod, "a", runAsUser=0)
        container_sc(pod, "b", runAsUser=1000)
        self.assertRefused(checks.run_as_user_1_23, pod, "runAsUser=0",
                           'pod and container "a" must not set runAsUser=0')
        self.assertTrue(evaluate(pod, "restricted", v1(22)).allowed)
        self.assertEqual(evaluate(pod, "restricted", v1(23)).reasons, ["runAsUser=0"])

    def test_seccomp_restricted(self) -> None:
        pod = restricted_pod(securityContext={"runAsNonRoot": True})
        container_sc(pod, "a", seccompProfile={"type": "Localhost", "localhostProfile": "p"})
        self.assertRefused(checks.seccomp_profile_restricted_1_19, pod, "seccompProfile",
                           'pod or containers "i", "b" must set '
                           'securityContext.seccompProfile.type to "RuntimeDefault" or '
                           '"Localhost"')
        container_sc(pod, "b", seccompProfile={"type": "Unconfined"})
        self.assertRefused(checks.seccomp_profile_restricted_1_19, pod, "seccompProfile",
                           'container "b" must not set securityContext.seccompProfile.type to '
                           '"Unconfined"')
        self.assertEqual(evaluate(pod, "restricted", v1(18)).reasons, [])

    def test_ephemeral_containers(self) -> None:
        """Ephemeral containers are checked after the others."""
        pod = restricted_pod(ephemeralContainers=[{"name": "debug", "image": "busybox",
                                                   "targetContainerName": "a"}])
        self.assertEqual(evaluate(pod).forbidden_detail(), (
            'allowPrivilegeEscalation != false (container "debug" must set '
            "securityContext.allowPrivilegeEscalation=false), unrestricted capabilities "
            '(container "debug" must set securityContext.capabilities.drop=["ALL"])'))


class EvaluatorTests(SynchronousTestCase):
    def test_order(self) -> None:
        """Baseline checks first, then restricted ones, each sorted by id: upstream's message
        for a privileged container."""
        pod = {"metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "c", "image": "busybox", "securityContext": {"privileged": True}}]}}
        self.assertEqual(evaluate(pod).forbidden_detail(), (
            'privileged (container "c" must not set securityContext.privileged=true), '
            'allowPrivilegeEscalation != false (container "c" must set '
            'securityContext.allowPrivilegeEscalation=false), unrestricted capabilities '
            '(container "c" must set securityContext.capabilities.drop=["ALL"]), '
            'runAsNonRoot != true (pod or container "c" must set '
            'securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set '
            'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")'))
        self.assertEqual(evaluate(pod).forbidden_reason(),
                         "privileged, allowPrivilegeEscalation != false, unrestricted "
                         "capabilities, runAsNonRoot != true, seccompProfile")
        self.assertEqual(evaluate(pod, "baseline").forbidden_detail(),
                         'privileged (container "c" must not set '
                         'securityContext.privileged=true)')

    def test_privileged_level(self) -> None:
        """The privileged level runs nothing."""
        pod = restricted_pod(hostNetwork=True)
        self.assertEqual(DEFAULT_EVALUATOR.evaluate_pod(
            LevelVersion("privileged", LATEST), pod["metadata"], pod["spec"]), [])

    def test_versions(self) -> None:
        """How many checks each level runs at each version; newer versions than v1.32 and
        latest run v1.32's."""
        def count(level: str, version: Any) -> int:
            return len(DEFAULT_EVALUATOR.checks_for(LevelVersion(level, version)))

        self.assertEqual(DEFAULT_EVALUATOR.max_version, v1(32))
        self.assertEqual(count("baseline", v1(0)), 11)
        self.assertEqual(count("baseline", LATEST), 11)
        # v1.0: baseline minus hostPathVolumes, plus restrictedVolumes and runAsNonRoot
        self.assertEqual(count("restricted", v1(0)), 12)
        self.assertEqual(count("restricted", v1(8)), 13)  # allowPrivilegeEscalation
        self.assertEqual(count("restricted", v1(19)), 13)  # seccomp replaces seccomp
        self.assertEqual(count("restricted", v1(23)), 14)  # runAsUser
        self.assertEqual(count("restricted", LATEST), 14)
        self.assertEqual(DEFAULT_EVALUATOR.checks_for(LevelVersion("restricted", v1(40))),
                         DEFAULT_EVALUATOR.checks_for(LevelVersion("restricted", LATEST)))
        self.assertIn(checks.sysctls_1_32,
                      DEFAULT_EVALUATOR.checks_for(LevelVersion("baseline", LATEST)))
        self.assertIn(checks.sysctls_1_27,
                      DEFAULT_EVALUATOR.checks_for(LevelVersion("baseline", v1(28))))

    def test_custom_checks(self) -> None:
        """An evaluator over other checks computes its own newest version."""
        e = Evaluator([checks.Check("x", "baseline", (
            checks.VersionedCheck(v1(3), lambda m, s: CheckResult(False, "", "")),))])
        self.assertEqual(e.max_version, v1(3))
        result = aggregate(e.evaluate_pod(LevelVersion("restricted", LATEST), {}, {}))
        self.assertEqual(result.forbidden_detail(), "unknown forbidden reason")
        self.assertEqual(e.evaluate_pod(LevelVersion("baseline", v1(2)), {}, {}), [])
