"""
Every Pod, Deployment, StatefulSet, DaemonSet and ReplicaSet vector of the kube-apiserver golden
file, and every ReplicationController's pod template, run through
default -> admission mutations -> prepare_for_create -> validate and compared with
kube-apiserver's answer.
"""

from __future__ import annotations

import copy
import json
import re

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.admission.plugins import defaulttolerationseconds, priority, serviceaccount
from kubetwist.apis.apps.register import STRATEGIES
from kubetwist.apis.core import pods
from kubetwist.apis.core.podspec_defaults import default_pod_template_spec
from kubetwist.apis.core.podspec_validation import validate_pod_template_spec
from kubetwist.runtime.field import Path, aggregate_message
from tests.support import shared_dir

_WORKLOADS = {
    "Pod": None,
    "Deployment": "deployments",
    "StatefulSet": "statefulsets",
    "DaemonSet": "daemonsets",
    "ReplicaSet": "replicasets",
}
_DROPPED_META = ("uid", "creationTimestamp", "resourceVersion", "managedFields", "namespace",
                 "selfLink")


def _vectors(kinds: tuple[str, ...]) -> list[dict]:
    out = []
    with open(shared_dir("golden", "dry-run-kubernetes-examples.jsonl")) as f:
        for line in f:
            d = json.loads(line)
            o = d["object"]
            if o.get("apiVersion") in ("v1", "apps/v1") and o.get("kind") in kinds:
                out.append(d)
    return out


def _normalise(obj: dict) -> dict:
    obj = copy.deepcopy(obj)
    meta = obj.get("metadata") or {}
    for k in _DROPPED_META:
        meta.pop(k, None)
    text = json.dumps(obj, sort_keys=True)
    text = re.sub(r"kube-api-access-[a-z0-9]{5}\b", "kube-api-access-<generated>", text)
    return json.loads(text)


def _create(obj: dict) -> tuple[dict | None, str | None]:
    """The dry-run create pipeline; returns (object, None) or (None, kubectl's error text)."""
    obj = copy.deepcopy(obj)
    obj.setdefault("metadata", {})["namespace"] = "fidelity"
    kind = obj["kind"]
    strategy = pods.POD_STRATEGY if kind == "Pod" else STRATEGIES[_WORKLOADS[kind]]
    strategy.default(obj)
    if kind == "Pod":
        serviceaccount.mutate_pod(obj, "x7b2k")
        priority.mutate_pod(obj)
        defaulttolerationseconds.mutate_pod(obj)
    strategy.prepare_for_create(obj)
    errs = strategy.validate(obj)
    if errs:
        return None, (f'The {kind} "{obj["metadata"].get("name", "")}" is invalid: '
                      f'{aggregate_message(errs)}')
    return obj, None


class GoldenWorkloadTests(SynchronousTestCase):
    """Workload vectors answer exactly as kube-apiserver did."""

    def test_workloads(self) -> None:
        """
        Each accepted workload comes back identical to kube-apiserver's response (after the
        golden file's normalisation); each refused one fails with the same message.
        """
        vectors = _vectors(tuple(_WORKLOADS))
        self.assertTrue(len(vectors) >= 60)
        mismatches = []
        for d in vectors:
            got, err = _create(d["object"])
            where = f'{d["file"]}#{d["index"]}'
            if d["accepted"]:
                if err is not None:
                    mismatches.append((where, err))
                elif _normalise(got) != _normalise(d["response"]):
                    mismatches.append((where, "response differs"))
            elif err is None or err not in d["error"]:
                mismatches.append((where, err))
        self.assertEqual(mismatches, [])

    def test_refusal_message(self) -> None:
        """An upper-case port protocol is refused with upstream's NotSupported message."""
        vectors = [d for d in _vectors(("Pod",)) if d["file"]
                   == "_archived_volumes_aws_ebs_aws-ebs-web.yaml"]
        self.assertEqual(len(vectors), 1)
        _, err = _create(vectors[0]["object"])
        self.assertEqual(
            err,
            'The Pod "aws-web" is invalid: spec.containers[0].ports[0].protocol: Unsupported '
            'value: '
            '"tcp": supported values: "SCTP", "TCP", "UDP"',
        )

    def test_replication_controller_templates(self) -> None:
        """Every ReplicationController's pod template defaults to kube-apiserver's answer and is
        valid."""
        vectors = _vectors(("ReplicationController",))
        self.assertTrue(len(vectors) >= 20)
        mismatches = []
        for d in vectors:
            tpl = copy.deepcopy(d["object"]["spec"]["template"])
            default_pod_template_spec(tpl)
            errs = validate_pod_template_spec(tpl, Path("spec", "template"))
            if errs or tpl != d["response"]["spec"]["template"]:
                mismatches.append(d["file"])
        self.assertEqual(mismatches, [])
