# -*- test-case-name: tests.apiextensions.test_conversion -*-
"""
Custom resource conversion between versions: upstream
C{k8s.io/apiextensions-apiserver/pkg/apiserver/conversion} (C{converter.go},
C{nop_converter.go}, C{webhook_converter.go}) and the storage wrapper that makes a
version-agnostic L{IStorage} look like one version (upstream's storage codec: encode to the
storage version, decode from whatever version an object was stored in).

Strategies:
  - C{None}: only C{apiVersion} is rewritten.
  - C{Webhook}: a C{ConversionReview} (C{apiextensions.k8s.io/v1}) is POSTed to the CRD's
    C{webhook.clientConfig}: C{url} is used as given; a C{service} reference becomes
    C{https://<name>.<namespace>.svc:<port><path>}, which only resolves where cluster DNS does
    (kubetwist runs no cluster DNS, so serve conversion webhooks by C{url}).  The server
    certificate is verified against the C{caBundle} only (system roots when it is empty).
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from twisted.internet.defer import Deferred
from zope.interface import implementer

from kubetwist.runtime import errors
from kubetwist.storage import interfaces as st

#: Seconds a conversion webhook may take (upstream's 30 s default).
WEBHOOK_TIMEOUT = 30


class ConversionError(Exception):
    """A conversion failed; the message is upstream's (C{conversion webhook for ... failed:
    ...})."""


def _gvk(api_version: str, kind: str) -> str:
    """Go's C{schema.GroupVersionKind.String()}: C{example.com/v1, Kind=Foo}."""
    return f"{api_version}, Kind={kind}"


class NoneConverter:
    """Strategy C{None}: rewrite C{apiVersion} (upstream C{nopConverter})."""

    async def convert(self, objects: list[dict], to_api_version: str) -> list[dict]:
        """Each object with C{apiVersion} set to C{to_api_version} (copies only where needed)."""
        out = []
        for obj in objects:
            if obj.get("apiVersion") != to_api_version:
                obj = dict(obj)
                obj["apiVersion"] = to_api_version
            out.append(obj)
        return out

    def convert_sync(self, obj: dict, to_api_version: str) -> dict:
        if obj.get("apiVersion") == to_api_version:
            return obj
        obj = dict(obj)
        obj["apiVersion"] = to_api_version
        return obj


def webhook_url(client_config: dict) -> str:
    """The URL to POST a ConversionReview to, from a C{WebhookClientConfig}."""
    if client_config.get("url"):
        return client_config["url"]
    svc = client_config.get("service") or {}
    path = svc.get("path") or ""
    return f"https://{svc.get('name')}.{svc.get('namespace')}.svc:{svc.get('port', 443)}{path}"


def tls_http_client(reactor: Any, ca_bundle: bytes | None) -> Any:
    """A treq C{HTTPClient} whose TLS trusts only C{ca_bundle} (PEM; several certificates
    allowed), or the platform's roots when C{ca_bundle} is empty."""
    from treq.client import HTTPClient
    from twisted.internet import ssl
    from twisted.web.client import Agent, BrowserLikePolicyForHTTPS

    if ca_bundle:
        pems = [b"-----BEGIN CERTIFICATE-----" + chunk for chunk in
                ca_bundle.split(b"-----BEGIN CERTIFICATE-----")[1:]]
        root = ssl.trustRootFromCertificates([ssl.Certificate.loadPEM(p) for p in pems])
        policy = BrowserLikePolicyForHTTPS(trustRoot=root)
    else:
        policy = BrowserLikePolicyForHTTPS()
    return HTTPClient(Agent(reactor, contextFactory=policy))


class WebhookConverter:
    """
    Strategy C{Webhook} (upstream C{webhookConverter}).

    @param crd: the CRD (its C{spec.conversion.webhook} is read once, here).
    @param client_factory: C{ca_bundle_pem_or_None -> treq HTTPClient} (injected; the process
        passes L{tls_http_client} bound to its reactor).
    @param reactor: for the request timeout, or L{None} for none.
    """

    def __init__(self, crd: dict, client_factory: Callable[[bytes | None], Any],
                 reactor: Any = None) -> None:
        import base64

        webhook = ((crd.get("spec") or {}).get("conversion") or {}).get("webhook") or {}
        cc = webhook.get("clientConfig") or {}
        self.url = webhook_url(cc)
        bundle = cc.get("caBundle") or ""
        self.ca_bundle = base64.b64decode(bundle) if bundle else None
        self.client = client_factory(self.ca_bundle)
        self.reactor = reactor
        self.review_versions = webhook.get("conversionReviewVersions") or ["v1"]

    async def convert(self, objects: list[dict], to_api_version: str) -> list[dict]:
        """
        Convert C{objects} to C{to_api_version} with one ConversionReview (objects already in
        that version are not sent).

        @raise ConversionError: transport failure, non-200, a malformed or failed review, a
            wrong uid, count, apiVersion or kind in the answer.
        """
        todo = [i for i, o in enumerate(objects) if o.get("apiVersion") != to_api_version]
        if not todo:
            return list(objects)
        sent = [objects[i] for i in todo]
        kind = sent[0].get("kind", "")
        where = _gvk(to_api_version, kind)
        uid = str(uuid.uuid4())
        review_version = "v1" if "v1" in self.review_versions else "v1beta1"
        review = {"kind": "ConversionReview",
                  "apiVersion": f"apiextensions.k8s.io/{review_version}",
                  "request": {"uid": uid, "desiredAPIVersion": to_api_version, "objects": sent}}
        kwargs: dict[str, Any] = {}
        if self.reactor is not None:
            kwargs = {"timeout": WEBHOOK_TIMEOUT, "reactor": self.reactor}
        try:
            response = await self.client.post(
                self.url, data=json.dumps(review).encode(),
                headers={b"Content-Type": [b"application/json"],
                         b"Accept": [b"application/json"]}, **kwargs)
            body = await response.content()
        except Exception as e:  # transport: connection refused, TLS verification, timeout
            raise ConversionError(f"conversion webhook for {where} failed: Post "
                                  f"\"{self.url}\": {e}") from None
        if response.code != 200:
            raise ConversionError(f"conversion webhook for {where} failed: conversion webhook "
                                  f"response was not 200: {response.code}")
        try:
            answer = json.loads(body)
            resp = answer["response"]
        except (ValueError, KeyError, TypeError):
            raise ConversionError(f"conversion webhook for {where} returned invalid response: "
                                  f"{body[:200]!r}") from None
        if resp.get("uid") != uid:
            raise ConversionError(f"conversion webhook for {where} failed: expected "
                                  f"response.uid=\"{uid}\", got \"{resp.get('uid')}\"")
        result = resp.get("result") or {}
        if result.get("status") != "Success":
            raise ConversionError(f"conversion webhook for {where} failed: "
                                  f"{result.get('message', '')}")
        converted = resp.get("convertedObjects") or []
        if len(converted) != len(sent):
            raise ConversionError(f"conversion webhook for {where} failed: returned "
                                  f"{len(converted)} objects, expected {len(sent)}")
        out = list(objects)
        for n, (i, obj) in enumerate(zip(todo, converted)):
            original = objects[i]
            if obj.get("apiVersion") != to_api_version:
                raise ConversionError(
                    f"conversion webhook for {where} failed: invalid converted object at index "
                    f"{n}: invalid groupVersion (expected {to_api_version}, received "
                    f"{obj.get('apiVersion')})")
            if obj.get("kind") != original.get("kind"):
                raise ConversionError(
                    f"conversion webhook for {where} failed: invalid converted object at index "
                    f"{n}: invalid kind (expected {original.get('kind')}, received "
                    f"{obj.get('kind')})")
            out[i] = _restore_object_meta(original, obj)
        return out


def _restore_object_meta(original: dict, converted: dict) -> dict:
    """Upstream C{restoreObjectMeta}: a webhook may change only labels and annotations."""
    meta = copy.deepcopy(original.get("metadata") or {})
    cmeta = converted.get("metadata") or {}
    for key in ("labels", "annotations"):
        if cmeta.get(key):
            meta[key] = cmeta[key]
        else:
            meta.pop(key, None)
    out = dict(converted)
    out["metadata"] = meta
    return out


def converter_for(crd: dict, client_factory: Callable[[bytes | None], Any] | None = None,
                  reactor: Any = None) -> Any:
    """The converter of C{crd}'s C{spec.conversion.strategy}."""
    strategy = ((crd.get("spec") or {}).get("conversion") or {}).get("strategy", "None")
    if strategy == "Webhook" and client_factory is not None:
        return WebhookConverter(crd, client_factory, reactor)
    return NoneConverter()


async def _convert_one(converter: Any, obj: dict | None, api_version: str) -> dict | None:
    if obj is None:
        return None
    try:
        return (await converter.convert([obj], api_version))[0]
    except ConversionError as e:
        raise errors.new_internal_error(str(e)) from None


@implementer(st.IStorage)
class ConvertingStorage:
    """
    An L{IStorage} over C{inner} that stores objects in C{storage_api_version} and hands out
    objects in C{served_api_version}, converting with C{converter} both ways; C{on_read} is
    applied to every object read (defaulting on read).

    Conversion failures are 500 C{InternalError}s (upstream: the webhook error text).  Watch
    events are converted in order; a failed conversion ends the watch with an ERROR event.
    """

    def __init__(self, inner: Any, converter: Any, storage_api_version: str,
                 served_api_version: str, on_read: Callable[[dict], None] | None = None) -> None:
        self.inner = inner
        self.converter = converter
        self.storage_api_version = storage_api_version
        self.served_api_version = served_api_version
        self.on_read = on_read
        self.name = getattr(inner, "name", "converting")

    async def _out(self, obj: dict | None) -> dict | None:
        obj = await _convert_one(self.converter, obj, self.served_api_version)
        if obj is not None and self.on_read is not None:
            self.on_read(obj)
        return obj

    async def _in(self, obj: dict) -> dict:
        return await _convert_one(self.converter, obj, self.storage_api_version)  # type: ignore

    def get(self, key: str, resource_version: str = "", ignore_not_found: bool = False) -> Deferred:
        async def run() -> dict | None:
            return await self._out(await self.inner.get(key, resource_version, ignore_not_found))
        return Deferred.fromCoroutine(run())

    def get_list(self, key: str, recursive: bool = True, resource_version: str = "",
                 resource_version_match: str = "", limit: int = 0, continue_token: str = "",
                 predicate: st.SelectionPredicate = st.EVERYTHING) -> Deferred:
        async def run() -> st.ListResult:
            result = await self.inner.get_list(
                key, recursive=recursive, resource_version=resource_version,
                resource_version_match=resource_version_match, limit=limit,
                continue_token=continue_token, predicate=predicate)
            try:
                items = await self.converter.convert(list(result.items), self.served_api_version)
            except ConversionError as e:
                raise errors.new_internal_error(str(e)) from None
            if self.on_read is not None:
                for item in items:
                    self.on_read(item)
            result.items = items
            return result
        return Deferred.fromCoroutine(run())

    def create(self, key: str, obj: dict) -> Deferred:
        async def run() -> dict:
            return await self._out(await self.inner.create(key, await self._in(obj)))
        return Deferred.fromCoroutine(run())

    def delete(self, key: str, preconditions: st.Preconditions | None = None,
               validate_deletion: Callable | None = None) -> Deferred:
        async def run() -> dict:
            return await self._out(await self.inner.delete(key, preconditions, validate_deletion))
        return Deferred.fromCoroutine(run())

    def guaranteed_update(self, key: str, try_update: Callable,
                          preconditions: st.Preconditions | None = None,
                          ignore_not_found: bool = False) -> Deferred:
        async def wrapped(current: dict | None) -> dict:
            new = try_update(await self._out(current))
            if isinstance(new, Deferred) or hasattr(new, "__await__"):
                new = await new
            return await self._in(new)

        async def run() -> dict:
            out = await self.inner.guaranteed_update(
                key, lambda cur: Deferred.fromCoroutine(wrapped(cur)), preconditions,
                ignore_not_found)
            return await self._out(out)
        return Deferred.fromCoroutine(run())

    def watch(self, key: str, resource_version: str = "", recursive: bool = False,
              predicate: st.SelectionPredicate = st.EVERYTHING) -> st.Watch:
        inner = self.inner.watch(key, resource_version, recursive, predicate)
        outer = st.Watch(on_stop=inner.stop)
        sync = getattr(self.converter, "convert_sync", None)
        chain: list[Deferred] = []

        def convert(obj: dict) -> dict:
            assert sync is not None
            obj = sync(obj, self.served_api_version)
            if self.on_read is not None:
                obj = copy.deepcopy(obj)
                self.on_read(obj)
            return obj

        def on_event(ev: st.WatchEvent) -> None:
            if ev.type in ("ERROR", "BOOKMARK"):
                deliver(ev)
                return
            if sync is not None:
                outer.send(st.WatchEvent(ev.type, convert(ev.object)))
                return

            async def later() -> None:
                try:
                    obj = await self._out(copy.deepcopy(ev.object))
                except errors.StatusError as e:
                    outer.send(st.WatchEvent("ERROR", e.status))
                    outer.close()
                    return
                outer.send(st.WatchEvent(ev.type, obj))
            enqueue(later)

        def deliver(ev: st.WatchEvent) -> None:
            if sync is not None or not chain:
                outer.send(ev)
            else:
                enqueue(lambda: _send_now(outer, ev))

        def enqueue(step: Callable[[], Awaitable[None]]) -> None:
            prev = chain[-1] if chain else None

            async def run() -> None:
                if prev is not None:
                    await prev
                await step()
            d = Deferred.fromCoroutine(run())
            chain[:] = [d]

        def ended(_: Any) -> None:
            if chain:
                chain[-1].addBoth(lambda _: outer.close())
            else:
                outer.close()

        inner.subscribe(on_event)
        inner.done.addBoth(ended)
        return outer

    def count(self, key: str) -> Deferred:
        return self.inner.count(key)

    def current_revision(self) -> Deferred:
        return self.inner.current_revision()

    def stop(self) -> Any:
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def _send_now(watch: st.Watch, ev: st.WatchEvent) -> None:
    watch.send(ev)
