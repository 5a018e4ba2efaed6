# -*- test-case-name: tests.extension.test_wardle -*-
"""
The wardle server's configuration: upstream sample-apiserver's C{pkg/apiserver/apiserver.go}
(C{New}: the group installed with its two storages) and C{pkg/cmd/server/start.go} (the
BanFlunder plugin registered, the OpenAPI title C{Wardle} version C{0.1}).
"""

from __future__ import annotations

from examples.wardle import admission, apis
from kubetwist.extension import ExtensionConfig
from kubetwist.extension.server import version_info

#: Upstream C{defaultEtcdPathPrefix}.
DEFAULT_ETCD_PATH_PREFIX = "/registry/wardle.example.com"


def wardle_config() -> ExtensionConfig:
    """The L{ExtensionConfig} of the wardle server."""
    return ExtensionConfig(
        name="sample-apiserver",
        groups=[apis.group_info()],
        admission_plugins=[(admission.NAME, admission.new)],
        openapi_title="Wardle", openapi_version="0.1",
        # upstream's "Wardle" component is at version 1.2 (start.go defaultWardleVersion)
        version_info=version_info("1", "2"),
        # upstream starts its informer factory here; kubetwist's plugin reads the store
        post_start_hooks=[("start-sample-server-informers", _nothing)])


async def _nothing() -> None:
    """Nothing to start: BanFlunder lists the Fischers from the store."""
