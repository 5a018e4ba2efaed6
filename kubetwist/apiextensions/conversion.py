# -*- test-case-name: tests.apiextensions.test_conversion -*-
"""
Custom resource conversion between versions: upstream
C{k8s.io/apiextensions-apiserver/pkg/apiserver/conversion} (C{converter.go},
C{nop_converter.go}, C{webhook_converter.go}), and the converter through which the one
L{ConvertingStorage} (L{kubetwist.registry.generic.versioned}) makes the storage version's
L{IStorage} look like one served version (upstream's storage codec: encode to the storage
version, decode from whatever version an object was stored in).

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
from collections.abc import Callable
from typing import Any

from twisted.internet.defer import Deferred

from kubetwist.registry.generic.versioned import ConvertingStorage
from kubetwist.runtime import errors

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
    @param reactor: for the request timeout, or C{None} for none.
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
        for n, (i, obj) in enumerate(zip(todo, converted, strict=False)):
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


def _internal(e: ConversionError) -> errors.StatusError:
    return errors.new_internal_error(str(e))


class CustomResourceConverter:
    """
    The converter of one served version of a custom resource for
    L{kubetwist.registry.generic.versioned.ConvertingStorage}: C{converter} (L{NoneConverter}
    or L{WebhookConverter}) between C{storage_api_version} and C{served_api_version}, with
    C{on_read} (defaulting on read) applied to every object read, on a copy of its own.

    Synchronous (the storage's fast path: inline conversion, field selectors on the served
    form) when C{converter} has C{convert_sync}; else every conversion is a Deferred, and one
    list is one ConversionReview.  Conversion failures are 500 C{InternalError}s with
    upstream's webhook error text.
    """

    def __init__(self, converter: Any, storage_api_version: str, served_api_version: str,
                 on_read: Callable[[dict], None] | None = None) -> None:
        self.converter = converter
        self.storage_api_version = storage_api_version
        self.served_api_version = served_api_version
        self.on_read = on_read
        self._sync = getattr(converter, "convert_sync", None)
        self.synchronous = self._sync is not None

    def _read(self, obj: dict) -> dict:
        if self.on_read is not None:
            obj = copy.deepcopy(obj)
            self.on_read(obj)
        return obj

    def to_storage(self, obj: dict) -> Any:
        """C{obj} in the storage version: a dict, or a Deferred of one (a webhook)."""
        if self._sync is not None:
            return self._sync(obj, self.storage_api_version)
        return self._async([obj], self.storage_api_version, False).addCallback(lambda r: r[0])

    def from_storage(self, obj: dict) -> Any:
        """C{obj} in the served version, defaulted: a dict, or a Deferred of one."""
        if self._sync is not None:
            return self._read(self._sync(obj, self.served_api_version))
        return self._async([obj], self.served_api_version, True).addCallback(lambda r: r[0])

    def from_storage_list(self, items: list[dict]) -> Any:
        """The served form of a list's items (one ConversionReview for them all)."""
        if self._sync is not None:
            return [self.from_storage(i) for i in items]
        return self._async(items, self.served_api_version, True)

    def _async(self, objects: list[dict], api_version: str, read: bool) -> Deferred:
        async def run() -> list[dict]:
            if not objects:
                return []
            try:
                out = await self.converter.convert(objects, api_version)
            except ConversionError as e:
                raise _internal(e) from None
            return [self._read(o) for o in out] if read else out
        return Deferred.fromCoroutine(run())


def converting_storage(inner: Any, converter: Any, storage_api_version: str,
                       served_api_version: str,
                       on_read: Callable[[dict], None] | None = None) -> ConvertingStorage:
    """
    The L{ConvertingStorage} of one served version of a custom resource over C{inner} (the
    storage version's storage): see L{CustomResourceConverter}.
    """
    return ConvertingStorage(inner, CustomResourceConverter(
        converter, storage_api_version, served_api_version, on_read))
