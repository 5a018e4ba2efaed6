# -*- test-case-name: tests.authentication.test_webhook -*-
"""
Webhook token authentication (C{--authentication-token-webhook-config-file},
C{--authentication-token-webhook-version}, C{--authentication-token-webhook-cache-ttl}):
upstream C{k8s.io/apiserver/plugin/pkg/authenticator/token/webhook} behind
C{token/cache} and C{util/webhook} (kubeconfig loading, exponential back-off).

Each token not known to the other authenticators is POSTed as a C{TokenReview}
(C{authentication.k8s.io/v1} or C{v1beta1}) to the kubeconfig's server over treq, with the
kubeconfig's TLS trust, client certificate or bearer token; C{status.authenticated} with
C{status.user} is the user, anything else no user (with C{status.error} as the logged
reason).  Answers are cached for the TTL (successes and rejections alike; errors not); a
failing call (connection error, 429 or 5xx) is retried with upstream's back-off (0.5 s,
factor 1.5, 5 attempts).  Nothing blocks the reactor.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any, Callable, Optional

import yaml
from twisted.internet import defer, task
from twisted.logger import Logger
from zope.interface import implementer

from kubetwist.authentication.authenticator import (
    AuthenticationError,
    ITokenAuthenticator,
    audiences_from,
)
from kubetwist.authentication.user import UserInfo

log = Logger()

#: C{--authentication-token-webhook-version} values (upstream's default is C{v1beta1}).
VERSIONS = ("v1", "v1beta1")
#: Upstream C{DefaultAuthWebhookRetryBackoff}: 0.5 s, factor 1.5, 5 steps.
RETRY_INITIAL, RETRY_FACTOR, RETRY_STEPS = 0.5, 1.5, 5


@dataclass
class WebhookClientConfig:
    """
    What the kubeconfig says about reaching the webhook.

    @ivar server: the URL to POST to.
    @ivar ca_pem: C{certificate-authority(-data)} PEM, or C{None} (platform roots).
    """

    server: str
    ca_pem: Optional[bytes] = None
    cert_pem: Optional[bytes] = None
    key_pem: Optional[bytes] = None
    token: str = ""
    insecure: bool = False


def load_webhook_kubeconfig(path: str) -> WebhookClientConfig:
    """
    The current context's cluster and user of a kubeconfig file (paths relative to the
    file); upstream C{webhookutil.LoadKubeconfig}.

    @raise ValueError: unreadable or incomplete file, in one line.
    """
    try:
        with open(path, "rb") as f:
            doc = yaml.safe_load(f.read())
    except OSError as e:
        raise ValueError(f"invalid configuration: stat {path}: {e.strerror.lower()}") \
            from None
    except yaml.YAMLError as e:
        raise ValueError(f"error loading config file \"{path}\": "
                         f"{str(e).splitlines()[0]}") from None
    if not isinstance(doc, dict):
        raise ValueError(f'error loading config file "{path}": not a kubeconfig')
    base = os.path.dirname(os.path.abspath(path))

    def named(kind: str, name: Optional[str]) -> dict:
        items = [i for i in doc.get(kind) or [] if isinstance(i, dict)]
        for item in items:
            if name is None or item.get("name") == name:
                return item.get(kind[:-1]) or {}
        return {}

    current = doc.get("current-context")
    ctx = named("contexts", current) if current else {}
    cluster = named("clusters", ctx.get("cluster") if ctx else None)
    user = named("users", ctx.get("user") if ctx else None)
    server = cluster.get("server") or ""
    if not server:
        raise ValueError("invalid configuration: no configuration has been provided, try "
                         "setting KUBERNETES_MASTER environment variable")

    def blob(section: dict, key: str) -> Optional[bytes]:
        data = section.get(key + "-data")
        if data:
            try:
                return base64.b64decode(data)
            except (ValueError, TypeError):
                raise ValueError(f"invalid configuration: {key}-data is not base64") from None
        file = section.get(key)
        if file:
            full = file if os.path.isabs(file) else os.path.join(base, file)
            try:
                with open(full, "rb") as f:
                    return f.read()
            except OSError as e:
                raise ValueError(f"invalid configuration: unable to read {key} {full} for "
                                 f"{os.path.basename(path)} due to open {full}: "
                                 f"{e.strerror.lower()}") from None
        return None

    return WebhookClientConfig(
        server=server, ca_pem=blob(cluster, "certificate-authority"),
        cert_pem=blob(user, "client-certificate"), key_pem=blob(user, "client-key"),
        token=str(user.get("token") or ""),
        insecure=bool(cluster.get("insecure-skip-tls-verify")))


class WebhookError(Exception):
    """A failed TokenReview call; C{retryable} for connection errors, 429 and 5xx."""

    def __init__(self, message: str, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


@implementer(ITokenAuthenticator)
class WebhookTokenAuthenticator:
    """See the module docstring."""

    def __init__(self, post: Callable[[bytes], Any], version: str, implicit_audiences: list,
                 cache_ttl: float, clock: Any, url: str = "") -> None:
        """
        @param post: C{body -> Deferred of (status code, body bytes)} (L{treq_poster}).
        @param version: C{v1} or C{v1beta1}.
        @param implicit_audiences: C{--api-audiences}.
        @param cache_ttl: seconds (0: no cache).
        @param clock: C{IReactorTime}.
        @param url: the webhook's URL (for error messages).
        """
        self.url = url
        self.post = post
        self.api_version = f"authentication.k8s.io/{version}"
        self.implicit_audiences = list(implicit_audiences)
        self.cache_ttl = cache_ttl
        self.clock = clock
        self._cache: dict[bytes, tuple[float, Optional[UserInfo]]] = {}

    def authenticate_token(self, token: str) -> "defer.Deferred[UserInfo | None]":
        """
        @return: a Deferred of the webhook's user, of C{None} when it does not authenticate
            the token; it fails with L{AuthenticationError} (C{status.error}, or the call's
            failure after the retries).
        """
        # upstream's authentication filter puts the API audiences on every request's context
        wanted = audiences_from() or self.implicit_audiences or None
        key = hashlib.sha256(json.dumps([token, wanted]).encode()).digest()
        now = self.clock.seconds()
        hit = self._cache.get(key)
        if hit is not None and hit[0] > now:
            return defer.succeed(hit[1])
        return defer.ensureDeferred(self._review(token, wanted, key))

    async def _review(self, token: str, wanted: Optional[list], key: bytes) \
            -> Optional[UserInfo]:
        spec: dict[str, Any] = {"token": token}
        if wanted:
            spec["audiences"] = list(wanted)
        body = json.dumps({"kind": "TokenReview", "apiVersion": self.api_version,
                           "metadata": {"creationTimestamp": None}, "spec": spec,
                           "status": {"user": {}}}).encode()
        delay = RETRY_INITIAL
        for attempt in range(RETRY_STEPS):
            try:
                code, data = await self.post(body)
                if code == 429 or code >= 500:
                    raise WebhookError(f"the server responded with the status code {code} but "
                                       f"did not return more information", True)
                if not 200 <= code < 300:
                    raise WebhookError(f"the server responded with the status code {code} but "
                                       f"did not return more information", False)
                break
            except WebhookError as e:
                if not e.retryable or attempt == RETRY_STEPS - 1:
                    raise AuthenticationError(str(e)) from None
            except AuthenticationError:
                raise
            except Exception as e:  # noqa: BLE001 -- connection errors of every kind
                if attempt == RETRY_STEPS - 1:
                    raise AuthenticationError(f'Post "{self.url}": {e}') from None
            await task.deferLater(self.clock, delay, lambda: None)
            delay *= RETRY_FACTOR
        try:
            review = json.loads(data)
            status = review.get("status") or {}
        except (ValueError, AttributeError):
            raise AuthenticationError("unable to decode the webhook's TokenReview") from None
        user: Optional[UserInfo] = None
        if wanted:
            got = status.get("audiences") or self.implicit_audiences
            if not [a for a in wanted if a in got]:
                self._remember(key, None)
                return None
        if not status.get("authenticated"):
            self._remember(key, None)
            if status.get("error"):
                raise AuthenticationError(str(status["error"]))
            return None
        u = status.get("user") or {}
        user = UserInfo(str(u.get("username") or ""), str(u.get("uid") or ""),
                        [str(g) for g in u.get("groups") or []],
                        {str(k): [str(x) for x in v or []]
                         for k, v in (u.get("extra") or {}).items()})
        self._remember(key, user)
        return user

    def _remember(self, key: bytes, user: Optional[UserInfo]) -> None:
        if self.cache_ttl > 0:
            now = self.clock.seconds()
            if len(self._cache) > 4096:
                self._cache = {k: v for k, v in self._cache.items() if v[0] > now}
            self._cache[key] = (now + self.cache_ttl, user)


def treq_poster(reactor: Any, config: WebhookClientConfig) -> Callable[[bytes], Any]:
    """C{body -> Deferred of (code, body)}: a JSON POST to the kubeconfig's server."""
    from kubetwist.authentication.httpclient import http_client, tls_policy

    client = http_client(reactor, tls_policy(config.ca_pem, config.cert_pem, config.key_pem,
                                             config.insecure))
    headers = {b"Content-Type": [b"application/json"], b"Accept": [b"application/json"]}
    if config.token:
        headers[b"Authorization"] = [b"Bearer " + config.token.encode()]

    async def post(body: bytes) -> tuple[int, bytes]:
        response = await client.post(config.server, data=body, headers=headers, timeout=30)
        return response.code, await response.content()

    return lambda body: defer.ensureDeferred(post(body))


__all__ = ["VERSIONS", "WebhookClientConfig", "WebhookTokenAuthenticator",
           "load_webhook_kubeconfig", "treq_poster"]
