"""Tests for L{kubetwist.apis.core.limitranges} and the limitranges HTTP surface."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core.register import STRATEGIES
from kubetwist.runtime import protobuf as pb
from kubetwist.runtime.field import aggregate_message
from tests.support import KubeTestCase


def _lr(*limits) -> dict:
    return {"apiVersion": "v1", "kind": "LimitRange",
            "metadata": {"name": "lr", "namespace": "default"}, "spec": {"limits": list(limits)}}


def _errs(obj: dict) -> str:
    st = STRATEGIES["limitranges"]
    st.default(obj)
    return aggregate_message(st.validate(obj)) if st.validate(obj) else ""


class LimitRangeStrategyTests(SynchronousTestCase):
    def test_container_defaults(self) -> None:
        """Container items: default from max, defaultRequest from default then min."""
        obj = _lr({"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}},
                  {"type": "Pod", "max": {"cpu": "4"}})
        self.assertEqual(_errs(obj), "")
        item = obj["spec"]["limits"][0]
        self.assertEqual((item["default"], item["defaultRequest"]),
                         ({"cpu": "2"}, {"cpu": "2", "memory": "64Mi"}))
        self.assertNotIn("default", obj["spec"]["limits"][1])

    def test_ordering(self) -> None:
        """min above max is refused with upstream's message."""
        self.assertEqual(
            _errs(_lr({"type": "Pod", "max": {"cpu": "1"}, "min": {"cpu": "2"}})),
            'spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1')

    def test_types(self) -> None:
        """Unknown unqualified types, duplicate types, Pod defaults, PVC without storage."""
        self.assertEqual(
            _errs(_lr({"type": "Disk"}, {"type": "Pod", "default": {"cpu": "1"}},
                      {"type": "Pod"}, {"type": "PersistentVolumeClaim"})),
            "[spec.limits[0].type: Invalid value: \"Disk\": must be a standard limit type or "
            "fully qualified, spec.limits[1].default: Forbidden: may not be specified when "
            "`type` is 'Pod', spec.limits[2].type: Duplicate value: \"Pod\", "
            "spec.limits[3].limits: Required value: either minimum or maximum storage value is "
            "required, but neither was provided]")

    def test_ratio(self) -> None:
        """maxLimitRequestRatio below 1 and above max/min are refused."""
        self.assertEqual(
            _errs(_lr({"type": "Container", "max": {"cpu": "2"}, "min": {"cpu": "1"},
                       "maxLimitRequestRatio": {"cpu": "3"}})),
            'spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "3": ratio 3 is greater '
            'than max/min = 2.000000')
        self.assertEqual(
            _errs(_lr({"type": "Container", "maxLimitRequestRatio": {"memory": "500m"}})),
            'spec.limits[0].maxLimitRequestRatio[memory]: Invalid value: "500m": '
            'ratio 500m is less than 1')

    def test_table_and_protobuf(self) -> None:
        """The table is Name/Created At; LimitRange round-trips through protobuf."""
        obj = _lr({"type": "Container", "max": {"cpu": "2"}})
        obj["metadata"]["creationTimestamp"] = "2024-01-02T03:04:05Z"
        self.assertEqual(STRATEGIES["limitranges"].table.row(obj), ["lr", "2024-01-02T03:04:05Z"])
        self.assertEqual(pb.decode(pb.encode(obj)), obj)


class LimitRangeHTTPTests(KubeTestCase):
    def test_create_and_refuse(self) -> None:
        """A valid LimitRange is created defaulted; an invalid one gets a 422."""
        code, out, _ = self.request("POST", "/api/v1/namespaces/default/limitranges",
                                    _lr({"type": "Container", "max": {"cpu": "2"}}))
        self.assertEqual(code, 201, out)
        self.assertEqual(out["spec"]["limits"][0]["defaultRequest"], {"cpu": "2"})
        code, out, _ = self.request("POST", "/api/v1/namespaces/default/limitranges",
                                    _lr({"type": "Disk"}))
        self.assertEqual(code, 422)
        self.assertEqual(out["message"], 'LimitRange "lr" is invalid: spec.limits[0].type: '
                                         'Invalid value: "Disk": must be a standard limit type '
                                         'or fully qualified')
