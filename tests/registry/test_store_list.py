"""
Tests for L{kubetwist.registry.generic.store.Store.list} when its continue token was compacted
away (upstream C{etcd3.GetList}'s C{handleCompactedErrorForPaging} and the compactor of
C{storagebackend/factory/etcd3.go}), over the embedded store alone and behind the Cacher.
"""

from __future__ import annotations

import base64
import json

from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.task import Clock
from twisted.trial.unittest import TestCase

from kubetwist.apis.core import register as core
from kubetwist.registry.generic.store import ListOptions, Store
from kubetwist.runtime import errors
from kubetwist.storage.cacher import Cacher
from kubetwist.storage.compaction import CompactorService
from kubetwist.storage.sqlite import SQLiteStorage

#: kube-apiserver v1.32's answer (recorded) to a continue whose revision was compacted.
INCONSISTENT_CONTINUE_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted "
    "between the time the first chunk was returned and now may show up in the list."
)


def _spec(resources, name):
    return next(r for r in resources if r.resource == name)


class ExpiredContinueTests(TestCase):
    """A paged list of ConfigMaps, continued after two compactor rounds with no other write."""

    async def check(self, cached: bool) -> None:
        backend = SQLiteStorage(reactor, ":memory:")
        self.addCleanup(backend.stop)
        await backend.ready
        storage = backend
        if cached:
            storage = Cacher(backend, reactor)
            self.addCleanup(storage.stop)
        cms = Store(_spec(core.RESOURCES, "configmaps"), core.STRATEGIES["configmaps"],
                    storage, Clock())
        for name in ("a", "b", "c"):
            await cms.create("default", {"metadata": {"name": name}})
        first = await cms.list("default", ListOptions(limit=1))
        token = first["metadata"]["continue"]
        compactor = CompactorService(backend, Clock(), 300)
        self.assertEqual(await compactor.compact_once(), 0)  # bootstrap: nothing compacted
        self.assertGreater(await compactor.compact_once(),
                           int(first["metadata"]["resourceVersion"]))
        with self.assertRaises(errors.StatusError) as caught:
            await cms.list("default", ListOptions(limit=1, continue_token=token))
        status = caught.exception.status
        rest_token = status["metadata"]["continue"]
        self.assertEqual(status, {
            "kind": "Status", "apiVersion": "v1", "metadata": {"continue": rest_token},
            "status": "Failure", "message": INCONSISTENT_CONTINUE_MESSAGE,
            "reason": "Expired", "code": 410})
        self.assertEqual(json.loads(base64.urlsafe_b64decode(rest_token + "==")),
                         {"v": "meta.k8s.io/v1", "rv": -1, "start": "a\x00"})
        rest = await cms.list("default", ListOptions(limit=1, continue_token=rest_token))
        self.assertEqual([i["metadata"]["name"] for i in rest["items"]], ["b"])
        self.assertNotEqual(rest["metadata"]["resourceVersion"],
                            first["metadata"]["resourceVersion"])
        self.assertEqual(rest["metadata"]["remainingItemCount"], 1)

    def test_embedded_store(self):
        """Straight over the embedded store."""
        return Deferred.fromCoroutine(self.check(cached=False))

    def test_through_cacher(self):
        """Through the Cacher (the first page from its cache, the continue delegated)."""
        return Deferred.fromCoroutine(self.check(cached=True))
