"""The handler chain in front: authentication, authorization, in-flight limits, timeouts."""

from tests.support import KubeTestCase


class AuthenticationTests(KubeTestCase):
    def test_no_credentials_is_401(self):
        """A request without credentials is 401 Unauthorized."""
        code, st, _ = self.request("GET", "/api/v1/namespaces", headers={"Authorization": None})
        self.assertEqual((code, st["reason"], st["message"]), (401, "Unauthorized", "Unauthorized"))

    def test_bad_token_is_401(self):
        """An unknown bearer token is 401, even on an anonymous path."""
        code, _, _ = self.request("GET", "/healthz", headers={"Authorization": "Bearer nope"})
        self.assertEqual(code, 401)

    def test_health_is_anonymous(self):
        """/healthz, /readyz and /version answer without credentials."""
        for path in ("/healthz", "/livez", "/readyz", "/version"):
            code, _, _ = self.request("GET", path, headers={"Authorization": None})
            self.assertEqual(code, 200, path)


class AlwaysDenyTests(KubeTestCase):
    modes = ("AlwaysDeny",)

    def test_plain_user_forbidden_with_upstream_message(self):
        """A non-admin user gets 403 with upstream's forbidden message."""
        code, st, _ = self.request("GET", "/api/v1/namespaces/default/pods",
                                   headers={"Authorization": "Bearer jane-token"})
        self.assertEqual((code, st["reason"]), (403, "Forbidden"))
        self.assertEqual(st["message"], 'pods is forbidden: User "jane" cannot list resource '
                         '"pods" in API group "" in the namespace "default": Everything is '
                         'forbidden.')

    def test_system_masters_allowed(self):
        """system:masters bypasses authorization."""
        code, _, _ = self.request("GET", "/api/v1/namespaces/default/pods")
        self.assertEqual(code, 200)


class InflightTests(KubeTestCase):
    def test_over_the_limit_is_429(self):
        """Past --max-requests-inflight, a request is 429 with Retry-After: 1."""
        self.chain.max_readonly = 1
        self.chain.inflight_readonly = 1
        code, st, resp = self.request("GET", "/api/v1/namespaces")
        self.assertEqual((code, st["reason"]), (429, "TooManyRequests"))
        self.assertEqual(resp.headers.getRawHeaders("Retry-After"), ["1"])
        self.assertEqual(st["details"], {"retryAfterSeconds": 1})

    def test_counters_return_to_zero(self):
        """Finished requests release their in-flight slot."""
        self.request("GET", "/api/v1/namespaces")
        self.request("POST", "/api/v1/namespaces/default/configmaps",
                     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
        self.assertEqual((self.chain.inflight_readonly, self.chain.inflight_mutating), (0, 0))
