# -*- test-case-name: tests.server.test_filters -*-
"""
The handler chain, run once in front of the aggregator: upstream
C{k8s.io/apiserver/pkg/server/config.go DefaultBuildHandlerChain}.

L{build_handler_chain} composes one filter module of this package each, in upstream's order.
Outermost first, as a request meets them::

    audit init -> panic recovery -> request info -> HTTP logging -> HSTS -> warning recorder
    -> wait group -> timeout -> CORS -> authentication -> audit -> impersonation
    -> priority and fairness (or max-in-flight when it is off) -> authorization -> the server

A new filter is one module with a C{with_x(handler, ...)} function and one line here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from twisted.web.resource import Resource

from kubetwist.server.filters.audit import (
    with_audit,
    with_audit_init,
    with_failed_authentication_audit,
)
from kubetwist.server.filters.authentication import with_authentication
from kubetwist.server.filters.authorization import with_authorization
from kubetwist.server.filters.base import FrontResource, resource_handler
from kubetwist.server.filters.cors import with_cors
from kubetwist.server.filters.hsts import with_hsts
from kubetwist.server.filters.httplog import with_http_logging
from kubetwist.server.filters.impersonation import with_impersonation
from kubetwist.server.filters.maxinflight import MaxInFlight
from kubetwist.server.filters.priorityandfairness import PriorityAndFairness
from kubetwist.server.filters.recovery import with_panic_recovery
from kubetwist.server.filters.requestinfo import with_request_info
from kubetwist.server.filters.timeout import with_timeout
from kubetwist.server.filters.waitgroup import WaitGroup
from kubetwist.server.filters.warnings import with_warning_recorder


@dataclass
class HandlerChainConfig:
    """
    The chain's configuration (upstream C{server.Config}'s fields the chain reads).

    @ivar clock: C{IReactorTime} for the timeout.
    @ivar authenticator: an C{IAuthenticator}, or C{None} (every request is 401).
    @ivar authorizer: an C{IAuthorizer}.
    @ivar max_requests_inflight: C{--max-requests-inflight} (C{0}: no limit).
    @ivar max_mutating_requests_inflight: C{--max-mutating-requests-inflight}.
    @ivar request_timeout: C{--request-timeout}, seconds.
    @ivar cors_allowed_origins: C{--cors-allowed-origins} (none: no CORS filter).
    @ivar hsts_directives: C{--strict-transport-security-directives} (none: no HSTS filter).
    @ivar audit: the L{AuditConfig <kubetwist.audit.AuditConfig>} (policy and backend) of the
        C{--audit-*} flags, or C{None} (no auditing).
    @ivar flow_control: the API Priority and Fairness L{ConfigController
        <kubetwist.flowcontrol.controller.ConfigController>}, or C{None}
        (C{--enable-priority-and-fairness=false}: the max-in-flight filter instead).
    """

    clock: Any
    authenticator: Any
    authorizer: Any
    max_requests_inflight: int = 400
    max_mutating_requests_inflight: int = 200
    request_timeout: float = 60.0
    cors_allowed_origins: list[str] = field(default_factory=list)
    hsts_directives: list[str] = field(default_factory=list)
    audit: Optional[Any] = None
    #: the L{APIServerMetrics <kubetwist.server.metrics.APIServerMetrics>} the requests are
    #: counted in, or C{None}
    metrics: Optional[Any] = None
    flow_control: Optional[Any] = None


class HandlerChain(FrontResource):
    """
    The front resource: the composed filters over the server's resource.

    @ivar inflight: the L{MaxInFlight} filter (its counters and limits), or C{None} when
        priority and fairness runs instead.
    @ivar priority_and_fairness: the L{PriorityAndFairness} filter, or C{None}.
    @ivar waitgroup: the L{WaitGroup} filter (requests in flight, for shutdown).
    @ivar config: the L{HandlerChainConfig} the chain was built from.
    """

    @property
    def config(self) -> HandlerChainConfig:
        return self.parts["config"]

    @property
    def authenticator(self) -> Any:
        """The authentication filter's authenticator."""
        return self.config.authenticator

    @property
    def authorizer(self) -> Any:
        """The authorization filter's authorizer."""
        return self.config.authorizer

    @property
    def inflight(self) -> Optional[MaxInFlight]:
        return self.parts.get("inflight")

    @property
    def priority_and_fairness(self) -> Optional[PriorityAndFairness]:
        return self.parts.get("priority_and_fairness")

    @property
    def waitgroup(self) -> WaitGroup:
        return self.parts["waitgroup"]

    @property
    def active(self) -> set:
        """Requests in flight (drained at shutdown)."""
        return self.waitgroup.active

    @property
    def long_running(self) -> set:
        """Long-running requests in flight (ended at shutdown)."""
        return self.waitgroup.long_running


def build_handler_chain(api_handler: Resource, config: HandlerChainConfig) -> HandlerChain:
    """
    Upstream C{DefaultBuildHandlerChain}: wrap C{api_handler} (the aggregator's director) in
    the filters, innermost first, exactly in upstream's order (see the module docstring).
    """
    inflight: Optional[MaxInFlight] = None
    apf: Optional[PriorityAndFairness] = None
    if config.flow_control is not None:
        apf = PriorityAndFairness(config.flow_control, config.clock, config.request_timeout)
    else:
        inflight = MaxInFlight(config.max_requests_inflight,
                               config.max_mutating_requests_inflight)
    waitgroup = WaitGroup()
    handler = resource_handler(api_handler)
    if config.metrics is not None:
        # upstream instruments each route (InstrumentRouteFunc), inside every filter
        handler = config.metrics.wrap(handler)
        counts: Any = apf if apf is not None else inflight
        config.metrics.track_inflight(
            lambda: (counts.inflight_readonly, counts.inflight_mutating))
        if apf is not None:
            config.metrics.track_flow_control(apf)
    handler = with_authorization(handler, config.authorizer)
    handler = apf.wrap(handler) if apf is not None else inflight.wrap(handler)  # type: ignore
    handler = with_impersonation(handler, config.authorizer)
    handler = with_audit(handler, config.audit)
    handler = with_failed_authentication_audit(
        with_authentication(handler, config.authenticator), config.audit)
    if config.cors_allowed_origins:
        handler = with_cors(handler, config.cors_allowed_origins)
    handler = with_timeout(handler, config.clock, config.request_timeout)
    handler = waitgroup.wrap(handler)
    handler = with_warning_recorder(handler)
    if config.hsts_directives:
        handler = with_hsts(handler, config.hsts_directives)
    handler = with_http_logging(handler, config.clock)
    handler = with_request_info(handler)
    handler = with_panic_recovery(handler)
    handler = with_audit_init(handler)
    return HandlerChain(handler, {"inflight": inflight, "priority_and_fairness": apf,
                                  "waitgroup": waitgroup, "config": config})
