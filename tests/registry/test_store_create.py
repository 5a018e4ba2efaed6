"""
Tests for L{kubetwist.registry.generic.store.Store.create}: upstream C{Store.Create} with
C{createWithGenerateNameRetry} (RetryGenerateName, GA in v1.32), C{CheckGeneratedNameError}
and the C{object is being deleted} prefix.
"""

from __future__ import annotations

from twisted.internet.defer import Deferred
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core import register as core
from kubetwist.registry.generic.store import MAX_NAME_GENERATION_CREATE_ATTEMPTS, Store
from kubetwist.runtime import errors
from kubetwist.storage.sqlite import SQLiteStorage
from tests.support import FakeReactorClock, InlinePool


def _spec(resources, name):
    return next(r for r in resources if r.resource == name)


class ScriptedNames:
    """A name generator that answers C{base + suffix} for the given suffixes, in order."""

    def __init__(self, *suffixes: str) -> None:
        self.suffixes = list(suffixes)
        self.calls: list[str] = []

    def __call__(self, base: str) -> str:
        self.calls.append(base)
        return base + self.suffixes.pop(0)


class GenerateNameTests(SynchronousTestCase):
    """Creates with C{generateName} over in-memory SQLite."""

    def setUp(self) -> None:
        self.clock = FakeReactorClock()
        self.clock.advance(1_700_000_000)
        self.storage = SQLiteStorage(self.clock, ":memory:", threadpool=InlinePool())
        self.cms = Store(_spec(core.RESOURCES, "configmaps"), core.STRATEGIES["configmaps"],
                         self.storage, self.clock)

    def create(self, meta: dict, dry_run: bool = False) -> Deferred:
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": dict(meta)}
        return Deferred.fromCoroutine(self.cms.create("default", body, dry_run=dry_run))

    def existing(self, *names: str) -> None:
        for name in names:
            self.successResultOf(self.create({"name": name}))

    def test_clash_is_retried_with_a_new_name(self):
        """A generated name that exists is generated again: the create succeeds with the
        next name that is free."""
        self.existing("web-aaaaa", "web-bbbbb")
        names = self.cms.name_generator = ScriptedNames("aaaaa", "bbbbb", "ccccc")
        out = self.successResultOf(self.create({"generateName": "web-"}))
        self.assertEqual(out["metadata"]["name"], "web-ccccc")
        self.assertEqual(out["metadata"]["generateName"], "web-")
        self.assertEqual(names.calls, ["web-"] * 3)

    def test_dry_run_retries_too(self):
        """A dry run refuses an existing generated name the same way, so it retries too."""
        self.existing("web-aaaaa")
        self.cms.name_generator = ScriptedNames("aaaaa", "bbbbb")
        out = self.successResultOf(self.create({"generateName": "web-"}, dry_run=True))
        self.assertEqual(out["metadata"]["name"], "web-bbbbb")

    def test_gives_up_after_eight_attempts(self):
        """After upstream's eight attempts the last clash is answered: 409 AlreadyExists with
        the generated-name message and C{retryAfterSeconds: 1}."""
        self.assertEqual(MAX_NAME_GENERATION_CREATE_ATTEMPTS, 8)
        self.existing("web-aaaaa")
        names = self.cms.name_generator = ScriptedNames(*["aaaaa"] * 9)
        err = self.failureResultOf(self.create({"generateName": "web-"}),
                                   errors.StatusError).value
        self.assertEqual(len(names.calls), 8)
        self.assertEqual(err.status, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": 'configmaps "web-aaaaa" already exists, the server was not able to '
                       "generate a unique name for the object",
            "reason": "AlreadyExists",
            "details": {"name": "web-aaaaa", "kind": "configmaps", "retryAfterSeconds": 1},
            "code": 409})

    def test_given_name_is_not_retried(self):
        """With a name given no name is generated and nothing is retried, but a
        C{generateName} still selects the generated-name message (upstream
        C{CheckGeneratedNameError} looks only at C{generateName})."""
        self.existing("c1")
        names = self.cms.name_generator = ScriptedNames()
        err = self.failureResultOf(self.create({"name": "c1", "generateName": "c"}),
                                   errors.StatusError).value
        self.assertEqual(names.calls, [])
        self.assertEqual(err.status["message"],
                         'configmaps "c1" already exists, the server was not able to generate '
                         "a unique name for the object")

    def test_plain_already_exists(self):
        """Without C{generateName} the clash is the plain AlreadyExists."""
        self.existing("c1")
        err = self.failureResultOf(self.create({"name": "c1"}), errors.StatusError).value
        self.assertEqual(err.status["message"], 'configmaps "c1" already exists')
        self.assertEqual(err.status["details"], {"name": "c1", "kind": "configmaps"})

    def test_object_being_deleted(self):
        """A clash with an object pending deletion says so first."""
        self.successResultOf(self.create({"name": "fin", "finalizers": ["a/b"]}))
        self.successResultOf(Deferred.fromCoroutine(self.cms.delete("default", "fin")))
        err = self.failureResultOf(self.create({"name": "fin"}), errors.StatusError).value
        self.assertEqual(err.status["message"],
                         'object is being deleted: configmaps "fin" already exists')
        err = self.failureResultOf(self.create({"name": "fin"}, dry_run=True),
                                   errors.StatusError).value
        self.assertEqual(err.status["message"],
                         'object is being deleted: configmaps "fin" already exists')


class BeginCreateRollbackTests(SynchronousTestCase):
    """Allocations of the C{before_create} hooks are undone (the C{after_delete} hooks run)
    whenever the create fails after them, as upstream's C{finishCreate(ctx, false)}."""

    def setUp(self) -> None:
        self.clock = FakeReactorClock()
        self.storage = SQLiteStorage(self.clock, ":memory:", threadpool=InlinePool())
        self.cms = Store(_spec(core.RESOURCES, "configmaps"), core.STRATEGIES["configmaps"],
                         self.storage, self.clock)
        self.events: list[tuple[str, str]] = []

        async def allocate(obj, dry_run):
            self.events.append(("allocate", obj["metadata"].get("name", "")))

        self.cms.before_create.append(allocate)
        self.cms.after_delete.append(
            lambda obj: self.events.append(("release", obj["metadata"]["name"])))
        self.cms.after_create.append(
            lambda obj: self.events.append(("created", obj["metadata"]["name"])))

    def create(self, name: str, admission=None) -> Deferred:
        from kubetwist.registry.generic.store import NO_ADMISSION

        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
        return Deferred.fromCoroutine(self.cms.create("default", body,
                                                      admission or NO_ADMISSION))

    def test_refused_by_validating_admission(self):
        """A validating admission refusal releases what the hooks allocated."""
        from kubetwist.registry.generic.store import Admission

        async def refuse(operation, obj, old):
            raise errors.new_forbidden("", "configmaps", obj["metadata"]["name"], "no")

        self.failureResultOf(self.create("a", Admission(validate=refuse)), errors.StatusError)
        self.assertEqual(self.events, [("allocate", "a"), ("release", "a")])

    def test_already_exists(self):
        """A name clash releases them too; a success keeps them."""
        self.successResultOf(self.create("a"))
        self.failureResultOf(self.create("a"), errors.StatusError)
        self.assertEqual(self.events, [("allocate", "a"), ("created", "a"),
                                       ("allocate", "a"), ("release", "a")])
