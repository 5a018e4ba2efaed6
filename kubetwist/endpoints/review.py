# -*- test-case-name: tests.apis.test_reviews -*-
"""
Serving create-only, never-stored resources ("reviews", L{ReviewREST
<kubetwist.registry.review.ReviewREST>}): the generic handlers with the requesting user in
place of the admission binding, and a group-version of them whose discovery entries carry no
C{storageVersionHash}.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kubetwist.endpoints.handlers.rest import ResourceHandlers
from kubetwist.endpoints.installer import APIGroupVersion, APIResource
from kubetwist.endpoints.request import context_of
from kubetwist.registry.review import ReviewContext, ReviewREST

__all__ = ["ReviewGroupVersion", "ReviewHandlers", "install_reviews"]


class ReviewHandlers(ResourceHandlers):
    """
    The generic resource handlers over a L{ReviewREST}: the create path is the generic one;
    only the binding it passes to C{create} differs (the requesting user instead of the
    admission chain; upstream runs admission on reviews, kubetwist's built-in plugins have
    nothing to say about them).
    """

    def _admission(self, request: Any, namespace: str, name: str, subresource: str,
                   dry: bool) -> ReviewContext:
        return ReviewContext(context_of(request).user, namespace, dry)


class ReviewGroupVersion(APIGroupVersion):
    """
    A group-version of review resources: their discovery entries carry no
    C{storageVersionHash} (upstream lists one only for storages that persist objects).
    """

    def api_resource_list(self) -> dict:
        doc = super().api_resource_list()
        for entry in doc.get("resources", []):
            entry.pop("storageVersionHash", None)
        return doc


def install_reviews(server: Any, group: str, version: str, rests: Iterable[ReviewREST],
                    clock: Any) -> APIGroupVersion:
    """
    Install C{group}/C{version} serving C{rests} (each provides only C{ICreater}: the verbs
    C{["create"]}).

    @param server: a L{GenericAPIServer <kubetwist.server.genericapiserver.GenericAPIServer>}.
    @return: the installed group-version.
    """
    agv = ReviewGroupVersion(group, version)
    for rest in rests:
        agv.install(APIResource(ReviewHandlers(rest, {}, None, clock)))
    server.install_api_group_version(agv)
    return agv
