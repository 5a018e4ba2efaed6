# -*- test-case-name: tests.extension.test_wardle -*-
"""
C{twistd wardle}: upstream sample-apiserver's C{main.go} and C{pkg/cmd/server/start.go}
(C{NewWardleServerOptions}: the recommended options with the C{/registry/wardle.example.com}
etcd prefix and the BanFlunder plugin).
"""

from __future__ import annotations

from twisted.application.service import MultiService

from examples.wardle import admission
from examples.wardle.server import DEFAULT_ETCD_PATH_PREFIX, wardle_config
from kubetwist.extension import ExtensionAPIService, ExtensionServerOptions


class Options(ExtensionServerOptions):
    """The wardle server's flags (upstream C{RecommendedOptions})."""

    longdesc = "Launch a wardle API server"
    default_etcd_prefix = DEFAULT_ETCD_PATH_PREFIX
    admission_plugin_names = (admission.NAME,)


def makeService(options: Options) -> MultiService:
    """The wardle server's service (storage, listener, post-start hooks)."""
    from twisted.internet import reactor

    return ExtensionAPIService(reactor, options, wardle_config)
