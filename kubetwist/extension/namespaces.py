# -*- test-case-name: tests.extension.test_delegated -*-
"""
The namespaces of the main server, for an extension server's C{NamespaceLifecycle}: upstream
C{RecommendedOptions.CoreAPI} (C{--kubeconfig}: a client of the "core" kubernetes server)
feeding the plugin's namespace informer and live lookup
(C{k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle}).

An extension server has no namespaces of its own: a namespaced object may only be created in
a namespace the main server has (404 C{namespaces "x" not found}) and that is not being
terminated (403).  L{RemoteNamespaces} reads them with a GET per admission (no informer).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Optional
from urllib.parse import quote

from kubetwist.admission.plugins.namespacelifecycle import NamespaceLifecycle
from kubetwist.authorization.webhook import http_client_for, load_webhook_kubeconfig
from kubetwist.runtime import errors

__all__ = ["GENERIC_ADMISSION_PLUGINS", "RemoteNamespaces", "namespace_lifecycle"]

#: Upstream C{RecommendedOptions}' admission plugins, in their order (kubetwist builds
#: C{NamespaceLifecycle}; the webhook and policy plugins are recognised names only).
GENERIC_ADMISSION_PLUGINS = ("NamespaceLifecycle", "MutatingAdmissionWebhook",
                             "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook")


class RemoteNamespaces:
    """
    C{async get(namespace, name, resource_version)} of a Namespace of the main server (the
    storage protocol L{NamespaceLifecycle} reads).

    @param client: a treq client; C{target} the kubeconfig's L{WebhookTarget
        <kubetwist.authorization.webhook.WebhookTarget>} (server and token).
    """

    def __init__(self, client: Any, target: Any) -> None:
        self.client = client
        self.target = target

    async def get(self, namespace: str, name: str, resource_version: str = "") -> dict:
        """
        @raise StatusError: 404 C{namespaces "x" not found}; the main server's own refusal
            (its C{Status}), or 500 when it cannot be reached.
        """
        url = f"{self.target.server.rstrip('/')}/api/v1/namespaces/{quote(name, safe='')}"
        if resource_version:
            url += f"?resourceVersion={resource_version}"
        headers = {b"Accept": [b"application/json"]}
        if self.target.token:
            headers[b"Authorization"] = [b"Bearer " + self.target.token.encode()]
        try:
            response = await self.client.get(url, headers=headers)
            body = await response.content()
        except Exception as e:  # noqa: BLE001 -- every transport failure ends the same way
            raise errors.new_internal_error(f'Get "{url}": {e}') from None
        if response.code == 404:
            raise errors.new_not_found("", "namespaces", name)
        try:
            doc = json.loads(body)
        except ValueError:
            doc = {}
        if response.code != 200:
            raise errors.new_internal_error(
                (doc.get("message") if isinstance(doc, dict) else None) or
                f"the server responded with the status code {response.code}")
        return doc


def namespace_lifecycle(reactor: Any, kubeconfig: str,
                        client_factory: Optional[Callable] = None) -> tuple[str, Callable]:
    """
    The C{("NamespaceLifecycle", factory)} admission entry over the main server named by
    C{kubeconfig}.

    @raise ValueError: an unreadable kubeconfig.
    """
    target = load_webhook_kubeconfig(kubeconfig)
    client = (client_factory or (lambda t: http_client_for(reactor, t)))(target)
    namespaces = RemoteNamespaces(client, target)
    return "NamespaceLifecycle", lambda context: NamespaceLifecycle(namespaces)
