# -*- test-case-name: tests.extension.test_server -*-
"""
kubetwist as a library for extension API servers: what C{k8s.io/apiserver} is to Go's
aggregated API servers (C{k8s.io/sample-apiserver}), built from the same parts as
C{twistd kubeapi}.  See C{docs/library.md} for a walk-through.

An extension server declares:

 - its kinds, as type tables in the format of L{kubetwist.runtime.types} registered with
   L{register_types} (OpenAPI, strict field validation, strategic merge patch and
   server-side apply are derived from them);
 - its group-versions, as L{APIGroupInfo}s of L{ResourceSpec} rows and L{Strategy}s
   (L{new_strategy} adds upstream's common C{ObjectMeta} validation; L{TableConvertor} for
   printer columns);
 - its admission plugins (objects providing
   L{IMutationInterface <kubetwist.admission.interfaces.IMutationInterface>} /
   L{IValidationInterface <kubetwist.admission.interfaces.IValidationInterface>}), built from
   a L{PluginContext} over its own stores;

in an L{ExtensionConfig}; L{assemble_extension} turns it into a served L{ExtensionServer}
(discovery, OpenAPI, health, metrics, the kube-apiserver filter chain), and
L{ExtensionAPIService} runs it as a process with L{ExtensionServerOptions}' flags: storage in
etcd or the embedded store, delegated authentication and authorization to the main server
(L{kubetwist.extension.delegated}).
"""

from kubetwist.admission.interfaces import IMutationInterface, IValidationInterface
from kubetwist.admission.registry import PluginContext
from kubetwist.extension.delegated import (
    DelegatingAuthenticationOptions,
    DelegatingAuthorizationOptions,
    build_delegated_authentication,
    build_delegated_authorizer,
)
from kubetwist.extension.options import ExtensionServerOptions
from kubetwist.extension.server import (
    ExtensionConfig,
    ExtensionServer,
    assemble_extension,
    version_info,
)
from kubetwist.extension.service import ExtensionAPIService
from kubetwist.extension.strategy import new_strategy
from kubetwist.registry.rest import ResourceSpec, Strategy, TableConvertor
from kubetwist.runtime.types import register_package as register_types
from kubetwist.server.apigroup import APIGroupInfo

__all__ = [
    "APIGroupInfo", "DelegatingAuthenticationOptions", "DelegatingAuthorizationOptions",
    "ExtensionAPIService", "ExtensionConfig", "ExtensionServer", "ExtensionServerOptions",
    "IMutationInterface", "IValidationInterface", "PluginContext", "ResourceSpec", "Strategy",
    "TableConvertor", "assemble_extension", "build_delegated_authentication",
    "build_delegated_authorizer", "new_strategy", "register_types", "version_info",
]
