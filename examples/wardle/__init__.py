# -*- test-case-name: tests.extension.test_wardle -*-
"""
wardle: a Python port of upstream's C{k8s.io/sample-apiserver}, the example extension API
server built from kubetwist's parts (C{kubetwist.extension}).

It serves C{wardle.example.com/v1alpha1}: C{Flunder} (namespaced; C{spec.reference},
C{spec.referenceType}, C{status}) and C{Fischer} (cluster-scoped; C{disallowedFlunders}), with
the C{BanFlunder} admission plugin, storage in etcd (C{--etcd-servers}) or the embedded store,
delegated authentication and authorization to the main server, and its own twistd plugin::

    twistd -n wardle --secure-port 8443 --authentication-kubeconfig admin.kubeconfig \\
        --authorization-kubeconfig admin.kubeconfig --data-dir /tmp/wardle

Modules: L{types} (type tables), L{apis} (group, defaults, validation, strategies),
L{admission} (BanFlunder), L{server} (the L{ExtensionConfig
<kubetwist.extension.ExtensionConfig>}), L{tap} (the command line).
"""
