# -*- test-case-name: tests.authorization.test_authorizer -*-
"""
The authorization seam: upstream C{k8s.io/apiserver/pkg/authorization/authorizer}
(C{interfaces.go}: C{Attributes}, C{AttributesRecord}, C{Authorizer}, C{RuleResolver},
C{Decision}).

An authorizer gets one L{Attributes} and answers a Deferred of C{(decision, reason)}: a
decision can need storage (RBAC's bindings through a cache) or a webhook round trip, and must
never block the reactor.  Authorizers that can answer at once return a fired Deferred.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from twisted.internet.defer import Deferred
from zope.interface import Interface

#: Upstream C{DecisionAllow}: the request is allowed; no later authorizer is asked.
ALLOW = "allow"
#: Upstream C{DecisionDeny}: the request is denied; no later authorizer is asked.
DENY = "deny"
#: Upstream C{DecisionNoOpinion}: ask the next authorizer; denied if none allows.
NO_OPINION = "noopinion"

DECISIONS = (ALLOW, DENY, NO_OPINION)


@dataclass(frozen=True)
class Attributes:
    """
    What a request asks to do (upstream C{authorizer.AttributesRecord}).

    @ivar user: the authenticated user (a L{kubetwist.authentication.user.UserInfo}: C{name},
        C{uid}, C{groups}, C{extra}), or C{None}.
    @ivar verb: for resource requests the API verb (C{get list watch create update patch delete
        deletecollection}, or a special verb such as C{impersonate}, C{escalate}, C{bind}); for
        other requests the lower-cased HTTP method.
    @ivar namespace: C{""} for cluster-scoped resources and non-resource requests.
    @ivar api_group: C{""} for the core group.
    @ivar api_version: C{v1}, ...
    @ivar resource: the plural resource (C{pods}).
    @ivar subresource: C{status}, C{scale}, ..., or C{""}.
    @ivar name: the object's name, C{""} for collections.
    @ivar path: the URL path (what a non-resource request is authorized on).
    @ivar resource_request: C{True} for C{/api/...} and C{/apis/<group>/<version>/...} requests
        naming a resource, C{False} for C{/healthz}, discovery, ...
    @ivar field_selector: the request's raw C{fieldSelector} (upstream C{GetFieldSelector},
        feature C{AuthorizeWithSelectors}), or C{""}.
    @ivar label_selector: the request's raw C{labelSelector} (C{GetLabelSelector}), or C{""}.
    """

    user: Any = None
    verb: str = ""
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""
    resource_request: bool = False
    field_selector: str = ""
    label_selector: str = ""

    @property
    def is_resource_request(self) -> bool:
        """Upstream C{IsResourceRequest()} (also C{RequestInfo}'s name for it)."""
        return self.resource_request

    @property
    def is_read_only(self) -> bool:
        """Upstream C{IsReadOnly()}: the verb is C{get}, C{list} or C{watch}."""
        return self.verb in ("get", "list", "watch")

    @classmethod
    def from_request_info(cls, user: Any, info: Any) -> "Attributes":
        """
        Upstream C{filters.GetAuthorizerAttributes}: the attributes of a request whose
        C{RequestInfo} is C{info} (any object with C{is_resource_request verb namespace
        api_group api_version resource subresource name path}).
        """
        if not info.is_resource_request:
            return cls(user=user, verb=info.verb, path=info.path)
        return cls(
            user=user, verb=info.verb, namespace=info.namespace, api_group=info.api_group,
            api_version=info.api_version, resource=info.resource, subresource=info.subresource,
            name=info.name, path=info.path, resource_request=True,
            field_selector=",".join((getattr(info, "query", None) or {}).get("fieldSelector", [])),
            label_selector=",".join((getattr(info, "query", None) or {}).get("labelSelector", [])),
        )


class IAuthorizer(Interface):
    """Decides whether a request may proceed (upstream C{authorizer.Authorizer})."""

    def authorize(attributes: Attributes) -> "Deferred[tuple[str, str]]":
        """
        Decide on C{attributes}.

        @return: a Deferred firing with C{(decision, reason)}: decision one of L{ALLOW},
            L{DENY}, L{NO_OPINION}; reason a human text (upstream's C{reason} string, shown
            in 403 messages and SubjectAccessReview C{status.reason}), possibly C{""}.  It
            may fire with a third element, an evaluation error text (upstream's C{err}).
        """


class IRuleResolver(Interface):
    """Lists what a user may do (upstream C{authorizer.RuleResolver}; SelfSubjectRulesReview)."""

    def rules_for(user: Any, namespace: str) -> tuple[list, list, bool, str]:
        """
        @return: C{(resource_rules, non_resource_rules, incomplete, evaluation_error)}:
            C{ResourceRule} dicts (C{verbs apiGroups resources resourceNames}),
            C{NonResourceRule} dicts (C{verbs nonResourceURLs}), whether the list may be
            incomplete, and an error text or C{""}.
        """

