# -*- test-case-name: tests.authentication.test_serviceaccount -*-
"""
The service account issuer discovery routes (upstream C{routes.OpenIDMetadataServer}, KEP
1393): C{/.well-known/openid-configuration} and C{/openid/v1/jwks}, from the documents of
L{kubetwist.authentication.serviceaccount}.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Sequence

from kubetwist.authentication import serviceaccount
from kubetwist.endpoints.responses import funnel
from kubetwist.runtime import errors


def install_openid_routes(server: Any, issuer: str, jwks_uri: Callable[[], str],
                          public_keys: Sequence[Any]) -> None:
    """
    Serve C{/.well-known/openid-configuration} and C{/openid/v1/jwks} from C{server}'s mux
    (upstream C{routes.OpenIDMetadataServer}): C{application/json} and
    C{application/jwk-set+json}, C{Cache-Control: public, max-age=3600}.
    """
    keys = list(public_keys)
    jwks_body = json.dumps(serviceaccount.jwks(keys), separators=(",", ":")).encode()

    def serve(body: Callable[[], bytes], ctype: str):
        async def handler(request: Any) -> None:
            if request.method != b"GET":  # a go-restful GET route upstream: HEAD too is 405
                raise errors.new_method_not_allowed()
            data = body()
            request.setResponseCode(200)
            request.setHeader(b"content-type", ctype.encode())
            request.setHeader(b"content-length", str(len(data)).encode())
            request.setHeader(b"cache-control", b"public, max-age=3600")
            if request.method != b"HEAD":
                request.write(data)
            request.finish()
        return funnel(handler)

    server.mux["/.well-known/openid-configuration"] = serve(
        lambda: json.dumps(serviceaccount.openid_configuration(issuer, jwks_uri(), keys),
                           separators=(",", ":")).encode(), "application/json")
    server.mux["/openid/v1/jwks"] = serve(lambda: jwks_body, "application/jwk-set+json")
