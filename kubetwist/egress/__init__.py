# -*- test-case-name: tests.egress.test_resolver -*-
"""
Calls from the API server to other servers: admission webhooks, CRD conversion webhooks and
aggregated APIServices (upstream C{k8s.io/apiserver/pkg/util/webhook},
C{k8s.io/apiserver/pkg/util/proxy} and the aggregator's service resolver).

 - L{kubetwist.egress.resolver}: a C{service} reference (namespace, name, port) to the
   address of a ready endpoint (upstream C{ResolveEndpoint}, the aggregator's
   C{--enable-aggregator-routing=true} behaviour, which is kubetwist's default since a
   standalone kubetwist has no cluster network to reach a ClusterIP through) or to the
   ClusterIP (C{ResolveCluster}).
 - L{kubetwist.egress.client}: a C{clientConfig} (C{url} or C{service}, C{caBundle}) to a
   treq client whose TLS verifies the server's certificate against the CA bundle and the
   name upstream verifies (the URL's host, or C{<service>.<namespace>.svc} for a service),
   while the TCP connection goes to the resolved address.
"""
