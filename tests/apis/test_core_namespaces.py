"""Tests for L{kubetwist.apis.core.namespaces}."""

from __future__ import annotations

import copy

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core.namespaces import (
    NAMESPACE_FINALIZE_STRATEGY,
    NAMESPACE_STATUS_STRATEGY,
    NAMESPACE_STRATEGY,
    canonicalize_namespace,
)


def messages(errs) -> list[str]:
    return [e.error() for e in errs]


def create(obj: dict) -> tuple[dict, list]:
    obj = copy.deepcopy(obj)
    NAMESPACE_STRATEGY.default(obj)
    NAMESPACE_STRATEGY.prepare_for_create(obj)
    return obj, NAMESPACE_STRATEGY.validate(obj)


class NamespaceTests(SynchronousTestCase):
    def test_create(self) -> None:
        """A new namespace gets the name label, the kubernetes finalizer and phase Active."""
        obj, errs = create({"metadata": {"name": "dev"}, "status": {"phase": "Terminating"}})
        self.assertEqual(errs, [])
        self.assertEqual(
            obj,
            {
                "metadata": {"name": "dev", "labels": {"kubernetes.io/metadata.name": "dev"}},
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            },
        )

    def test_user_finalizers_kept(self) -> None:
        """User finalizers come first; kubernetes is appended once."""
        obj, _ = create({"metadata": {"name": "a"}, "spec": {"finalizers": ["example.com/x"]}})
        self.assertEqual(obj["spec"]["finalizers"], ["example.com/x", "kubernetes"])

    def test_invalid(self) -> None:
        """Names are DNS-1123 labels; namespaces are cluster-scoped; finalizers standard or
        qualified."""
        _, errs = create(
            {"metadata": {"name": "Dev", "namespace": "x"}, "spec": {"finalizers": ["foo"]}}
        )
        self.assertEqual(
            messages(errs),
            [
                'metadata.name: Invalid value: "Dev": a lowercase RFC 1123 label must consist of '
                'lower '
                "case alphanumeric characters or '-', and must start and end with an alphanumeric "
                "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "metadata.namespace: Forbidden: not allowed on this type",
                'spec.finalizers: Invalid value: "foo": name is neither a standard finalizer name '
                'nor '
                "is it fully qualified",
            ],
        )

    def test_label_forced_on_update(self) -> None:
        """An update cannot change the name label, spec.finalizers or the status."""
        old, _ = create({"metadata": {"name": "a"}})
        old["metadata"]["resourceVersion"] = "3"
        new = copy.deepcopy(old)
        new["metadata"]["labels"]["kubernetes.io/metadata.name"] = "b"
        new["spec"] = {}
        new["status"] = {"phase": "Terminating"}
        NAMESPACE_STRATEGY.default(new)
        NAMESPACE_STRATEGY.prepare_for_update(new, old)
        self.assertEqual(new["metadata"]["labels"], {"kubernetes.io/metadata.name": "a"})
        self.assertEqual(new["spec"], {"finalizers": ["kubernetes"]})
        self.assertEqual(new["status"], {"phase": "Active"})
        self.assertEqual(NAMESPACE_STRATEGY.validate_update(new, old), [])

    def test_status_update(self) -> None:
        """The status subresource keeps the spec and requires Terminating once deleting."""
        old, _ = create({"metadata": {"name": "a"}})
        old["metadata"].update(
            {"resourceVersion": "3", "deletionTimestamp": "2024-01-01T00:00:00Z"}
        )
        new = copy.deepcopy(old)
        new["spec"] = {}
        NAMESPACE_STATUS_STRATEGY.prepare_for_update(new, old)
        self.assertEqual(new["spec"], {"finalizers": ["kubernetes"]})
        self.assertEqual(
            messages(NAMESPACE_STATUS_STRATEGY.validate_update(new, old)),
            [
                "status.Phase: Invalid value: \"Active\": may only be 'Terminating' if "
                "`deletionTimestamp` is not empty"
            ],
        )

    def test_finalize_update(self) -> None:
        """The finalize subresource may drop finalizers and checks each with its index."""
        old, _ = create({"metadata": {"name": "a"}})
        old["metadata"]["resourceVersion"] = "3"
        new = copy.deepcopy(old)
        new["spec"] = {"finalizers": ["bad"]}
        new["status"] = {"phase": "Terminating"}
        NAMESPACE_FINALIZE_STRATEGY.prepare_for_update(new, old)
        self.assertEqual(new["status"], {"phase": "Active"})
        self.assertEqual(
            messages(NAMESPACE_FINALIZE_STRATEGY.validate_update(new, old)),
            [
                'spec.finalizers[0]: Invalid value: "bad": name is neither a standard finalizer '
                'name '
                "nor is it fully qualified"
            ],
        )

    def test_generated_name_and_attrs(self) -> None:
        """canonicalize labels a generated name; field selectors offer status.phase and name."""
        obj = {"metadata": {"generateName": "x-", "name": "x-abcde"}, "status": {"phase": "Active"}}
        canonicalize_namespace(obj)
        self.assertEqual(obj["metadata"]["labels"], {"kubernetes.io/metadata.name": "x-abcde"})
        self.assertEqual(
            NAMESPACE_STRATEGY.attrs(obj),
            {"metadata.name": "x-abcde", "status.phase": "Active", "name": "x-abcde"},
        )
        self.assertFalse(NAMESPACE_STRATEGY.namespaced)
