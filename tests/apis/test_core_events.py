"""Tests for L{kubetwist.apis.core.events}, L{kubetwist.apis.core.endpoints} and
L{kubetwist.apis.core.serviceaccounts}."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core.endpoints import ENDPOINTS_STRATEGY
from kubetwist.apis.core.events import EVENT_STRATEGY
from kubetwist.apis.core.serviceaccounts import SERVICEACCOUNT_STRATEGY


def messages(errs) -> list[str]:
    return [e.error() for e in errs]


class EventTests(SynchronousTestCase):
    def event(self, **fields) -> dict:
        obj = {"metadata": {"name": "e", "namespace": "ns"}, **fields}
        EVENT_STRATEGY.default(obj)
        return obj

    def test_zero_values(self) -> None:
        """Defaulting writes the zero values a v1 Event always serialises."""
        self.assertEqual(
            self.event(),
            {
                "metadata": {"name": "e", "namespace": "ns"},
                "involvedObject": {},
                "source": {},
                "firstTimestamp": None,
                "lastTimestamp": None,
                "eventTime": None,
                "reportingComponent": "",
                "reportingInstance": "",
            },
        )

    def test_legacy_namespace_match(self) -> None:
        """Without eventTime the involved object's namespace must match the event's."""
        self.assertEqual(
            EVENT_STRATEGY.validate(self.event(involvedObject={"namespace": "ns"})), []
        )
        self.assertEqual(
            messages(EVENT_STRATEGY.validate(self.event(involvedObject={"namespace": "other"}))),
            ['involvedObject.namespace: Invalid value: "other": does not match event.namespace'],
        )
        self.assertEqual(
            messages(EVENT_STRATEGY.validate(self.event())),
            ['involvedObject.namespace: Invalid value: "": does not match event.namespace'],
        )

    def test_new_style_requirements(self) -> None:
        """With eventTime, reportingComponent (reported as upstream's internal
        reportingController), reportingInstance, action and reason are required."""
        errs = EVENT_STRATEGY.validate(
            self.event(eventTime="2024-01-01T00:00:00.000000Z", involvedObject={"namespace": "ns"})
        )
        self.assertEqual(messages(errs)[0], "reportingController: Required value")
        self.assertEqual(
            messages(errs)[-3:],
            [
                "reportingInstance: Required value",
                "action: Required value",
                "reason: Required value",
            ],
        )

    def test_field_attrs(self) -> None:
        """Events are selectable by involvedObject.*, reason, source, type and
        reportingComponent."""
        attrs = EVENT_STRATEGY.attrs(
            self.event(
                involvedObject={"kind": "Pod", "name": "p", "uid": "u"},
                reason="Pulled",
                type="Normal",
                reportingComponent="kubelet",
            )
        )
        self.assertEqual(attrs["involvedObject.kind"], "Pod")
        self.assertEqual(attrs["involvedObject.fieldPath"], "")
        self.assertEqual(
            (attrs["reason"], attrs["source"], attrs["type"], attrs["reportingComponent"]),
            ("Pulled", "kubelet", "Normal", "kubelet"),
        )
        self.assertEqual(len(attrs), 13)


class EndpointsTests(SynchronousTestCase):
    def test_defaults_and_validation(self) -> None:
        """Ports default to TCP; addresses must be non-special IPs; named ports when several."""
        ep = {
            "metadata": {"name": "e", "namespace": "ns"},
            "subsets": [
                {
                    "addresses": [{"ip": "127.0.0.1"}, {"ip": "10.0.0.1", "hostname": "A"}],
                    "ports": [{"port": 80}, {"name": "b", "port": 0, "protocol": "XTP"}],
                },
                {"ports": [{"port": 1}]},
            ],
        }
        ENDPOINTS_STRATEGY.default(ep)
        self.assertEqual(ep["subsets"][0]["ports"][0]["protocol"], "TCP")
        self.assertEqual(
            messages(ENDPOINTS_STRATEGY.validate(ep)),
            [
                'subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the '
                'loopback range (127.0.0.0/8, ::1/128)',
                'subsets[0].addresses[1].hostname: Invalid value: "A": a lowercase RFC 1123 label '
                'must '
                "consist of lower case alphanumeric characters or '-', and must start and end with "
                "an "
                "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation "
                "is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "subsets[0].ports[0].name: Required value",
                "subsets[0].ports[1].port: Invalid value: 0: must be between 1 and 65535, "
                "inclusive",
                'subsets[0].ports[1].protocol: Unsupported value: "XTP": supported values: "SCTP", '
                '"TCP", "UDP"',
                "subsets[1]: Required value: must specify `addresses` or `notReadyAddresses`",
            ],
        )


class ServiceAccountTests(SynchronousTestCase):
    def test_secret_references_trimmed(self) -> None:
        """Secret references keep only their names."""
        sa = {
            "metadata": {"name": "sa", "namespace": "ns"},
            "secrets": [{"name": "t", "namespace": "x", "uid": "u"}, {"kind": "Secret"}],
        }
        SERVICEACCOUNT_STRATEGY.prepare_for_create(sa)
        self.assertEqual(sa["secrets"], [{"name": "t"}, {}])
        self.assertEqual(SERVICEACCOUNT_STRATEGY.validate(sa), [])

    def test_name(self) -> None:
        """ServiceAccount names are DNS subdomains."""
        sa = {"metadata": {"name": "A_b", "namespace": "ns"}}
        self.assertEqual(len(SERVICEACCOUNT_STRATEGY.validate(sa)), 1)
