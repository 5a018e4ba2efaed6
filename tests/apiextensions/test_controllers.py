"""
Tests for the pure parts of L{kubetwist.apiextensions.controllers}: naming, API approval and
non-structural-schema conditions (upstream C{pkg/controller/status}, C{apiapproval},
C{nonstructuralschema}).
"""

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apiextensions import controllers as ctl


def crd(group="example.com", **names) -> dict:
    n = {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"}
    n.update(names)
    return {"metadata": {"name": f"{n['plural']}.{group}"},
            "spec": {"group": group, "names": n, "versions": []}, "status": {}}


def accepted(obj: dict) -> dict:
    obj["status"]["acceptedNames"] = dict(obj["spec"]["names"])
    return obj


class NamingTests(SynchronousTestCase):
    """calculate_names."""

    def test_fresh_names_accepted(self) -> None:
        """Names nobody else holds are accepted; Established goes to Installing."""
        names, cond, est = ctl.calculate_names(crd(shortNames=["wd"]), [])
        self.assertEqual(names, {"kind": "Widget", "listKind": "WidgetList", "plural": "widgets",
                                 "shortNames": ["wd"], "singular": "widget"})
        self.assertEqual((cond["status"], cond["reason"]), ("True", "NoConflicts"))
        self.assertEqual((est["status"], est["reason"], est["message"]),
                         ("False", "Installing", "the initial names have been accepted"))

    def test_plural_conflict(self) -> None:
        """A plural another CRD of the group accepted is a PluralConflict."""
        other = accepted(crd(plural="widgets", singular="x", kind="X", listKind="XList"))
        names, cond, est = ctl.calculate_names(crd(), [other])
        self.assertEqual((cond["status"], cond["reason"], cond["message"]),
                         ("False", "PluralConflict", '"widgets" is already in use'))
        self.assertNotIn("plural", names)
        self.assertEqual((est["status"], est["reason"]), ("False", "NotAccepted"))

    def test_kind_conflict(self) -> None:
        """A kind held by another CRD is a KindConflict."""
        other = accepted(crd(plural="others", singular="other"))
        _, cond, _ = ctl.calculate_names(crd(), [other])
        self.assertEqual((cond["reason"], cond["message"]),
                         ("ListKindConflict", '"WidgetList" is already in use'))


class ApprovalTests(SynchronousTestCase):
    """api_approval_condition."""

    def test_outside_protected_groups(self) -> None:
        """Other groups get no condition."""
        self.assertIsNone(ctl.api_approval_condition(crd()))

    def test_states(self) -> None:
        """Approved URL, unapproved reason and a missing annotation."""
        obj = crd(group="x.k8s.io")
        self.assertEqual(ctl.api_approval_condition(obj)["reason"], "MissingAnnotation")
        obj["metadata"]["annotations"] = {"api-approved.kubernetes.io": "unapproved, testing"}
        cond = ctl.api_approval_condition(obj)
        self.assertEqual((cond["status"], cond["reason"], cond["message"]),
                         ("False", "UnapprovedAnnotation", 'not approved: "unapproved, testing"'))
        obj["metadata"]["annotations"] = {"api-approved.kubernetes.io": "https://k8s.io/pr/1"}
        cond = ctl.api_approval_condition(obj)
        self.assertEqual((cond["status"], cond["reason"], cond["message"]),
                         ("True", "ApprovedAnnotation", "approved in https://k8s.io/pr/1"))


class ConditionTests(SynchronousTestCase):
    """set_condition and nonstructural_condition."""

    def test_transition_time_kept(self) -> None:
        """The transition time changes only with the status."""
        obj = {"status": {}}
        ctl.set_condition(obj, {"type": "A", "status": "True", "reason": "r", "message": "m"}, "t1")
        ctl.set_condition(obj, {"type": "A", "status": "True", "reason": "r2", "message": "m"},
                          "t2")
        self.assertEqual(obj["status"]["conditions"][0]["lastTransitionTime"], "t1")
        ctl.set_condition(obj, {"type": "A", "status": "False", "reason": "r", "message": "m"},
                          "t3")
        self.assertEqual(obj["status"]["conditions"][0]["lastTransitionTime"], "t3")

    def test_nonstructural(self) -> None:
        """A property without a type gives NonStructuralSchema True with the violation."""
        obj = crd()
        obj["spec"]["versions"] = [{"name": "v1", "schema": {"openAPIV3Schema": {
            "type": "object", "properties": {"spec": {"description": "x"}}}}}]
        cond = ctl.nonstructural_condition(obj)
        self.assertEqual((cond["status"], cond["reason"], cond["message"]), (
            "True", "Violations", "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: "
            "Required value: must not be empty for specified object fields"))


class SetConditionTests(SynchronousTestCase):
    def test_null_conditions(self) -> None:
        """A status whose conditions are null (a status update may write that) gets the
        condition instead of failing the controller."""
        for status in ({"conditions": None}, None):
            crd = {"status": status}
            ctl.set_condition(crd, {"type": "Established", "status": "True",
                                    "reason": "InitialNamesAccepted", "message": "x"}, "T")
            self.assertEqual([c["type"] for c in crd["status"]["conditions"]], ["Established"])
            self.assertEqual(crd["status"]["conditions"][0]["lastTransitionTime"], "T")
