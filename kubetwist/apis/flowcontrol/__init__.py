# -*- test-case-name: tests.apis.test_flowcontrol -*-
"""
flowcontrol.apiserver.k8s.io: upstream C{pkg/apis/flowcontrol}, C{pkg/registry/flowcontrol}
and the API Priority and Fairness bootstrap configuration of
C{k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap}.
"""
