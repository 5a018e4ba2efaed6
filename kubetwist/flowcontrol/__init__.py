# -*- test-case-name: tests.flowcontrol.test_controller -*-
"""
API Priority and Fairness: upstream C{k8s.io/apiserver/pkg/util/flowcontrol}.

 - L{rules}: classification of a request by a FlowSchema's rules (C{rule.go});
 - L{shufflesharding}: the dealer of queue hands (C{pkg/util/shufflesharding});
 - L{queueset}: fair queuing of one priority level (C{fairqueuing/queueset});
 - L{borrowing}: seat demand and the division of seats among levels (C{conc_alloc.go});
 - L{dropped}: the C{Retry-After} of rejected requests (C{dropped_requests_tracker.go});
 - L{controller}: the configuration digested from the FlowSchema and
   PriorityLevelConfiguration objects, and request admission (C{apf_controller.go}).

The package holds no storage client: L{controller.ConfigController.digest} is fed the objects
by the config consumer (C{kubetwist.apis.flowcontrol.controller}), which follows them through
storage watches and writes their status.
"""

from kubetwist.flowcontrol.controller import Classification, ConfigController

__all__ = ["Classification", "ConfigController"]
