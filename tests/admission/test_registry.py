"""The admission plugin registry: names, upstream's order, enable/disable, plugin shapes."""

from __future__ import annotations

from twisted.internet import defer
from twisted.trial.unittest import SynchronousTestCase
from zope.interface.verify import verifyObject

from kubetwist.admission import registry
from kubetwist.admission.interfaces import (
    Attributes,
    IAdmissionPlugin,
    IMutationInterface,
    IValidationInterface,
)
from kubetwist.registry.rest import ResourceSpec
from kubetwist.runtime.errors import StatusError

#: kube-apiserver v1.32 --help: "default enabled plugins list (...)", in its order.
UPSTREAM_DEFAULTS = (
    "NamespaceLifecycle, LimitRanger, ServiceAccount, TaintNodesByCondition, PodSecurity, "
    "Priority, DefaultTolerationSeconds, DefaultStorageClass, StorageObjectInUseProtection, "
    "PersistentVolumeClaimResize, RuntimeClass, CertificateApproval, CertificateSigning, "
    "ClusterTrustBundleAttest, CertificateSubjectRestriction, DefaultIngressClass, "
    "MutatingAdmissionPolicy, MutatingAdmissionWebhook, ValidatingAdmissionPolicy, "
    "ValidatingAdmissionWebhook, ResourceQuota").split(", ")

#: kube-apiserver v1.32 with every plugin enabled logs these orders ("Loaded 20 mutating
#: admission controller(s) successfully in the following order: ...", and 22 validating);
#: EventRateLimit and ImagePolicyWebhook need a configuration file and were left out.
UPSTREAM_MUTATING = (
    "AlwaysAdmit,NamespaceAutoProvision,NamespaceLifecycle,LimitRanger,ServiceAccount,"
    "NodeRestriction,TaintNodesByCondition,AlwaysPullImages,PodNodeSelector,Priority,"
    "DefaultTolerationSeconds,PodTolerationRestriction,ExtendedResourceToleration,"
    "DefaultStorageClass,StorageObjectInUseProtection,RuntimeClass,DefaultIngressClass,"
    "MutatingAdmissionPolicy,MutatingAdmissionWebhook,AlwaysDeny").split(",")
UPSTREAM_VALIDATING = (
    "AlwaysAdmit,NamespaceExists,LimitPodHardAntiAffinityTopology,LimitRanger,ServiceAccount,"
    "AlwaysPullImages,PodSecurity,PodNodeSelector,Priority,PodTolerationRestriction,"
    "OwnerReferencesPermissionEnforcement,PersistentVolumeClaimResize,RuntimeClass,"
    "CertificateApproval,CertificateSigning,ClusterTrustBundleAttest,"
    "CertificateSubjectRestriction,DenyServiceExternalIPs,ValidatingAdmissionPolicy,"
    "ValidatingAdmissionWebhook,ResourceQuota,AlwaysDeny").split(",")

PODS = ResourceSpec("", "v1", "pods", "Pod", "pod")


class _Store:
    """A storage answering get from a dict (404 otherwise)."""

    def __init__(self, objects: dict) -> None:
        self.objects = objects

    async def get(self, namespace, name, resource_version=""):
        from kubetwist.runtime import errors

        if name not in self.objects:
            raise errors.new_not_found("", "x", name)
        return self.objects[name]


class OrderTests(SynchronousTestCase):
    """The names and their order are upstream's."""

    def test_defaults(self) -> None:
        """The default set, in upstream's order."""
        self.assertEqual(registry.default_enabled_plugins(), UPSTREAM_DEFAULTS)

    def test_relative_order(self) -> None:
        """The mutating and validating orders upstream logs are subsequences of ours."""
        for upstream in (UPSTREAM_MUTATING, UPSTREAM_VALIDATING):
            ours = [p for p in registry.ALL_ORDERED_PLUGINS if p in upstream]
            self.assertEqual(ours, upstream)
        self.assertEqual(len(registry.ALL_ORDERED_PLUGINS), 35)

    def test_enable_disable(self) -> None:
        """Enabling adds in order; disabling removes; both at once: enabled (upstream)."""
        names = registry.enabled_plugin_names(["AlwaysPullImages", "Priority"],
                                              ["Priority", "ResourceQuota", "LimitRanger"])
        self.assertEqual(names[:6], ["NamespaceLifecycle", "ServiceAccount",
                                     "TaintNodesByCondition", "AlwaysPullImages", "PodSecurity",
                                     "Priority"])
        self.assertNotIn("ResourceQuota", names)
        self.assertNotIn("LimitRanger", names)

    def test_unknown(self) -> None:
        """Unknown names get upstream's errors."""
        self.assertEqual(registry.validate_plugin_names(["Foo", "Priority"], ["Bar"]), [
            'enable-admission-plugins plugin "Foo" is unknown',
            'disable-admission-plugins plugin "Bar" is unknown'])

    def test_not_implemented_are_no_ops(self) -> None:
        """Recognised names without a plugin build nothing; the built ones are listed."""
        ctx = registry.PluginContext({("", "namespaces"): _Store({})})
        names = registry.default_enabled_plugins()
        plugins = registry.new_plugins(names, ctx)
        self.assertEqual([p.name for p in plugins], [
            "NamespaceLifecycle", "ServiceAccount", "Priority", "DefaultTolerationSeconds",
            "ResourceQuota"])
        self.assertIn("PodSecurity", registry.not_implemented(names))
        self.assertNotIn("Priority", registry.not_implemented(names))


class PluginShapeTests(SynchronousTestCase):
    """Every built plugin provides the interfaces it declares."""

    def test_verify(self) -> None:
        """Each plugin is an IAdmissionPlugin and mutating and/or validating, as upstream."""
        ctx = registry.PluginContext({("", "namespaces"): _Store({})})
        built = registry.new_plugins(registry.ALL_ORDERED_PLUGINS, ctx)
        self.assertEqual(len(built), 7)
        for p in built:
            self.assertTrue(verifyObject(IAdmissionPlugin, p))
            kinds = [i for i in (IMutationInterface, IValidationInterface) if i.providedBy(p)]
            self.assertTrue(kinds, p.name)
            for i in kinds:
                self.assertTrue(verifyObject(i, p))
            if p.name == "NamespaceLifecycle":
                # it checks in kubetwist's validating phase (see its docstring)
                continue
            self.assertEqual(IMutationInterface.providedBy(p), p.name in UPSTREAM_MUTATING,
                             p.name)
            self.assertEqual(IValidationInterface.providedBy(p), p.name in UPSTREAM_VALIDATING,
                             p.name)

    def test_always_deny(self) -> None:
        """AlwaysDeny refuses with upstream's message."""
        deny = registry.PLUGINS["AlwaysDeny"](registry.PluginContext())
        a = Attributes.for_spec("CREATE", PODS, namespace="ns", name="p", obj={})
        with self.assertRaises(StatusError) as ctx:
            deny.admit(a)
        self.assertEqual(ctx.exception.status["message"], 'pods "p" is forbidden: admission '
                         'control is denying all modifications')

    def test_service_account_missing(self) -> None:
        """A pod naming a missing ServiceAccount is refused in validation."""
        plugin = registry.PLUGINS["ServiceAccount"](registry.PluginContext(
            {("", "serviceaccounts"): _Store({"default": {}})}))
        pod = {"metadata": {"name": "p"}, "spec": {"containers": []}}
        a = Attributes.for_spec("CREATE", PODS, namespace="ns", name="p", obj=pod)
        self.successResultOf(defer.ensureDeferred(plugin.admit(a)))
        self.assertEqual(pod["spec"]["serviceAccountName"], "default")
        self.successResultOf(defer.ensureDeferred(plugin.validate(a)))
        pod["spec"]["serviceAccountName"] = "robot"
        f = self.failureResultOf(defer.ensureDeferred(plugin.validate(a)), StatusError)
        self.assertEqual(f.value.status["message"],
                         'pods "p" is forbidden: error looking up service account ns/robot: '
                         'serviceaccount "robot" not found')
