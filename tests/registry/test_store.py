# -*- test-case-name: tests.registry.test_store -*-
"""
Tests for L{kubetwist.registry.generic.store.Store}, the generic registry store (upstream
C{k8s.io/apiserver/pkg/registry/generic/registry/store.go} with C{pkg/registry/rest}):
create, get, update, delete and list of one resource over the embedded storage, with
preconditions, finalizers, C{generateName}, dry run and admission.  Deletion's propagation
policies and graceful deletion have their own module, L{tests.registry.test_store_delete}.
"""

from __future__ import annotations

from typing import Optional

from twisted.internet.defer import Deferred
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apimachinery.meta import format_rfc3339
from kubetwist.apis.core import register as core
from kubetwist.registry.generic.store import Admission, ListOptions, Store, omit_empty_meta
from kubetwist.runtime import errors
from kubetwist.storage import interfaces as st
from kubetwist.storage.sqlite import SQLiteStorage
from tests.support import FakeReactorClock, InlinePool

T0 = 1_700_000_000


def _spec(name: str):
    return next(r for r in core.RESOURCES if r.resource == name)


def _cm(name: str = "a", data: Optional[dict] = None, **meta) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, **meta}, "data": data or {"k": "v"}}


class StoreTestCase(SynchronousTestCase):
    """A ConfigMap store and a Namespace store over in-memory SQLite on a fake clock."""

    def setUp(self) -> None:
        self.clock = FakeReactorClock()
        self.clock.advance(T0)
        self.storage = SQLiteStorage(self.clock, ":memory:", threadpool=InlinePool())
        self.cms = Store(_spec("configmaps"), core.STRATEGIES["configmaps"], self.storage,
                         self.clock)

    def wait(self, coro):
        return self.successResultOf(Deferred.fromCoroutine(coro))

    def fail_with(self, coro) -> errors.StatusError:
        return self.failureResultOf(Deferred.fromCoroutine(coro), errors.StatusError).value

    def create(self, obj: dict, namespace: str = "default", **kw) -> dict:
        return self.wait(self.cms.create(namespace, obj, **kw))

    def replace_with(self, body: dict):
        """A PUT-style transform: the new object is C{body} whatever the current one is."""
        async def transform(current: Optional[dict]) -> dict:
            return dict(body)
        return transform


class CreateTests(StoreTestCase):
    """L{Store.create}: upstream C{Store.Create} and C{rest.BeforeCreate}."""

    def test_create_fills_system_fields(self) -> None:
        """
        The stored object is typed (apiVersion and kind first), in the request's namespace,
        with a uid, the clock's creationTimestamp and the storage's resourceVersion.
        """
        out = self.create(_cm())
        self.assertEqual(list(out)[:2], ["apiVersion", "kind"])
        meta = out["metadata"]
        self.assertEqual((meta["name"], meta["namespace"], meta["creationTimestamp"]),
                         ("a", "default", format_rfc3339(T0)))
        self.assertRegex(meta["uid"], r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-")
        self.assertTrue(meta["resourceVersion"].isdigit())
        self.assertEqual(self.wait(self.cms.get("default", "a")), out)

    def test_client_system_fields_are_replaced(self) -> None:
        """A client's uid, creationTimestamp, selfLink and deletion fields do not survive."""
        out = self.create(_cm(uid="mine", creationTimestamp="2000-01-01T00:00:00Z",
                              selfLink="/x", deletionTimestamp="2000-01-01T00:00:00Z",
                              deletionGracePeriodSeconds=3))
        meta = out["metadata"]
        self.assertNotEqual(meta["uid"], "mine")
        self.assertEqual(meta["creationTimestamp"], format_rfc3339(T0))
        for key in ("selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"):
            self.assertNotIn(key, meta)

    def test_existing_name_is_already_exists(self) -> None:
        """A second create of a name is 409 AlreadyExists with upstream's message."""
        self.create(_cm())
        err = self.fail_with(self.cms.create("default", _cm()))
        self.assertEqual((err.code, err.reason, err.message),
                         (409, "AlreadyExists", 'configmaps "a" already exists'))

    def test_namespace_mismatch_is_bad_request(self) -> None:
        """An object naming another namespace than the URL's is 400 BadRequest."""
        err = self.fail_with(self.cms.create("default", _cm(namespace="other")))
        self.assertEqual((err.code, err.reason, err.message), (
            400, "BadRequest",
            "the namespace of the provided object does not match the namespace sent on the "
            "request"))

    def test_missing_name_is_invalid(self) -> None:
        """Neither name nor generateName: 422 Invalid naming metadata.name."""
        obj = _cm()
        del obj["metadata"]["name"]
        err = self.fail_with(self.cms.create("default", obj))
        self.assertEqual((err.code, err.reason), (422, "Invalid"))
        self.assertEqual([c["field"] for c in err.status["details"]["causes"]],
                         ["metadata.name"])
        self.assertIn("name or generateName is required", err.message)

    def test_validation_error_is_invalid(self) -> None:
        """The strategy's validation errors are 422 Invalid with one cause each."""
        err = self.fail_with(self.cms.create("default", _cm(data={"bad key": "v"})))
        self.assertEqual((err.code, err.reason), (422, "Invalid"))
        self.assertEqual([c["field"] for c in err.status["details"]["causes"]], ["data[bad key]"])
        self.assertTrue(err.message.startswith('ConfigMap "a" is invalid: data[bad key]: '))

    def test_generate_name(self) -> None:
        """generateName gets upstream's five random characters; the name is stored."""
        obj = _cm()
        del obj["metadata"]["name"]
        obj["metadata"]["generateName"] = "web-"
        out = self.create(obj)
        name = out["metadata"]["name"]
        self.assertRegex(name, r"^web-[bcdfghjklmnpqrstvwxz2456789]{5}$")
        self.assertEqual(out["metadata"]["generateName"], "web-")
        self.assertEqual(self.wait(self.cms.get("default", name))["metadata"]["name"], name)

    def test_generate_name_keeps_given_name(self) -> None:
        """A name and a generateName: the name wins."""
        out = self.create(_cm(name="fixed", generateName="web-"))
        self.assertEqual(out["metadata"]["name"], "fixed")

    def test_dry_run_stores_nothing(self) -> None:
        """A dry-run create answers the object it would store, without a resourceVersion,
        and leaves storage alone."""
        out = self.create(_cm(), dry_run=True)
        self.assertEqual(out["metadata"]["name"], "a")
        self.assertNotIn("resourceVersion", out["metadata"])
        self.assertEqual(self.fail_with(self.cms.get("default", "a")).code, 404)

    def test_dry_run_refuses_existing_name(self) -> None:
        """A dry run still refuses a name that exists, as the real create would."""
        self.create(_cm())
        err = self.fail_with(self.cms.create("default", _cm(), dry_run=True))
        self.assertEqual((err.code, err.reason), (409, "AlreadyExists"))

    def test_admission_order(self) -> None:
        """Mutating admission runs before validation, validating admission after it, both
        with operation CREATE and no old object; a mutation is stored."""
        calls = []

        async def mutate(operation, obj, old):
            calls.append(("mutate", operation, old))
            obj["metadata"].setdefault("labels", {})["mutated"] = "yes"

        async def validate(operation, obj, old):
            calls.append(("validate", operation, old, obj["metadata"]["labels"]))

        out = self.create(_cm(), admission=Admission(mutate=mutate, validate=validate))
        self.assertEqual(calls, [("mutate", "CREATE", None),
                                 ("validate", "CREATE", None, {"mutated": "yes"})])
        self.assertEqual(out["metadata"]["labels"], {"mutated": "yes"})

    def test_validating_admission_refusal_stores_nothing(self) -> None:
        """An error from validating admission reaches the caller; nothing is stored."""
        async def refuse(operation, obj, old):
            raise errors.new_forbidden("", "configmaps", "a", "no")

        err = self.fail_with(self.cms.create("default", _cm(),
                                             admission=Admission(validate=refuse)))
        self.assertEqual(err.code, 403)
        self.assertEqual(self.fail_with(self.cms.get("default", "a")).code, 404)


class GetListTests(StoreTestCase):
    """L{Store.get} and L{Store.list}."""

    def test_get_missing_is_not_found(self) -> None:
        """A missing object is 404 NotFound with upstream's message."""
        err = self.fail_with(self.cms.get("default", "nope"))
        self.assertEqual((err.code, err.reason, err.message),
                         (404, "NotFound", 'configmaps "nope" not found'))

    def test_list_in_namespace_and_all(self) -> None:
        """A list is a ConfigMapList of untyped items in key order; a namespace's list holds
        only its objects, the all-namespaces list every object."""
        self.create(_cm("b"))
        self.create(_cm("a"))
        self.create(_cm("c"), namespace="other")
        listed = self.wait(self.cms.list("default", ListOptions()))
        self.assertEqual((listed["kind"], listed["apiVersion"]), ("ConfigMapList", "v1"))
        self.assertEqual([i["metadata"]["name"] for i in listed["items"]], ["a", "b"])
        self.assertNotIn("kind", listed["items"][0])
        self.assertTrue(listed["metadata"]["resourceVersion"].isdigit())
        everything = self.wait(self.cms.list("", ListOptions()))
        self.assertEqual([(i["metadata"]["namespace"], i["metadata"]["name"])
                          for i in everything["items"]],
                         [("default", "a"), ("default", "b"), ("other", "c")])

    def test_list_predicate(self) -> None:
        """The predicate selects the items."""
        self.create(_cm("a", labels={"app": "x"}))
        self.create(_cm("b", labels={"app": "y"}))
        predicate = st.SelectionPredicate(
            lambda o: o["metadata"].get("labels", {}).get("app") == "y")
        listed = self.wait(self.cms.list("default", ListOptions(predicate=predicate)))
        self.assertEqual([i["metadata"]["name"] for i in listed["items"]], ["b"])

    def test_list_pages(self) -> None:
        """limit pages the list: a continue token and remainingItemCount, then the rest."""
        for name in ("a", "b", "c"):
            self.create(_cm(name))
        first = self.wait(self.cms.list("default", ListOptions(limit=2)))
        self.assertEqual([i["metadata"]["name"] for i in first["items"]], ["a", "b"])
        self.assertEqual(first["metadata"]["remainingItemCount"], 1)
        rest = self.wait(self.cms.list("default", ListOptions(
            limit=2, continue_token=first["metadata"]["continue"])))
        self.assertEqual([i["metadata"]["name"] for i in rest["items"]], ["c"])
        self.assertNotIn("continue", rest["metadata"])
        self.assertNotIn("remainingItemCount", rest["metadata"])

    def test_bad_continue_is_bad_request(self) -> None:
        """A continue token that does not decode is 400 BadRequest."""
        err = self.fail_with(self.cms.list("default", ListOptions(limit=1,
                                                                   continue_token="!!")))
        self.assertEqual((err.code, err.reason), (400, "BadRequest"))


class UpdateTests(StoreTestCase):
    """L{Store.update}: upstream C{Store.Update} and C{rest.BeforeUpdate}."""

    def test_update_keeps_system_fields(self) -> None:
        """An update stores the new data under a new resourceVersion and keeps uid (when the
        body has none) and creationTimestamp (whatever the body says)."""
        old = self.create(_cm())
        self.clock.advance(60)
        body = _cm(data={"k": "w"}, creationTimestamp="2000-01-01T00:00:00Z",
                   resourceVersion=old["metadata"]["resourceVersion"])
        out, created = self.wait(self.cms.update("default", "a", self.replace_with(body)))
        self.assertFalse(created)
        self.assertEqual(out["data"], {"k": "w"})
        self.assertEqual(out["metadata"]["uid"], old["metadata"]["uid"])
        self.assertEqual(out["metadata"]["creationTimestamp"], format_rfc3339(T0))
        self.assertGreater(int(out["metadata"]["resourceVersion"]),
                           int(old["metadata"]["resourceVersion"]))
        self.assertEqual(self.wait(self.cms.get("default", "a")), out)

    def test_changed_uid_is_invalid(self) -> None:
        """A body with another uid is 422: metadata.uid is immutable."""
        old = self.create(_cm())
        body = _cm(uid="other", resourceVersion=old["metadata"]["resourceVersion"])
        err = self.fail_with(self.cms.update("default", "a", self.replace_with(body)))
        self.assertEqual((err.code, err.message), (
            422, 'ConfigMap "a" is invalid: metadata.uid: Invalid value: "other": '
                 'field is immutable'))

    def test_stale_resource_version_is_conflict(self) -> None:
        """A body with an old resourceVersion is 409 Conflict with the optimistic-lock
        message."""
        old = self.create(_cm())
        rv = old["metadata"]["resourceVersion"]
        self.wait(self.cms.update("default", "a", self.replace_with(
            _cm(data={"k": "1"}, resourceVersion=rv))))
        err = self.fail_with(self.cms.update("default", "a", self.replace_with(
            _cm(data={"k": "2"}, resourceVersion=rv))))
        self.assertEqual((err.code, err.reason, err.message), (
            409, "Conflict",
            'Operation cannot be fulfilled on configmaps "a": the object has been modified; '
            'please apply your changes to the latest version and try again'))

    def test_missing_object_is_not_found(self) -> None:
        """ConfigMaps do not create on update: a missing object is 404."""
        err = self.fail_with(self.cms.update("default", "a", self.replace_with(_cm())))
        self.assertEqual((err.code, err.reason), (404, "NotFound"))

    def test_force_allow_create(self) -> None:
        """With force_allow_create (server-side apply), a missing object is created."""
        out, created = self.wait(self.cms.update("default", "a", self.replace_with(_cm()),
                                                 force_allow_create=True))
        self.assertTrue(created)
        self.assertEqual(self.wait(self.cms.get("default", "a"))["metadata"]["uid"],
                         out["metadata"]["uid"])

    def test_name_mismatch_is_bad_request(self) -> None:
        """A body naming another object than the URL is 400 with upstream's message."""
        self.create(_cm())
        err = self.fail_with(self.cms.update("default", "a", self.replace_with(_cm("b"))))
        self.assertEqual((err.code, err.message), (
            400, "the name of the object (b) does not match the name on the URL (a)"))

    def test_transform_sees_current_copy(self) -> None:
        """The transform gets a copy of the stored object (a PATCH applies to it)."""
        self.create(_cm())
        seen = []

        async def patch(current):
            seen.append(current)
            current["data"]["k2"] = "v2"
            return current

        out, _ = self.wait(self.cms.update("default", "a", patch))
        self.assertEqual(out["data"], {"k": "v", "k2": "v2"})
        self.assertEqual(seen[0]["metadata"]["name"], "a")

    def test_dry_run_update_stores_nothing(self) -> None:
        """A dry-run update answers the new object; storage keeps the old one."""
        old = self.create(_cm())
        body = _cm(data={"k": "w"}, resourceVersion=old["metadata"]["resourceVersion"])
        out, _ = self.wait(self.cms.update("default", "a", self.replace_with(body),
                                           dry_run=True))
        self.assertEqual(out["data"], {"k": "w"})
        self.assertEqual(self.wait(self.cms.get("default", "a")), old)

    def test_admission_sees_old_object(self) -> None:
        """Admission gets operation UPDATE and the stored object as the old one."""
        self.create(_cm())
        calls = []

        async def record(operation, obj, old):
            calls.append((operation, old["data"], obj["data"]))

        async def patch(current):
            current["data"] = {"k": "new"}
            return current

        self.wait(self.cms.update("default", "a", patch,
                                  admission=Admission(mutate=record, validate=record)))
        self.assertEqual(calls, [("UPDATE", {"k": "v"}, {"k": "new"})] * 2)


class FinalizerTests(StoreTestCase):
    """Finalizers keep a deleted object until an update removes the last of them."""

    def test_delete_marks_then_update_removes(self) -> None:
        """A delete of an object with finalizers sets deletionTimestamp (grace 0) and keeps
        it; the update that removes the last finalizer deletes it."""
        self.create(_cm(finalizers=["example.com/hold"]))
        self.clock.advance(5)
        answer, deleted = self.wait(self.cms.delete("default", "a", {}))
        self.assertFalse(deleted)
        meta = answer["metadata"]
        self.assertEqual((meta["deletionTimestamp"], meta["deletionGracePeriodSeconds"]),
                         (format_rfc3339(T0 + 5), 0))
        kept = self.wait(self.cms.get("default", "a"))
        self.assertEqual(kept["metadata"]["finalizers"], ["example.com/hold"])

        async def drop(current):
            current["metadata"]["finalizers"] = []
            return current

        out, _ = self.wait(self.cms.update("default", "a", drop))
        self.assertNotIn("finalizers", out["metadata"])
        self.assertEqual(self.fail_with(self.cms.get("default", "a")).code, 404)

    def test_update_keeps_deletion_fields(self) -> None:
        """While finalizers remain, an update cannot clear deletionTimestamp."""
        self.create(_cm(finalizers=["example.com/a", "example.com/b"]))
        self.wait(self.cms.delete("default", "a", {}))

        async def tamper(current):
            current["metadata"]["finalizers"] = ["example.com/b"]
            del current["metadata"]["deletionTimestamp"]
            return current

        out, _ = self.wait(self.cms.update("default", "a", tamper))
        self.assertEqual(out["metadata"]["deletionTimestamp"], format_rfc3339(T0))
        self.assertEqual(out["metadata"]["finalizers"], ["example.com/b"])


class DeleteTests(StoreTestCase):
    """L{Store.delete} preconditions and the answer's shape."""

    def test_uid_precondition(self) -> None:
        """A uid precondition that does not match is 409 Conflict with upstream's message;
        the matching one deletes."""
        uid = self.create(_cm())["metadata"]["uid"]
        err = self.fail_with(self.cms.delete("default", "a",
                                             {"preconditions": {"uid": "other"}}))
        self.assertEqual((err.code, err.reason), (409, "Conflict"))
        self.assertEqual(err.message,
                         f'Operation cannot be fulfilled on ConfigMap "a": the UID in the '
                         f'precondition (other) does not match the UID in record ({uid}). The '
                         f'object might have been deleted and then recreated')
        _, deleted = self.wait(self.cms.delete("default", "a",
                                               {"preconditions": {"uid": uid}}))
        self.assertTrue(deleted)

    def test_missing_is_not_found(self) -> None:
        """Deleting a missing object is 404 NotFound."""
        err = self.fail_with(self.cms.delete("default", "a", {}))
        self.assertEqual((err.code, err.message), (404, 'configmaps "a" not found'))

    def test_dry_run_keeps_object(self) -> None:
        """A dry-run delete answers success and removes nothing."""
        self.create(_cm())
        answer, deleted = self.wait(self.cms.delete("default", "a", {"dryRun": ["All"]}))
        self.assertTrue(deleted)
        self.assertEqual(answer["status"], "Success")
        self.wait(self.cms.get("default", "a"))

    def test_delete_collection(self) -> None:
        """delete_collection removes the selected objects and answers the list as it was."""
        self.create(_cm("a", labels={"x": "1"}))
        self.create(_cm("b", labels={"x": "2"}))
        predicate = st.SelectionPredicate(lambda o: o["metadata"]["labels"]["x"] == "1")
        listed = self.wait(self.cms.delete_collection("default", ListOptions(predicate=predicate)))
        self.assertEqual([i["metadata"]["name"] for i in listed["items"]], ["a"])
        remaining = self.wait(self.cms.list("default", ListOptions()))
        self.assertEqual([i["metadata"]["name"] for i in remaining["items"]], ["b"])

    def test_hooks(self) -> None:
        """after_create and after_delete hooks see the stored and the removed object."""
        seen = []
        self.cms.after_create.append(lambda o: seen.append(("create", o["metadata"]["name"])))
        self.cms.after_delete.append(lambda o: seen.append(("delete", o["metadata"]["name"])))
        self.create(_cm())
        self.wait(self.cms.delete("default", "a", {}))
        self.assertEqual(seen, [("create", "a"), ("delete", "a")])


class KeysTests(SynchronousTestCase):
    """Storage keys and small helpers."""

    def test_keys(self) -> None:
        """Namespaced keys are C{<root>/<ns>/<name>}, cluster-scoped C{<root>/<name>}."""
        clock = FakeReactorClock()
        cms = Store(_spec("configmaps"), core.STRATEGIES["configmaps"], None, clock)
        nss = Store(_spec("namespaces"), core.STRATEGIES["namespaces"], None, clock)
        self.assertEqual((cms.key("ns", "a"), cms.prefix("ns"), cms.prefix("")),
                         ("/registry/configmaps/ns/a", "/registry/configmaps/ns/",
                          "/registry/configmaps/"))
        self.assertEqual(nss.key("", "kube-system"), "/registry/namespaces/kube-system")
        self.assertTrue(nss.has_pending_finalizers({"spec": {"finalizers": ["kubernetes"]}}))
        self.assertFalse(cms.has_pending_finalizers({"spec": {"finalizers": ["kubernetes"]}}))

    def test_omit_empty_meta(self) -> None:
        """Empty metadata fields are dropped as Go's omitempty does; creationTimestamp stays."""
        obj = {"metadata": {"name": "a", "labels": {}, "annotations": None, "finalizers": [],
                            "creationTimestamp": None}}
        omit_empty_meta(obj)
        self.assertEqual(obj, {"metadata": {"name": "a", "creationTimestamp": None}})
