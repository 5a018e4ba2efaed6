# -*- test-case-name: tests.admission.test_podsecurity -*-
"""
Tests for the C{PodSecurity} admission plugin (L{kubetwist.admission.plugins.podsecurity}):
levels and versions, namespace policies from labels and defaults, the
C{PodSecurityConfiguration}, exemptions, pods, workload templates and namespaces, the audit
annotations and warnings; and the plugin in the whole server.
"""

from __future__ import annotations

from typing import Any, Optional

from twisted.internet.defer import Deferred, ensureDeferred
from twisted.trial.unittest import SynchronousTestCase
from zope.interface.verify import verifyObject

from kubetwist.admission import registry
from kubetwist.admission.interfaces import (
    Attributes,
    GroupVersionKind,
    GroupVersionResource,
    IValidationInterface,
)
from kubetwist.admission.plugins.podsecurity import (
    ConfigurationError,
    PodSecurity,
    api,
    load_configuration,
)
from kubetwist.admission.plugins.podsecurity.admission import extract_pod_spec
from kubetwist.authentication.user import UserInfo
from kubetwist.runtime import errors
from tests.admission.test_podsecurity_checks import restricted_pod
from tests.support import KubeTestCase

R = "pod-security.kubernetes.io/"


class LevelVersionTests(SynchronousTestCase):
    def test_parse_level(self) -> None:
        for level in ("privileged", "baseline", "restricted"):
            self.assertEqual(api.parse_level(level), level)
        for bad in ("Restricted", "", "restricted "):
            e = self.assertRaises(api.LevelError, api.parse_level, bad)
            self.assertEqual(str(e), "must be one of privileged, baseline, restricted")

    def test_parse_version(self) -> None:
        self.assertEqual(api.parse_version("latest"), api.LATEST)
        self.assertEqual(api.parse_version("v1.0"), api.v1(0))
        self.assertEqual(api.parse_version("v1.32"), api.v1(32))
        self.assertEqual(str(api.parse_version("v1.99")), "v1.99")
        for bad in ("v1.022", "1.30", "v2.0", "v1.", "Latest", "v1.3\n", "v1.99999999999999999999"):
            e = self.assertRaises(api.LevelError, api.parse_version, bad)
            self.assertEqual(str(e), 'must be "latest" or "v1.x"')

    def test_older(self) -> None:
        self.assertTrue(api.v1(9).older(api.v1(10)))
        self.assertFalse(api.v1(10).older(api.v1(10)))
        self.assertTrue(api.v1(99).older(api.LATEST))
        self.assertFalse(api.LATEST.older(api.v1(99)))
        self.assertFalse(api.LATEST.older(api.LATEST))

    def test_compare_levels(self) -> None:
        self.assertEqual(api.compare_levels("restricted", "baseline"), 1)
        self.assertEqual(api.compare_levels("baseline", "restricted"), -1)
        self.assertEqual(api.compare_levels("baseline", "privileged"), 1)
        self.assertEqual(api.compare_levels("privileged", "privileged"), 0)


def _lv(text: str) -> api.LevelVersion:
    level, version = text.split(":")
    return api.LevelVersion(level, api.parse_version(version))


class PolicyToEvaluateTests(SynchronousTestCase):
    defaults = api.PRIVILEGED_POLICY

    def policy(self, labels: Optional[dict], defaults: Optional[api.Policy] = None):
        p, errs = api.policy_to_evaluate(labels, defaults or self.defaults)
        return (str(p.enforce), str(p.audit), str(p.warn)), [e.error() for e in errs]

    def test_no_labels(self) -> None:
        self.assertEqual(self.policy(None), (("privileged:latest",) * 3, []))
        self.assertEqual(self.policy({"app": "x"}), (("privileged:latest",) * 3, []))

    def test_warn_follows_stricter_enforce(self) -> None:
        """An explicit enforce level stricter than warn sets warn too (with enforce's version
        when warn has none)."""
        self.assertEqual(self.policy({R + "enforce": "baseline", R + "enforce-version": "v1.20"}),
                         (("baseline:v1.20", "privileged:latest", "baseline:v1.20"), []))
        self.assertEqual(self.policy({R + "enforce": "restricted",
                                      R + "warn-version": "v1.25"}),
                         (("restricted:latest", "privileged:latest", "restricted:v1.25"), []))
        self.assertEqual(self.policy({R + "enforce": "restricted", R + "warn": "baseline"}),
                         (("restricted:latest", "privileged:latest", "baseline:latest"), []))
        # a version label alone does not
        defaults = api.Policy(_lv("baseline:latest"), _lv("privileged:latest"),
                              _lv("privileged:latest"))
        self.assertEqual(self.policy({R + "enforce-version": "v1.2"}, defaults),
                         (("baseline:v1.2", "privileged:latest", "privileged:latest"), []))

    def test_errors(self) -> None:
        """A bad enforce level counts as restricted, bad audit and warn levels as privileged,
        a bad version as latest; one error per label."""
        policy, errs = self.policy({R + "enforce": "x", R + "audit": "y", R + "warn": "z",
                                    R + "audit-version": "v9"})
        self.assertEqual(policy, ("restricted:latest", "privileged:latest", "privileged:latest"))
        self.assertEqual(errs, [
            'metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "x": must be '
            "one of privileged, baseline, restricted",
            'metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: "y": must be '
            "one of privileged, baseline, restricted",
            'metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: "v9": '
            'must be "latest" or "v1.x"',
            'metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "z": must be '
            "one of privileged, baseline, restricted"])


class ConfigurationTests(SynchronousTestCase):
    def config(self, version: str = "v1", **body: Any) -> dict:
        return {"apiVersion": f"pod-security.admission.config.k8s.io/{version}",
                "kind": "PodSecurityConfiguration", **body}

    def test_defaults(self) -> None:
        """No configuration: privileged:latest for every mode, no exemptions."""
        for raw in (None, {}, "", b""):
            c = load_configuration(raw)
            self.assertEqual(c.policy, api.PRIVILEGED_POLICY)
            self.assertEqual((c.usernames, c.namespaces, c.runtime_classes), ([], [], []))

    def test_versions(self) -> None:
        """v1, v1beta1 and v1alpha1 decode; unset defaults are privileged / latest."""
        for version in ("v1", "v1beta1", "v1alpha1"):
            c = load_configuration(self.config(version, defaults={
                "enforce": "baseline", "warn": "restricted", "warn-version": "v1.30"},
                exemptions={"usernames": ["admin"], "namespaces": ["kube-system"],
                            "runtimeClasses": ["kata"]}))
            self.assertEqual(c.policy, api.Policy(_lv("baseline:latest"),
                                                  _lv("privileged:latest"),
                                                  _lv("restricted:v1.30")))
            self.assertEqual((c.usernames, c.namespaces, c.runtime_classes),
                             (["admin"], ["kube-system"], ["kata"]))

    def test_text(self) -> None:
        """The configuration may come as YAML text."""
        c = load_configuration(
            "apiVersion: pod-security.admission.config.k8s.io/v1beta1\n"
            "kind: PodSecurityConfiguration\ndefaults: {enforce: restricted}\n")
        self.assertEqual(c.policy.enforce, _lv("restricted:latest"))

    def assertError(self, raw: Any, message: str) -> None:
        e = self.assertRaises(ConfigurationError, load_configuration, raw)
        self.assertEqual(str(e), message)

    def test_bad_levels(self) -> None:
        """Levels and versions: upstream's C{CompleteConfiguration} error."""
        self.assertError(self.config(defaults={"enforce": "strict"}),
                         "PodSecurity configuration error: enforce: must be one of privileged, "
                         "baseline, restricted")
        self.assertError(self.config(defaults={"warn": "x", "audit-version": "1"}),
                         "PodSecurity configuration error: [audit-version: must be \"latest\" "
                         "or \"v1.x\", warn: must be one of privileged, baseline, restricted]")

    def test_bad_exemptions(self) -> None:
        """Exemptions: upstream's validation errors."""
        self.assertError(self.config(exemptions={
            "namespaces": ["ok", "Bad", "ok"], "usernames": [""],
            "runtimeClasses": ["a..b"]}),
            'PodSecurity invalid: [exemptions.namespaces[1]: Invalid value: "Bad": a lowercase '
            "RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
            "must start and end with an alphanumeric character (e.g. 'my-name',  or "
            "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), "
            'exemptions.namespaces[2]: Duplicate value: "ok", exemptions.runtimeClasses[0]: '
            'Invalid value: "a..b": a lowercase RFC 1123 subdomain must consist of lower case '
            "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
            "character (e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), "
            'exemptions.usernames[0]: Invalid value: "": username must not be empty]')

    def test_plugin_error(self) -> None:
        """The text kube-apiserver v1.32 stops with (recorded, after C{failed to apply
        admission: }): decoding errors and initialisation errors differ."""
        e = self.assertRaises(ConfigurationError, load_configuration,
                              self.config(defaults={"enforce": "baseline", "level": "x"}))
        self.assertEqual(e.plugin_error(), 'couldn\'t init admission plugin "PodSecurity": '
                         'strict decoding error: unknown field "defaults.level"')
        e = self.assertRaises(ConfigurationError, load_configuration,
                              self.config(defaults={"enforce": "strict"},
                                          exemptions={"namespaces": ["Bad"]}))
        self.assertEqual(e.plugin_error(), 'failed to initialize admission plugin '
                         '"PodSecurity": PodSecurity configuration error: enforce: must be one '
                         "of privileged, baseline, restricted")
        e = self.assertRaises(ConfigurationError, load_configuration,
                              self.config(exemptions={"namespaces": ["Bad"]}))
        self.assertTrue(e.plugin_error().startswith(
            'failed to initialize admission plugin "PodSecurity": PodSecurity invalid: '
            'exemptions.namespaces[0]: Invalid value: "Bad": a lowercase RFC 1123 label'))

    def test_strict_decoding(self) -> None:
        self.assertError(self.config(defaults={"enforce": "baseline", "level": "x"}, extra=1),
                         'strict decoding error: unknown field "extra", unknown field '
                         '"defaults.level"')
        self.assertError(self.config(defaults={"enforce": 1}),
                         "json: cannot unmarshal number into Go struct field "
                         "PodSecurityDefaults.defaults.enforce of type string")
        self.assertError(self.config(exemptions={"usernames": "admin"}),
                         "json: cannot unmarshal string into Go struct field "
                         "PodSecurityExemptions.exemptions.usernames of type []string")

    def test_kind(self) -> None:
        self.assertError({"apiVersion": "pod-security.admission.config.k8s.io/v2",
                          "kind": "PodSecurityConfiguration"},
                         'no kind "PodSecurityConfiguration" is registered for version '
                         '"pod-security.admission.config.k8s.io/v2" in scheme '
                         '"pkg/runtime/scheme.go:100"')
        e = self.assertRaises(ConfigurationError, load_configuration, {"defaults": {}})
        self.assertTrue(str(e).startswith("Object 'Kind' is missing in "))

    def test_plugin_from_registry(self) -> None:
        """The registry builds the plugin from the AdmissionConfiguration's entry; a bad one
        stops the build."""
        ctx = registry.PluginContext(configs={"PodSecurity": self.config(
            defaults={"enforce": "baseline"})})
        plugin = registry.PLUGINS["PodSecurity"](ctx)
        verifyObject(IValidationInterface, plugin)
        self.assertEqual(plugin.default_policy.enforce, _lv("baseline:latest"))
        self.assertIn("PodSecurity", registry.default_enabled_plugins())
        bad = registry.PluginContext(configs={"PodSecurity": self.config(
            defaults={"enforce": "x"})})
        self.assertRaises(ConfigurationError, registry.PLUGINS["PodSecurity"], bad)


# -- the plugin on its own ---------------------------------------------------------------------

class _Namespaces:
    """A namespaces storage: C{get(namespace, name, rv)}."""

    def __init__(self, **labels: dict) -> None:
        self.items = {name: {"metadata": {"name": name, "labels": lab}}
                      for name, lab in labels.items()}
        self.reads: list[tuple[str, str]] = []

    async def get(self, namespace: str, name: str, rv: str = "") -> dict:
        self.reads.append((name, rv))
        if name == "broken":
            raise errors.new_internal_error("etcd is down")
        if name not in self.items:
            raise errors.new_not_found("", "namespaces", name)
        return self.items[name]


_GVK = {"pods": ("", "v1", "Pod"), "namespaces": ("", "v1", "Namespace"),
        "deployments": ("apps", "v1", "Deployment"), "cronjobs": ("batch", "v1", "CronJob"),
        "replicationcontrollers": ("", "v1", "ReplicationController"),
        "podtemplates": ("", "v1", "PodTemplate"), "configmaps": ("", "v1", "ConfigMap")}


def attrs(resource: str, obj: dict, operation: str = "CREATE", namespace: str = "ns",
          old: Optional[dict] = None, subresource: str = "", user: str = "jane") -> Attributes:
    group, version, kind = _GVK[resource]
    return Attributes(operation, GroupVersionKind(group, version, kind),
                      GroupVersionResource(group, version, resource), subresource,
                      namespace, (obj.get("metadata") or {}).get("name", ""), obj, old,
                      user=UserInfo(user))


def privileged_pod(name: str = "p", **meta: Any) -> dict:
    return {"metadata": {"name": name, **meta}, "spec": {"containers": [
        {"name": "c", "image": "busybox", "securityContext": {"privileged": True}}]}}


def deployment(pod: dict) -> dict:
    return {"metadata": {"name": "d"}, "spec": {"template": {"metadata": pod["metadata"],
                                                             "spec": pod["spec"]}}}


class PluginTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.namespaces = _Namespaces(
            ns={R + "enforce": "baseline", R + "audit": "restricted", R + "warn": "restricted",
                R + "warn-version": "v1.22"},
            free={}, strict={R + "enforce": "restricted"},
            audited={R + "audit": "baseline"},
            invalid={R + "enforce": "bogus", R + "warn": "nope"})
        self.pods: list[dict] = []

        async def list_pods() -> list[dict]:
            return list(self.pods)

        self.plugin = PodSecurity({
            "apiVersion": "pod-security.admission.config.k8s.io/v1",
            "kind": "PodSecurityConfiguration",
            "exemptions": {"usernames": ["system:serviceaccount:kube-system:replicaset-ctl"],
                           "namespaces": ["kube-system"], "runtimeClasses": ["kata"]}},
            self.namespaces, list_pods)

    def check(self, a: Attributes) -> Optional[errors.StatusError]:
        """Validate; the StatusError raised, or None."""
        d: Deferred = ensureDeferred(self.plugin.validate(a))
        failures: list = []
        d.addErrback(lambda f: failures.append(f.trap(errors.StatusError) and f.value))
        self.successResultOf(d)
        return failures[0] if failures else None

    def test_handles(self) -> None:
        verifyObject(IValidationInterface, self.plugin)
        self.assertEqual([op for op in ("CREATE", "UPDATE", "DELETE", "CONNECT")
                          if self.plugin.handles(op)], ["CREATE", "UPDATE"])

    def test_pod_refused(self) -> None:
        """The enforce level refuses with upstream's 403; no warning then, the audit
        annotations all the same."""
        a = attrs("pods", privileged_pod())
        e = self.check(a)
        self.assertEqual(e.status, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": 'pods "p" is forbidden: violates PodSecurity "baseline:latest": '
                       'privileged (container "c" must not set securityContext.privileged=true)',
            "reason": "Forbidden", "details": {"name": "p", "kind": "pods"}, "code": 403})
        self.assertEqual(a.warnings, [])
        self.assertEqual(a.annotations[R + "enforce-policy"], "baseline:latest")
        self.assertTrue(a.annotations[R + "audit-violations"].startswith(
            'would violate PodSecurity "restricted:latest": privileged (container "c" must '
            "not set securityContext.privileged=true), allowPrivilegeEscalation != false"))

    def test_pod_warned(self) -> None:
        """Allowed by enforce: warn's level and version give the warning."""
        pod = restricted_pod()
        pod["spec"]["containers"][0]["securityContext"]["runAsUser"] = 0
        pod["spec"]["securityContext"]["sysctls"] = [{"name": "net.ipv4.tcp_rmem", "value": "1"}]
        a = attrs("pods", pod, namespace="ns")
        self.assertIsNone(self.check(a))
        self.assertEqual(a.warnings, [
            'would violate PodSecurity "restricted:v1.22": forbidden sysctls '
            "(net.ipv4.tcp_rmem)"])
        self.assertEqual(a.annotations[R + "audit-violations"],
                         'would violate PodSecurity "restricted:latest": runAsUser=0 '
                         '(container "a" must not set runAsUser=0)')

    def test_privileged_namespace(self) -> None:
        a = attrs("pods", privileged_pod(), namespace="free")
        self.assertIsNone(self.check(a))
        self.assertEqual(a.annotations, {R + "enforce-policy": "privileged:latest"})
        self.assertEqual(a.warnings, [])

    def test_audit_only(self) -> None:
        a = attrs("pods", privileged_pod(), namespace="audited")
        self.assertIsNone(self.check(a))
        self.assertEqual(a.annotations, {
            R + "enforce-policy": "privileged:latest",
            R + "audit-violations": 'would violate PodSecurity "baseline:latest": privileged '
                                    '(container "c" must not set '
                                    "securityContext.privileged=true)"})

    def test_exemptions(self) -> None:
        """Exempt namespaces, users and runtime classes pass, annotated with the reason."""
        a = attrs("pods", privileged_pod(), namespace="kube-system")
        self.assertIsNone(self.check(a))
        self.assertEqual(a.annotations, {R + "exempt": "namespace"})
        a = attrs("pods", privileged_pod(), namespace="strict",
                  user="system:serviceaccount:kube-system:replicaset-ctl")
        self.assertIsNone(self.check(a))
        self.assertEqual(a.annotations, {R + "exempt": "user"})
        pod = privileged_pod()
        pod["spec"]["runtimeClassName"] = "kata"
        a = attrs("pods", pod, namespace="strict")
        self.assertIsNone(self.check(a))
        self.assertEqual(a.annotations, {R + "exempt": "runtimeClass"})
        a = attrs("deployments", deployment(pod), namespace="strict")
        self.assertIsNone(self.check(a))
        self.assertEqual(a.annotations, {R + "exempt": "runtimeClass"})
        pod["spec"]["runtimeClassName"] = "other"
        self.assertIsNotNone(self.check(attrs("pods", pod, namespace="strict")))

    def test_invalid_labels_of_the_pods_namespace(self) -> None:
        """Labels that do not parse: enforce counts as restricted, and the error is an audit
        annotation."""
        a = attrs("pods", restricted_pod(), namespace="invalid")
        self.assertIsNone(self.check(a))
        self.assertEqual(a.annotations[R + "error"], (
            "Failed to parse policy: [metadata.labels[pod-security.kubernetes.io/enforce]: "
            'Invalid value: "bogus": must be one of privileged, baseline, restricted, '
            'metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "nope": must be '
            "one of privileged, baseline, restricted]"))
        self.assertEqual(a.annotations[R + "enforce-policy"], "restricted:latest")
        self.assertIsNotNone(self.check(attrs("pods", privileged_pod(), namespace="invalid")))

    def test_namespace_lookup(self) -> None:
        """The namespace is read from the cache (rv 0) and then live; a failure is 500 for
        pods and an audit annotation for workloads."""
        self.check(attrs("pods", restricted_pod(), namespace="free"))
        self.assertEqual(self.namespaces.reads, [("free", "0")])
        a = attrs("pods", privileged_pod(), namespace="broken")
        e = self.check(a)
        self.assertEqual((e.code, e.reason, e.message), (
            500, "InternalError", 'Internal error occurred: failed to lookup namespace "broken"'))
        self.assertEqual(a.annotations[R + "error"],
                         'Internal error occurred: failed to lookup namespace "broken": '
                         "Internal error occurred: etcd is down")
        a = attrs("deployments", deployment(privileged_pod()), namespace="broken")
        self.assertIsNone(self.check(a))
        self.assertEqual(a.annotations, {R + "error": (
            'failed to lookup namespace "broken": Internal error occurred: etcd is down')})

    def test_pod_updates(self) -> None:
        """Updates that change no image and add no container are not evaluated."""
        old = privileged_pod()
        new = privileged_pod(labels={"a": "b"})
        a = attrs("pods", new, "UPDATE", "strict", old)
        self.assertIsNone(self.check(a))
        self.assertEqual(a.annotations, {})
        new["spec"]["containers"][0]["image"] = "busybox:2"
        self.assertIsNotNone(self.check(attrs("pods", new, "UPDATE", "strict", old)))
        new = privileged_pod()
        new["spec"]["initContainers"] = [{"name": "i", "image": "x"}]
        self.assertIsNotNone(self.check(attrs("pods", new, "UPDATE", "strict", old)))

    def test_ephemeral_containers(self) -> None:
        """Adding an ephemeral container (the C{ephemeralcontainers} subresource) is
        evaluated; an unchanged one is not."""
        old = restricted_pod()
        new = restricted_pod(ephemeralContainers=[{"name": "debug", "image": "busybox"}])
        e = self.check(attrs("pods", new, "UPDATE", "strict", old, "ephemeralcontainers"))
        self.assertEqual(e.message, (
            'pods "p" is forbidden: violates PodSecurity "restricted:latest": '
            'allowPrivilegeEscalation != false (container "debug" must set '
            "securityContext.allowPrivilegeEscalation=false), unrestricted capabilities "
            '(container "debug" must set securityContext.capabilities.drop=["ALL"])'))
        self.assertIsNone(self.check(attrs("pods", new, "UPDATE", "strict", new,
                                         "ephemeralcontainers")))

    def test_ignored_subresources(self) -> None:
        for sub in ("status", "binding", "eviction", "exec", "attach", "log", "portforward",
                    "proxy"):
            a = attrs("pods", privileged_pod(), "UPDATE", "strict", restricted_pod(), sub)
            self.assertIsNone(self.check(a), sub)
        a = attrs("deployments", deployment(privileged_pod()), "UPDATE", "strict",
                  subresource="scale")
        self.assertIsNone(self.check(a))
        self.assertEqual(a.warnings, [])

    def test_workloads_warn_only(self) -> None:
        """Pod templates are never refused: warn and audit only."""
        pod = privileged_pod()
        for resource, obj in (
                ("deployments", deployment(pod)),
                ("cronjobs", {"metadata": {"name": "cj"}, "spec": {"jobTemplate": {"spec": {
                    "template": {"metadata": {}, "spec": pod["spec"]}}}}}),
                ("replicationcontrollers", {"metadata": {"name": "rc"},
                                            "spec": {"template": deployment(pod)["spec"][
                                                "template"]}}),
                ("podtemplates", {"metadata": {"name": "pt"},
                                  "template": {"spec": pod["spec"]}})):
            a = attrs(resource, obj, namespace="strict")
            self.assertIsNone(self.check(a), resource)
            self.assertEqual(len(a.warnings), 1, resource)
            self.assertTrue(a.warnings[0].startswith(
                'would violate PodSecurity "restricted:latest": privileged (container "c" '), a)
            self.assertNotIn(R + "enforce-policy", a.annotations)
        # a ReplicationController without a template has nothing to check
        a = attrs("replicationcontrollers", {"metadata": {"name": "rc"}, "spec": {}},
                  namespace="strict")
        self.assertIsNone(self.check(a))
        self.assertEqual((a.warnings, a.annotations), ([], {}))
        # warn and audit privileged: not even read
        a = attrs("deployments", deployment(pod), namespace="free")
        self.assertIsNone(self.check(a))
        self.assertEqual((a.warnings, a.annotations), ([], {}))

    def test_other_resources(self) -> None:
        a = attrs("configmaps", {"metadata": {"name": "c"}}, namespace="strict")
        self.assertIsNone(self.check(a))
        self.assertEqual(self.namespaces.reads, [])

    def test_extract_pod_spec(self) -> None:
        self.assertEqual(extract_pod_spec("apps", "statefulsets", {}), ({}, {}))
        self.assertEqual(extract_pod_spec("", "replicationcontrollers", {"spec": {}}),
                         (None, None))
        self.assertEqual(extract_pod_spec("batch", "jobs", {"spec": {"template": {
            "metadata": {"labels": {"a": "b"}}, "spec": {"hostPID": True}}}}),
            ({"labels": {"a": "b"}}, {"hostPID": True}))

    # -- namespaces ----------------------------------------------------------------------

    def ns(self, name: str, labels: Optional[dict] = None) -> dict:
        return {"metadata": {"name": name, "labels": labels or {}}}

    def test_namespace_create(self) -> None:
        e = self.check(attrs("namespaces", self.ns("x", {R + "enforce": "strict"}),
                           namespace=""))
        self.assertEqual(e.status["message"], (
            'Namespace "x" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: '
            'Invalid value: "strict": must be one of privileged, baseline, restricted'))
        self.assertEqual(e.status["details"], {"name": "x", "kind": "Namespace", "causes": [{
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "strict": must be one of privileged, baseline, '
                       "restricted",
            "field": "metadata.labels[pod-security.kubernetes.io/enforce]"}]})
        self.assertIsNone(self.check(attrs("namespaces", self.ns("x", {R + "enforce": "baseline"}),
                                         namespace="")))

    def test_namespace_update_keeps_invalid_labels(self) -> None:
        """Labels that were already invalid in the same way may stay."""
        old = self.ns("x", {R + "enforce": "strict"})
        new = self.ns("x", {R + "enforce": "strict", "other": "label"})
        self.assertIsNone(self.check(attrs("namespaces", new, "UPDATE", "x", old)))
        new = self.ns("x", {R + "enforce": "stricter"})
        self.assertEqual(self.check(attrs("namespaces", new, "UPDATE", "x", old)).code, 422)

    def test_exempt_namespace_warning(self) -> None:
        new = self.ns("kube-system", {R + "enforce": "baseline", R + "warn-version": "v1.30",
                                      R + "audit": "privileged"})
        a = attrs("namespaces", new, namespace="")
        self.assertIsNone(self.check(a))
        self.assertEqual(a.warnings, [
            'namespace "kube-system" is exempt from Pod Security, and the policy '
            "(enforce=baseline:latest, warn=baseline:v1.30) will be ignored"])
        a = attrs("namespaces", new, "UPDATE", "kube-system", self.ns("kube-system"))
        self.assertIsNone(self.check(a))
        self.assertEqual(len(a.warnings), 1)
        a = attrs("namespaces", self.ns("kube-system", {R + "warn": "privileged"}), namespace="")
        self.assertIsNone(self.check(a))
        self.assertEqual(a.warnings, [])

    def test_namespace_update_checks_pods(self) -> None:
        """A stricter enforce level warns about the existing pods that violate it, grouped by
        reasons, one pod per controller first, exempt runtime classes left out."""
        owner = {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                      "name": "rs", "uid": "u1", "controller": True}]}
        kata = privileged_pod("zz-kata", namespace="x")
        kata["spec"]["runtimeClassName"] = "kata"
        host = restricted_pod()
        host["metadata"] = {"name": "host", "namespace": "x"}
        host["spec"]["hostPID"] = True
        self.pods = [privileged_pod("b", namespace="x"), privileged_pod("a", namespace="x"),
                     privileged_pod("r1", namespace="x", **owner),
                     privileged_pod("r2", namespace="x", **owner), kata, host,
                     privileged_pod("elsewhere", namespace="y"),
                     restricted_pod()]
        old = self.ns("x", {})
        new = self.ns("x", {R + "enforce": "baseline"})
        a = attrs("namespaces", new, "UPDATE", "x", old)
        self.assertIsNone(self.check(a))
        self.assertEqual(a.warnings, [
            'existing pods in namespace "x" violate the new PodSecurity enforce level '
            '"baseline:latest"',
            "a (and 3 other pods): privileged",
            "host: host namespaces"])
        # looser, equal, privileged: no check
        for labels_old, labels_new in (
                ({R + "enforce": "restricted"}, {R + "enforce": "baseline"}),
                ({R + "enforce": "baseline"}, {R + "enforce": "baseline", "x": "y"}),
                ({R + "enforce": "baseline"}, {R + "enforce": "privileged"})):
            a = attrs("namespaces", self.ns("x", labels_new), "UPDATE", "x",
                      self.ns("x", labels_old))
            self.assertIsNone(self.check(a))
            self.assertEqual(a.warnings, [])
        # another version is checked even when looser
        a = attrs("namespaces", self.ns("x", {R + "enforce": "baseline",
                                               R + "enforce-version": "v1.0"}),
                  "UPDATE", "x", self.ns("x", {R + "enforce": "restricted"}))
        self.assertIsNone(self.check(a))
        self.assertEqual(len(a.warnings), 3)

    def test_namespace_pod_limit(self) -> None:
        """Past the one second budget the check stops (after the pod that went over it) and
        says how many pods it saw."""
        self.pods = [privileged_pod(f"p{i}", namespace="x") for i in range(5)]
        ticks = iter(range(100))
        self.plugin.monotonic = lambda: float(next(ticks)) * 0.4
        a = attrs("namespaces", self.ns("x", {R + "enforce": "baseline"}), "UPDATE", "x",
                  self.ns("x"))
        self.assertIsNone(self.check(a))
        self.assertEqual(a.warnings, [
            "new PodSecurity enforce level only checked against the first 3 of 5 existing pods",
            'existing pods in namespace "x" violate the new PodSecurity enforce level '
            '"baseline:latest"',
            "p0 (and 2 other pods): privileged"])


# -- through the whole server -----------------------------------------------------------------

class ServerTests(KubeTestCase):
    def namespace(self, name: str, **labels: str) -> None:
        code, body, _ = self.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {R + k: v for k, v in labels.items()}}})
        self.assertEqual(code, 201, body)

    def test_refused_pod_is_not_stored(self) -> None:
        """A refused pod (also with generateName: the generated name is in the message, as
        upstream's) is not written; a dry run is refused the same way."""
        self.namespace("r", enforce="restricted")
        pod = dict(privileged_pod("priv"), apiVersion="v1", kind="Pod")
        code, body, _ = self.request("POST", "/api/v1/namespaces/r/pods?dryRun=All", pod)
        self.assertEqual((code, body["reason"]), (403, "Forbidden"))
        code, body, _ = self.request("POST", "/api/v1/namespaces/r/pods", pod)
        self.assertEqual(code, 403)
        self.assertTrue(body["message"].startswith(
            'pods "priv" is forbidden: violates PodSecurity "restricted:latest": privileged '))
        pod["metadata"] = {"generateName": "gen-"}
        code, body, _ = self.request("POST", "/api/v1/namespaces/r/pods", pod)
        self.assertEqual(code, 403)
        self.assertRegex(body["message"], r'^pods "gen-[a-z0-9]{5}" is forbidden: violates ')
        code, body, _ = self.request("GET", "/api/v1/namespaces/r/pods")
        self.assertEqual(body["items"], [])

    def test_deployment_warning(self) -> None:
        """A workload's template gets the warn level's C{Warning} header; it is stored."""
        self.namespace("w", warn="baseline")
        dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
               "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                   "metadata": {"labels": {"a": "b"}},
                   "spec": {"hostNetwork": True, "containers": [{"name": "c",
                                                                 "image": "nginx"}]}}}}
        code, _, response = self.request("POST", "/apis/apps/v1/namespaces/w/deployments", dep)
        self.assertEqual(code, 201)
        self.assertEqual(response.headers.getRawHeaders("Warning"), [
            '299 - "would violate PodSecurity \\"baseline:latest\\": host namespaces '
            '(hostNetwork=true)"'])

    def test_server_metrics(self) -> None:
        """C{/metrics} shows the plugin's counters with kube-apiserver's names, help texts,
        labels and initial series (the values print as prometheus-client prints them)."""
        self.namespace("r", enforce="restricted")
        code, _, _ = self.request("POST", "/api/v1/namespaces/r/pods",
                                  dict(privileged_pod("priv"), apiVersion="v1", kind="Pod"))
        self.assertEqual(code, 403)
        code, text, _ = self.request("GET", "/metrics")
        lines = [line for line in text.splitlines() if "pod_security" in line]
        self.assertEqual(lines, [
            "# HELP pod_security_evaluations_total [ALPHA] Number of policy evaluations that "
            "occurred, not counting ignored or exempt requests.",
            "# TYPE pod_security_evaluations_total counter",
            'pod_security_evaluations_total{decision="allow",mode="enforce",'
            'policy_level="privileged",policy_version="latest",request_operation="create",'
            'resource="pod",subresource=""} 0.0',
            'pod_security_evaluations_total{decision="allow",mode="enforce",'
            'policy_level="privileged",policy_version="latest",request_operation="update",'
            'resource="pod",subresource=""} 0.0',
            'pod_security_evaluations_total{decision="deny",mode="enforce",'
            'policy_level="restricted",policy_version="latest",request_operation="create",'
            'resource="pod",subresource=""} 1.0',
            "# HELP pod_security_exemptions_total [ALPHA] Number of exempt requests, not "
            "counting ignored or out of scope requests.",
            "# TYPE pod_security_exemptions_total counter",
            'pod_security_exemptions_total{request_operation="create",resource="controller",'
            'subresource=""} 0.0',
            'pod_security_exemptions_total{request_operation="create",resource="pod",'
            'subresource=""} 0.0',
            'pod_security_exemptions_total{request_operation="update",resource="controller",'
            'subresource=""} 0.0',
            'pod_security_exemptions_total{request_operation="update",resource="pod",'
            'subresource=""} 0.0'])


class WarningPlumbingTests(SynchronousTestCase):
    """C{Attributes.add_warning} and the chain's C{warn} callback, which the plugin uses."""

    def test_add_warning(self) -> None:
        a = attrs("pods", privileged_pod())
        a.add_warning("one")
        a.add_warning("two")
        a.add_warning("one")
        self.assertEqual(a.warnings, ["one", "two"])

    def test_chain_hands_warnings_over(self) -> None:
        """After each phase, refusing or not, the chain gives the phase's warnings to
        C{warn}, in order."""
        from kubetwist.admission.chain import AdmissionChain
        from kubetwist.registry.rest import ResourceSpec

        class Warner:
            name = "warner"

            def handles(self, operation: str) -> bool:
                return True

            async def admit(self, a: Attributes) -> None:
                a.add_warning("from admit")

            async def validate(self, a: Attributes) -> None:
                a.add_warning("from validate")
                raise errors.new_forbidden("", "configmaps", a.name, "no")

        got: list[str] = []
        spec = ResourceSpec("", "v1", "configmaps", "ConfigMap", "configmap")
        admission = AdmissionChain([Warner()]).for_request(spec, "", "ns", "c", None, False,
                                                           warn=got.append)
        self.successResultOf(Deferred.fromCoroutine(admission.mutate("CREATE", {}, None)))
        self.failureResultOf(Deferred.fromCoroutine(admission.validate("CREATE", {}, None)),
                             errors.StatusError)
        self.assertEqual(got, ["from admit", "from validate"])


class MetricsTests(SynchronousTestCase):
    """The plugin's C{pod_security_*} counters (upstream C{PrometheusRecorder})."""

    def test_counts(self) -> None:
        namespaces = _Namespaces(strict={R + "enforce": "restricted", R + "warn": "baseline",
                                         R + "warn-version": "v1.40"},
                                 bad={R + "audit": "x"})
        plugin = PodSecurity({"apiVersion": "pod-security.admission.config.k8s.io/v1",
                              "kind": "PodSecurityConfiguration",
                              "exemptions": {"namespaces": ["kube-system"]}}, namespaces)
        for a in (attrs("pods", privileged_pod(), namespace="strict"),
                  attrs("pods", privileged_pod(), namespace="kube-system"),
                  attrs("deployments", deployment(privileged_pod()), namespace="strict"),
                  attrs("pods", restricted_pod(), namespace="bad"),
                  attrs("pods", restricted_pod(), namespace="broken")):
            ensureDeferred(plugin.validate(a)).addErrback(lambda f: f.trap(errors.StatusError))
        m = plugin.metrics
        self.assertEqual(m.evaluations[("deny", "enforce", "restricted", "latest", "create",
                                        "pod", "")], 1)
        self.assertEqual(m.evaluations[("deny", "warn", "baseline", "future", "create",
                                        "controller", "")], 1)
        self.assertEqual(m.evaluations[("allow", "enforce", "privileged", "latest", "create",
                                        "pod", "")], 1)
        self.assertEqual(m.exemptions[("create", "pod", "")], 1)
        self.assertEqual(m.errors, {("false", "create", "pod", ""): 1,
                                    ("true", "create", "pod", ""): 1})


class AuditAnnotationTests(KubeTestCase):
    """The plugin's annotations reach the request's audit event, also on a refusal."""

    def setUp(self) -> None:
        from kubetwist.audit import AuditConfig
        from kubetwist.audit.policy import load_policy
        from tests.server.test_filters_audit import MemoryBackend

        self.backend = MemoryBackend()
        self.audit = AuditConfig(load_policy(
            b"apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\n"
            b"rules:\n- level: Metadata\n  resources: [{group: '', resources: [pods]}]\n"
            b"- level: None\n"), self.backend)
        super().setUp()

    def test_refused_pod(self) -> None:
        code, _, _ = self.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a", "labels": {
                R + "enforce": "baseline", R + "audit": "restricted"}}})
        self.assertEqual(code, 201)
        code, _, _ = self.request("POST", "/api/v1/namespaces/a/pods",
                                  dict(privileged_pod("priv"), apiVersion="v1", kind="Pod"))
        self.assertEqual(code, 403)
        [event] = [e for e in self.backend.events if e.get("objectRef", {}).get("name") == "priv"]
        annotations = event["annotations"]
        self.assertEqual(annotations[R + "enforce-policy"], "baseline:latest")
        self.assertTrue(annotations[R + "audit-violations"].startswith(
            'would violate PodSecurity "restricted:latest": privileged (container "c" must not '
            "set securityContext.privileged=true), allowPrivilegeEscalation != false"))
