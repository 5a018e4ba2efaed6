"""
The C{extension-apiserver-authentication} ConfigMap kube-apiserver publishes
(L{kubetwist.controlplane.clusterauthenticationtrust}), checked against what kube-apiserver
v1.32 wrote with C{--client-ca-file} and the C{--requestheader-*} flags.
"""

from __future__ import annotations

import datetime

from kubetwist.controlplane import clusterauthenticationtrust as trust
from tests.pki import CA
from tests.support import KubeTestCase

CONFIGMAP = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"


class ConfigMapDataTests(KubeTestCase):
    """The data, as upstream writes it."""

    def setUp(self) -> None:
        super().setUp()
        self.client, self.proxy = CA("client-ca"), CA("front-proxy-ca")
        self.info = trust.ClusterAuthenticationInfo(
            client_ca=self.client.cert, requestheader_ca=self.proxy.cert,
            username_headers=["X-Remote-User"], group_headers=["X-Remote-Group"],
            extra_header_prefixes=["X-Remote-Extra-"], allowed_names=["front-proxy-client"])
        self.stores = self.kube.stores

    def sync(self, info: trust.ClusterAuthenticationInfo) -> object:
        return self.successResultOf(trust.sync_configmap(
            self.stores[("", "configmaps")], self.stores[("", "namespaces")], info))

    def test_written(self) -> None:
        """Every key, the lists as compact JSON arrays (C{[]} when empty), PEM kept."""
        self.sync(self.info)
        code, cm, _ = self.request("GET", CONFIGMAP)
        self.assertEqual(code, 200)
        self.assertEqual(cm["data"], {
            "client-ca-file": self.client.cert.decode(),
            "requestheader-allowed-names": '["front-proxy-client"]',
            "requestheader-client-ca-file": self.proxy.cert.decode(),
            "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
            "requestheader-group-headers": '["X-Remote-Group"]',
            "requestheader-uid-headers": "[]",
            "requestheader-username-headers": '["X-Remote-User"]',
        })

    def test_client_ca_only(self) -> None:
        """Without a front-proxy CA only C{client-ca-file} is published."""
        self.sync(trust.ClusterAuthenticationInfo(client_ca=self.client.cert))
        _, cm, _ = self.request("GET", CONFIGMAP)
        self.assertEqual(cm["data"], {"client-ca-file": self.client.cert.decode()})

    def test_unchanged_not_written(self) -> None:
        """A second sync with the same info writes nothing."""
        self.assertIsNotNone(self.sync(self.info))
        _, before, _ = self.request("GET", CONFIGMAP)
        self.assertIsNone(self.sync(self.info))
        _, after, _ = self.request("GET", CONFIGMAP)
        self.assertEqual(before["metadata"]["resourceVersion"],
                         after["metadata"]["resourceVersion"])

    def test_combined_with_existing(self) -> None:
        """Another server's values are kept: CAs and header names unioned, theirs first."""
        other = CA("other-client-ca")
        self.sync(trust.ClusterAuthenticationInfo(
            client_ca=other.cert, requestheader_ca=self.proxy.cert,
            username_headers=["X-Other-User"]))
        self.sync(self.info)
        _, cm, _ = self.request("GET", CONFIGMAP)
        self.assertEqual(cm["data"]["client-ca-file"], (other.cert + self.client.cert).decode())
        self.assertEqual(cm["data"]["requestheader-username-headers"],
                         '["X-Other-User","X-Remote-User"]')
        self.assertEqual(cm["data"]["requestheader-client-ca-file"], self.proxy.cert.decode())

    def test_expired_dropped(self) -> None:
        """Expired certificates are left out of the combined bundle."""
        later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=2)
        self.assertEqual(trust._combine_certificates(self.client.cert, now=later), b"")


class HookTests(KubeTestCase):
    """The post-start hook is installed when the server has something to publish."""

    def test_hook_named_as_upstream(self) -> None:
        """C{start-cluster-authentication-info-controller}, absent without the info."""
        code, text, _ = self.request("GET", "/readyz?verbose")
        self.assertEqual(code, 200)
        self.assertNotIn(trust.HOOK_NAME, text)
        from kubetwist.controlplane.instance import ControlPlaneConfig, KubeAPIServer

        kube = KubeAPIServer(self.storage, self.clock, ControlPlaneConfig(
            cluster_authentication=trust.ClusterAuthenticationInfo(client_ca=CA().cert)))
        names = [h.name for h in kube.server.hooks]
        self.assertIn(trust.HOOK_NAME, names)
