"""The extension server's flags (L{kubetwist.extension.options}) and the wardle plugin."""

from __future__ import annotations

from twisted.application.service import IServiceMaker
from twisted.plugin import getPlugins
from twisted.python import usage
from twisted.trial.unittest import SynchronousTestCase

from examples.wardle.tap import Options


class OptionsTests(SynchronousTestCase):
    """Upstream C{RecommendedOptions}' names and defaults."""

    def parse(self, *argv: str) -> Options:
        o = Options()
        o.parseOptions(list(argv))
        return o

    def test_defaults(self) -> None:
        """The delegating defaults: 10 s caches, the health paths, the standard headers, the
        wardle etcd prefix, BanFlunder on."""
        o = self.parse()
        self.assertEqual(o["etcd-prefix"], "/registry/wardle.example.com")
        self.assertEqual(o["secure-port"], 443)
        self.assertEqual(o["admission-plugins"], [
            "NamespaceLifecycle", "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy",
            "ValidatingAdmissionWebhook", "BanFlunder"])
        authn = o.authentication_options()
        self.assertEqual(authn.cache_ttl, 10.0)
        self.assertEqual(authn.requestheader_username_headers, ["x-remote-user"])
        self.assertEqual(authn.requestheader_group_headers, ["x-remote-group"])
        self.assertEqual(authn.requestheader_extra_headers_prefix, ["x-remote-extra-"])
        self.assertEqual(authn.requestheader_uid_headers, [])
        self.assertFalse(authn.skip_lookup)
        authz = o.authorization_options()
        self.assertEqual(authz.always_allow_paths, ["/healthz", "/readyz", "/livez"])
        self.assertEqual((authz.allow_cache_ttl, authz.deny_cache_ttl), (10.0, 10.0))
        self.assertEqual(authz.always_allow_groups, ["system:masters"])

    def test_values(self) -> None:
        """Durations, lists and booleans are parsed."""
        o = self.parse("--authentication-kubeconfig", "a.kc", "--authorization-kubeconfig",
                       "b.kc", "--authorization-webhook-cache-authorized-ttl", "1m",
                       "--requestheader-allowed-names", "front-proxy-client,other",
                       "--authentication-tolerate-lookup-failure", "true",
                       "--disable-admission-plugins", "BanFlunder,NamespaceLifecycle",
                       "--secure-port", "8443")
        self.assertEqual(o.authorization_options().allow_cache_ttl, 60.0)
        self.assertEqual(o.authentication_options().requestheader_allowed_names,
                         ["front-proxy-client", "other"])
        self.assertTrue(o.authentication_options().tolerate_lookup_failure)
        self.assertEqual(o["admission-plugins"], [
            "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook"])
        self.assertEqual(o.authentication_options().remote_kubeconfig, "a.kc")

    def test_unknown_plugin(self) -> None:
        """An unknown admission plugin name is upstream's error."""
        o = Options()
        with self.assertRaises(usage.UsageError) as caught:
            usage.Options.parseOptions(o, ["--enable-admission-plugins", "Nope"])
        self.assertEqual(str(caught.exception),
                         'enable-admission-plugins plugin "Nope" is unknown')


class PluginTests(SynchronousTestCase):
    """The C{wardle} twistd plugin."""

    def test_found(self) -> None:
        """C{twistd wardle} makes services from L{examples.wardle.tap}."""
        import twisted.plugins

        makers = [p for p in getPlugins(IServiceMaker, twisted.plugins) if p.tapname == "wardle"]
        self.assertEqual([m.module for m in makers], ["examples.wardle.tap"])


class SwappableTLSTests(SynchronousTestCase):
    """The listener's TLS follows the trusted client CAs."""

    def test_swap(self) -> None:
        """New connections use the context built for the new CAs."""
        from kubetwist.extension.service import SwappableTLS

        built = []

        def build(cas: list) -> object:
            factory = type("F", (), {"getContext": lambda self: cas,
                                     "serverConnectionForTLS": lambda self, p: (cas, p)})()
            built.append(factory)
            return factory

        tls = SwappableTLS(build, ["a"])
        self.assertEqual(tls.getContext(), ["a"])
        tls.swap(["a", "b"])
        self.assertEqual(tls.serverConnectionForTLS("proto"), (["a", "b"], "proto"))
        self.assertEqual(len(built), 2)
