"""The authorization seam: interfaces, the built-in authorizers and their union."""

from __future__ import annotations

from twisted.internet import defer
from twisted.trial.unittest import SynchronousTestCase
from zope.interface import implementer
from zope.interface.verify import verifyObject

from kubetwist import authorization
from kubetwist.authentication.user import UserInfo
from kubetwist.authorization.authorizer import (
    ALLOW,
    DENY,
    NO_OPINION,
    Attributes,
    IAuthorizer,
    IRuleResolver,
)
from kubetwist.endpoints.requestinfo import parse_request_info

JANE = UserInfo(name="jane", groups=["dev"])
ADMIN = UserInfo(name="admin", groups=["system:masters"])


@implementer(IAuthorizer)
class Fixed:
    """Answers a fixed decision; counts calls."""

    def __init__(self, decision: str, reason: str = "") -> None:
        self.answer = (decision, reason)
        self.calls = 0

    def authorize(self, attributes):
        self.calls += 1
        return defer.succeed(self.answer)


class InterfaceTests(SynchronousTestCase):
    """Every authorizer provides the interfaces it claims."""

    def test_verify(self) -> None:
        """AlwaysAllow, AlwaysDeny and the union resolve rules too; privileged groups do not."""
        for a in (authorization.AlwaysAllow(), authorization.AlwaysDeny(),
                  authorization.UnionAuthorizer([]), authorization.from_modes(["AlwaysAllow"])):
            self.assertTrue(verifyObject(IAuthorizer, a))
            self.assertTrue(verifyObject(IRuleResolver, a))
        privileged = authorization.PrivilegedGroups()
        self.assertTrue(verifyObject(IAuthorizer, privileged))
        self.assertFalse(IRuleResolver.providedBy(privileged))


class UnionTests(SynchronousTestCase):
    """Upstream union.New: the first decision wins, no opinion falls through."""

    def decide(self, authorizer, attributes=None):
        return self.successResultOf(authorizer.authorize(attributes or Attributes(user=JANE)))

    def test_first_decision_wins(self) -> None:
        """A deny stops the chain: later authorizers are not asked."""
        later = Fixed(ALLOW)
        union = authorization.UnionAuthorizer([Fixed(NO_OPINION, "a"), Fixed(DENY, "no"), later])
        self.assertEqual(self.decide(union), (DENY, "no"))
        self.assertEqual(later.calls, 0)

    def test_no_opinion_joins_reasons(self) -> None:
        """Nobody decides: no opinion, the non-empty reasons joined by newlines (upstream)."""
        union = authorization.UnionAuthorizer(
            [Fixed(NO_OPINION, "a"), Fixed(NO_OPINION, ""), Fixed(NO_OPINION, "b")])
        self.assertEqual(self.decide(union), (NO_OPINION, "a\nb"))

    def test_modes(self) -> None:
        """system:masters is allowed before AlwaysDeny; others get its reason."""
        union = authorization.from_modes(["AlwaysDeny"])
        self.assertEqual(self.decide(union, Attributes(user=ADMIN)), (ALLOW, ""))
        self.assertEqual(self.decide(union), (NO_OPINION, "Everything is forbidden."))
        self.assertEqual(self.decide(authorization.from_modes(["AlwaysAllow"])), (ALLOW, ""))

    def test_unknown_mode(self) -> None:
        """An unknown mode is refused with upstream's text."""
        with self.assertRaises(ValueError) as ctx:
            authorization.from_modes(["RBAC2"])
        self.assertEqual(str(ctx.exception), 'authorization-mode "RBAC2" is not a valid mode')
        self.assertIn("RBAC", authorization.MODE_FACTORIES)


class AttributesTests(SynchronousTestCase):
    """Attributes from a request, and the 403 message upstream writes for them."""

    def test_resource_request(self) -> None:
        """A resource request carries every resource field."""
        info = parse_request_info("GET", "/apis/apps/v1/namespaces/ns/deployments/d/scale")
        a = Attributes.from_request_info(JANE, info)
        self.assertEqual(
            (a.verb, a.namespace, a.api_group, a.api_version, a.resource, a.subresource, a.name,
             a.resource_request, a.is_read_only),
            ("get", "ns", "apps", "v1", "deployments", "scale", "d", True, True))
        self.assertEqual(
            authorization.forbidden_message(a, "nope"),
            'User "jane" cannot get resource "deployments/scale" in API group "apps" in the '
            'namespace "ns": nope')

    def test_cluster_scope(self) -> None:
        """A cluster-scoped resource says so."""
        a = Attributes.from_request_info(JANE, parse_request_info("DELETE", "/api/v1/nodes/n"))
        self.assertFalse(a.is_read_only)
        self.assertEqual(authorization.forbidden_message(a, ""),
                         'User "jane" cannot delete resource "nodes" in API group "" at the '
                         'cluster scope')

    def test_non_resource(self) -> None:
        """A non-resource request is authorized on its path, with the HTTP verb."""
        a = Attributes.from_request_info(JANE, parse_request_info("GET", "/healthz"))
        self.assertEqual((a.resource_request, a.verb, a.path), (False, "get", "/healthz"))
        self.assertEqual(authorization.forbidden_message(a, ""),
                         'User "jane" cannot get path "/healthz"')
