"""The built-in admission plugins (LimitRanger, DefaultStorageClass, ...), each on its own and
through an assembled server; messages as kube-apiserver v1.32 words them."""

from __future__ import annotations

import copy
from typing import Any

from twisted.internet import defer
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.admission.interfaces import Attributes
from kubetwist.admission.plugins import limitranger
from kubetwist.registry.rest import ResourceSpec
from kubetwist.runtime.errors import StatusError
from tests.support import KubeTestCase

PODS = ResourceSpec("", "v1", "pods", "Pod", "pod")
PVCS = ResourceSpec("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim",
                    "persistentvolumeclaim")


def attrs(spec: ResourceSpec, obj: Any, operation: str = "CREATE", old: Any = None,
          namespace: str = "ns", subresource: str = "", name: str = "",
          **kw: Any) -> Attributes:
    name = name or (obj or old or {}).get("metadata", {}).get("name", "")
    return Attributes.for_spec(operation, spec, subresource, namespace, name, obj, old, **kw)


def run(test: SynchronousTestCase, coro: Any) -> Any:
    """The result of a coroutine that waits on nothing (plugins over in-memory listers)."""
    return test.successResultOf(defer.ensureDeferred(coro))


def refused(test: SynchronousTestCase, coro: Any) -> StatusError:
    failure = test.failureResultOf(defer.ensureDeferred(coro), StatusError)
    return failure.value


def lister(*items: dict):
    async def items_():
        return copy.deepcopy(list(items))
    return items_


def pod(*containers: dict, init: tuple = (), name: str = "p") -> dict:
    spec: dict = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
            "spec": spec}


def container(name: str = "c", requests: Any = None, limits: Any = None, **kw: Any) -> dict:
    c = {"name": name, "image": "i", **kw}
    res = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    if res:
        c["resources"] = res
    return c


def limit_range(*items: dict, namespace: str = "ns", name: str = "lr") -> dict:
    return {"apiVersion": "v1", "kind": "LimitRange",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"limits": list(items)}}


class LimitRangerTests(SynchronousTestCase):
    def plugin(self, *lrs: dict) -> limitranger.LimitRanger:
        return limitranger.LimitRanger(lister(*lrs))

    def test_defaults(self):
        """Missing requests and limits come from the Container item; what was set is noted in
        the annotation; set values stay; other namespaces' ranges do not apply."""
        p = self.plugin(
            limit_range({"type": "Container", "default": {"cpu": "500m", "memory": "1Gi"},
                         "defaultRequest": {"cpu": "100m", "memory": "256Mi"}}),
            limit_range({"type": "Container", "default": {"cpu": "9"}}, namespace="other"))
        obj = pod(container("a"), container("b", requests={"cpu": "200m"}),
                  init=(container("i"),))
        run(self, p.admit(attrs(PODS, obj)))
        self.assertEqual(obj["spec"]["containers"][0]["resources"], {
            "limits": {"cpu": "500m", "memory": "1Gi"},
            "requests": {"cpu": "100m", "memory": "256Mi"}})
        self.assertEqual(obj["spec"]["containers"][1]["resources"], {
            "limits": {"cpu": "500m", "memory": "1Gi"},
            "requests": {"cpu": "200m", "memory": "256Mi"}})
        self.assertEqual(obj["metadata"]["annotations"], {
            "kubernetes.io/limit-ranger":
                "LimitRanger plugin set: cpu, memory request for container a; cpu, memory limit "
                "for container a; memory request for container b; cpu, memory limit for "
                "container b; cpu, memory request for init container i; cpu, memory limit for "
                "init container i"})

    def test_pod_update_and_subresources_untouched(self):
        p = self.plugin(limit_range({"type": "Container", "default": {"cpu": "1"}}))
        obj = pod(container())
        run(self, p.admit(attrs(PODS, obj, "UPDATE", old=pod(container()))))
        run(self, p.admit(attrs(PODS, obj, subresource="status")))
        self.assertNotIn("resources", obj["spec"]["containers"][0])

    def test_resize(self):
        """A C{pods/resize} update is checked (and defaulted) like a create."""
        p = self.plugin(limit_range({"type": "Container", "max": {"cpu": "1"}}))
        obj = pod(container(limits={"cpu": "2"}))
        err = refused(self, p.validate(attrs(PODS, obj, "UPDATE", old=pod(container()),
                                             subresource="resize")))
        self.assertIn("maximum cpu usage per Container is 1, but limit is 2",
                      err.status["message"])

    def test_container_max(self):
        """The brief's message: a limit above max."""
        p = self.plugin(limit_range({"type": "Container", "max": {"cpu": "1"}}))
        err = refused(self, p.validate(attrs(PODS, pod(container(limits={"cpu": "2"})))))
        self.assertEqual(err.code, 403)
        self.assertEqual(err.status["reason"], "Forbidden")
        self.assertEqual(err.status["message"], 'pods "p" is forbidden: maximum cpu usage per '
                                                'Container is 1, but limit is 2')

    def test_messages(self):
        cases = [
            ({"type": "Container", "max": {"cpu": "1"}}, container(),
             "maximum cpu usage per Container is 1.  No limit is specified"),
            ({"type": "Container", "max": {"memory": "1Gi"}},
             container(requests={"memory": "2Gi"}, limits={"memory": "512Mi"}),
             "maximum memory usage per Container is 1Gi, but request is 2Gi"),
            ({"type": "Container", "min": {"cpu": "100m"}}, container(),
             "minimum cpu usage per Container is 100m.  No request is specified"),
            ({"type": "Container", "min": {"cpu": "100m"}}, container(requests={"cpu": "50m"}),
             "minimum cpu usage per Container is 100m, but request is 50m"),
            ({"type": "Container", "min": {"cpu": "100m"}},
             container(requests={"cpu": "200m"}, limits={"cpu": "50m"}),
             "minimum cpu usage per Container is 100m, but limit is 50m"),
            ({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}},
             container(requests={"cpu": "100m"}, limits={"cpu": "1"}),
             "cpu max limit to request ratio per Container is 2, but provided ratio is "
             "10.000000"),
            ({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}},
             container(limits={"cpu": "1"}),
             "cpu max limit to request ratio per Container is 2, but no request is specified "
             "or request is 0"),
            ({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}},
             container(requests={"cpu": "1"}),
             "cpu max limit to request ratio per Container is 2, but no limit is specified or "
             "limit is 0"),
            ({"type": "Container", "max": {"cpu": "1", "memory": "1Gi"}},
             container(limits={"cpu": "2", "memory": "2Gi"}),
             "[maximum cpu usage per Container is 1, but limit is 2, maximum memory usage per "
             "Container is 1Gi, but limit is 2Gi]"),
        ]
        for item, c, message in cases:
            err = refused(self, self.plugin(limit_range(item)).validate(attrs(PODS, pod(c))))
            self.assertEqual(err.status["message"], 'pods "p" is forbidden: ' + message)

    def test_recorded_from_upstream(self):
        """Container and Pod items of one LimitRange aggregate into one message (kube-apiserver
        v1.32 answered these two pods with exactly these texts); defaults count in the pod's
        totals."""
        lr = limit_range(
            {"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
             "defaultRequest": {"cpu": "100m", "memory": "128Mi"}, "max": {"cpu": "1"}},
            {"type": "Pod", "max": {"memory": "1Gi"}},
            {"type": "PersistentVolumeClaim", "max": {"storage": "10Gi"},
             "min": {"storage": "1Gi"}})
        cases = [
            (pod(container("big", limits={"cpu": "2", "memory": "2Gi"}), name="big"),
             'pods "big" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, '
             'maximum memory usage per Pod is 1Gi, but limit is 2Gi]'),
            (pod(container("a", limits={"cpu": "2"}), container("b", limits={"memory": "900Mi"}),
                 name="two"),
             'pods "two" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, '
             'maximum memory usage per Pod is 1Gi, but limit is 1156Mi]'),
        ]
        for obj, message in cases:
            p = self.plugin(lr)
            run(self, p.admit(attrs(PODS, obj)))
            self.assertEqual(refused(self, p.validate(attrs(PODS, obj))).status["message"],
                             message)

    def test_pod_totals(self):
        """Pod items check the sum of the containers, sidecars included, against the largest
        init container."""
        lr = limit_range({"type": "Pod", "max": {"cpu": "1"}})
        ok = pod(container("a", requests={"cpu": "400m"}, limits={"cpu": "400m"}),
                 container("b", requests={"cpu": "400m"}, limits={"cpu": "400m"}),
                 init=(container("i", requests={"cpu": "1"}, limits={"cpu": "1"}),))
        run(self, self.plugin(lr).validate(attrs(PODS, ok)))
        over = pod(container("a", requests={"cpu": "400m"}, limits={"cpu": "400m"}),
                   init=(container("s", requests={"cpu": "700m"}, limits={"cpu": "700m"},
                                   restartPolicy="Always"),))
        err = refused(self, self.plugin(lr).validate(attrs(PODS, over)))
        self.assertEqual(err.status["message"], 'pods "p" is forbidden: maximum cpu usage per '
                                                'Pod is 1, but limit is 1100m')

    def test_pvc(self):
        lr = limit_range({"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"},
                          "max": {"storage": "10Gi"}})
        claim = {"metadata": {"name": "c"}, "spec": {"resources": {"requests":
                                                                   {"storage": "20Gi"}}}}
        err = refused(self, self.plugin(lr).validate(attrs(PVCS, claim)))
        self.assertEqual(err.status["message"], 'persistentvolumeclaims "c" is forbidden: '
                         'maximum storage usage per PersistentVolumeClaim is 10Gi, but request '
                         'is 20Gi')
        claim["spec"]["resources"]["requests"]["storage"] = "512Mi"
        err = refused(self, self.plugin(lr).validate(attrs(PVCS, claim, "UPDATE", old=claim)))
        self.assertIn("minimum storage usage per PersistentVolumeClaim is 1Gi, but request is "
                      "512Mi", err.status["message"])
        claim["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        run(self, self.plugin(lr).validate(attrs(PVCS, claim, "UPDATE", old=claim)))

    def test_generate_name(self):
        p = self.plugin(limit_range({"type": "Container", "max": {"cpu": "1"}}))
        obj = pod(container(limits={"cpu": "2"}), name="")
        obj["metadata"]["generateName"] = "gen-"
        err = refused(self, p.validate(attrs(PODS, obj)))
        self.assertTrue(err.status["message"].startswith('pods "gen-" is forbidden: '))


class LimitRangerServerTests(KubeTestCase):
    """Through the assembled server (LimitRanger is on by default)."""

    def test_defaults_and_refusal(self):
        self.assertEqual(self.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})[0], 201)
        code, body, _ = self.request("POST", "/api/v1/namespaces/ns/limitranges", limit_range(
            {"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "250m"},
             "max": {"cpu": "1"}}))
        self.assertEqual(code, 201, body)
        code, body, _ = self.request("POST", "/api/v1/namespaces/ns/pods", pod(container()))
        self.assertEqual(code, 201, body)
        self.assertEqual(body["spec"]["containers"][0]["resources"],
                         {"limits": {"cpu": "500m"}, "requests": {"cpu": "250m"}})
        self.assertEqual(body["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
                         "LimitRanger plugin set: cpu request for container c; cpu limit for "
                         "container c")
        code, body, _ = self.request("POST", "/api/v1/namespaces/ns/pods",
                                     pod(container(limits={"cpu": "2"}), name="q"))
        self.assertEqual((code, body["message"]), (403, 'pods "q" is forbidden: maximum cpu '
                                                        'usage per Container is 1, but limit '
                                                        'is 2'))
        self.assertEqual(self.request("GET", "/api/v1/namespaces/ns/pods/q")[0], 404)


PVS = ResourceSpec("", "v1", "persistentvolumes", "PersistentVolume", "persistentvolume",
                   namespaced=False)
NODES = ResourceSpec("", "v1", "nodes", "Node", "node", namespaced=False)
INGRESSES = ResourceSpec("networking.k8s.io", "v1", "ingresses", "Ingress", "ingress")
CSRS = ResourceSpec("certificates.k8s.io", "v1", "certificatesigningrequests",
                    "CertificateSigningRequest", "certificatesigningrequest", namespaced=False)


def klass(name: str, created: str = "2024-01-01T00:00:00Z", default: str = "",
          **fields: Any) -> dict:
    meta: dict = {"name": name, "creationTimestamp": created}
    if default:
        meta["annotations"] = {default: "true"}
    return {"metadata": meta, **fields}


class DefaultStorageClassTests(SynchronousTestCase):
    ANN = "storageclass.kubernetes.io/is-default-class"

    def plugin(self, *classes):
        from kubetwist.admission.plugins.storage import DefaultStorageClass

        return DefaultStorageClass(lister(*classes))

    def test_default(self):
        """The newest default class wins; the beta annotation counts; classes set stay."""
        p = self.plugin(klass("old", "2024-01-01T00:00:00Z", self.ANN),
                        klass("new", "2024-02-01T00:00:00Z",
                              "storageclass.beta.kubernetes.io/is-default-class"),
                        klass("plain", "2024-03-01T00:00:00Z"))
        claim = {"metadata": {"name": "c"}, "spec": {}}
        run(self, p.admit(attrs(PVCS, claim)))
        self.assertEqual(claim["spec"]["storageClassName"], "new")
        claim = {"metadata": {"name": "c"}, "spec": {"storageClassName": ""}}
        run(self, p.admit(attrs(PVCS, claim)))
        self.assertEqual(claim["spec"]["storageClassName"], "")
        claim = {"metadata": {"name": "c", "annotations": {
            "volume.beta.kubernetes.io/storage-class": "x"}}, "spec": {}}
        run(self, p.admit(attrs(PVCS, claim)))
        self.assertNotIn("storageClassName", claim["spec"])

    def test_tie_by_name(self):
        p = self.plugin(klass("b", default=self.ANN), klass("a", default=self.ANN))
        claim = {"metadata": {"name": "c"}, "spec": {}}
        run(self, p.admit(attrs(PVCS, claim)))
        self.assertEqual(claim["spec"]["storageClassName"], "a")

    def test_no_default(self):
        claim = {"metadata": {"name": "c"}, "spec": {}}
        run(self, self.plugin(klass("plain")).admit(attrs(PVCS, claim)))
        self.assertEqual(claim["spec"], {})


class DefaultIngressClassTests(SynchronousTestCase):
    def test_default(self):
        from kubetwist.admission.plugins.defaultingressclass import DefaultIngressClass

        p = DefaultIngressClass(lister(
            klass("nginx", default="ingressclass.kubernetes.io/is-default-class"),
            klass("other")))
        ing = {"metadata": {"name": "i"}, "spec": {}}
        run(self, p.admit(attrs(INGRESSES, ing)))
        self.assertEqual(ing["spec"]["ingressClassName"], "nginx")
        ing = {"metadata": {"name": "i", "annotations": {"kubernetes.io/ingress.class": "x"}},
               "spec": {}}
        run(self, p.admit(attrs(INGRESSES, ing)))
        self.assertNotIn("ingressClassName", ing["spec"])


class StorageObjectInUseProtectionTests(SynchronousTestCase):
    def test_finalizers(self):
        from kubetwist.admission.plugins.storage import StorageObjectInUseProtection

        p = StorageObjectInUseProtection()
        claim = {"metadata": {"name": "c", "finalizers": ["x"]}, "spec": {}}
        run(self, p.admit(attrs(PVCS, claim)))
        run(self, p.admit(attrs(PVCS, claim)))
        self.assertEqual(claim["metadata"]["finalizers"], ["x", "kubernetes.io/pvc-protection"])
        pv = {"metadata": {"name": "v"}, "spec": {}}
        run(self, p.admit(attrs(PVS, pv, namespace="")))
        self.assertEqual(pv["metadata"]["finalizers"], ["kubernetes.io/pv-protection"])
        self.assertFalse(p.handles("UPDATE"))


class PersistentVolumeClaimResizeTests(SynchronousTestCase):
    def claim(self, size: str, phase: str = "Bound", cls: str = "fast") -> dict:
        return {"metadata": {"name": "c"},
                "spec": {"storageClassName": cls, "resources": {"requests": {"storage": size}}},
                "status": {"phase": phase}}

    def test_resize(self):
        from kubetwist.admission.plugins.storage import PersistentVolumeClaimResize

        p = PersistentVolumeClaimResize(lister(klass("fast", allowVolumeExpansion=True),
                                               klass("slow")))
        run(self, p.validate(attrs(PVCS, self.claim("2Gi"), "UPDATE", old=self.claim("1Gi"))))
        run(self, p.validate(attrs(PVCS, self.claim("1Gi"), "UPDATE", old=self.claim("1Gi"))))
        err = refused(self, p.validate(attrs(PVCS, self.claim("2Gi"), "UPDATE",
                                             old=self.claim("1Gi", "Pending"))))
        self.assertEqual(err.status["message"], 'persistentvolumeclaims "c" is forbidden: '
                         'Only bound persistent volume claims can be expanded')
        err = refused(self, p.validate(attrs(PVCS, self.claim("2Gi", cls="slow"), "UPDATE",
                                             old=self.claim("1Gi", cls="slow"))))
        self.assertEqual(err.status["message"], 'persistentvolumeclaims "c" is forbidden: '
                         'only dynamically provisioned pvc can be resized and the storageclass '
                         'that provisions the pvc must support resize')


class TaintNodesByConditionTests(SynchronousTestCase):
    def test_taint(self):
        from kubetwist.admission.plugins.nodetaint import TaintNodesByCondition

        node = {"metadata": {"name": "n"}, "spec": {"taints": [{"key": "a", "effect": "x"}]}}
        p = TaintNodesByCondition()
        run(self, p.admit(attrs(NODES, node, namespace="")))
        run(self, p.admit(attrs(NODES, node, namespace="")))
        self.assertEqual(node["spec"]["taints"], [
            {"key": "a", "effect": "x"},
            {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}])


class RuntimeClassTests(SynchronousTestCase):
    def plugin(self, *classes: dict):
        from kubetwist.admission.plugins.runtimeclass import RuntimeClass

        by_name = {c["metadata"]["name"]: c for c in classes}

        async def get(name: str, namespace: str = ""):
            return copy.deepcopy(by_name.get(name))
        return RuntimeClass(get)

    def test_overhead_and_scheduling(self):
        p = self.plugin(klass("kata", handler="kata",
                              overhead={"podFixed": {"cpu": "250m", "memory": "120Mi"}},
                              scheduling={"nodeSelector": {"sandbox": "yes"},
                                          "tolerations": [{"key": "sandbox",
                                                           "operator": "Exists"}]}))
        obj = pod(container())
        obj["spec"].update(runtimeClassName="kata", nodeSelector={"zone": "a"},
                           tolerations=[{"key": "sandbox", "operator": "Equal",
                                         "value": "v"}])
        run(self, p.admit(attrs(PODS, obj)))
        self.assertEqual(obj["spec"]["overhead"], {"cpu": "250m", "memory": "120Mi"})
        self.assertEqual(obj["spec"]["nodeSelector"], {"zone": "a", "sandbox": "yes"})
        # the class's Exists toleration covers the pod's Equal one
        self.assertEqual(obj["spec"]["tolerations"], [{"key": "sandbox", "operator": "Exists"}])
        run(self, p.validate(attrs(PODS, obj)))

    def test_refusals(self):
        p = self.plugin(klass("kata", overhead={"podFixed": {"cpu": "250m"}},
                              scheduling={"nodeSelector": {"sandbox": "yes"}}),
                        klass("plain"))
        obj = pod(container())
        obj["spec"]["runtimeClassName"] = "missing"
        self.assertEqual(refused(self, p.admit(attrs(PODS, obj))).status["message"],
                         'pods "p" is forbidden: pod rejected: RuntimeClass "missing" not found')
        obj["spec"].update(runtimeClassName="kata", overhead={"cpu": "1"})
        self.assertEqual(refused(self, p.admit(attrs(PODS, obj))).status["message"],
                         'pods "p" is forbidden: pod rejected: Pod\'s Overhead doesn\'t match '
                         'RuntimeClass\'s defined Overhead')
        self.assertEqual(refused(self, p.validate(attrs(PODS, obj))).status["message"],
                         'pods "p" is forbidden: pod rejected: Pod\'s Overhead doesn\'t match '
                         'RuntimeClass\'s defined Overhead')
        obj["spec"].update(overhead={"cpu": "250m"}, nodeSelector={"sandbox": "no"})
        self.assertEqual(refused(self, p.admit(attrs(PODS, obj))).status["message"],
                         'pods "p" is forbidden: conflict: '
                         'runtimeClass.scheduling.nodeSelector[sandbox] = yes; '
                         'pod.spec.nodeSelector[sandbox] = no')
        obj["spec"]["runtimeClassName"] = "plain"
        self.assertEqual(refused(self, p.validate(attrs(PODS, obj))).status["message"],
                         'pods "p" is forbidden: pod rejected: Pod Overhead set without '
                         'corresponding RuntimeClass defined Overhead')


class _Authorizer:
    """Allows the (verb, name) pairs given; records what it was asked."""

    def __init__(self, *allowed: tuple[str, str]) -> None:
        self.allowed = set(allowed)
        self.asked: list = []

    def authorize(self, attrs):
        self.asked.append((attrs.verb, attrs.api_group, attrs.resource, attrs.name,
                           attrs.api_version))
        decision = "allow" if (attrs.verb, attrs.name) in self.allowed else "no-opinion"
        return defer.succeed((decision, ""))


def csr(signer: str = "example.com/foo", **status: Any) -> dict:
    return {"metadata": {"name": "r"}, "spec": {"signerName": signer, "request": ""},
            "status": status}


class CertificateTests(SynchronousTestCase):
    def test_approval(self):
        from kubetwist.admission.plugins.certificates import CertificateApproval

        authz = _Authorizer(("approve", "example.com/*"))
        p = CertificateApproval(lambda: authz)
        run(self, p.validate(attrs(CSRS, csr(), "UPDATE", old=csr(), namespace="",
                                   subresource="approval")))
        self.assertEqual(authz.asked, [
            ("approve", "certificates.k8s.io", "signers", "example.com/foo", "*"),
            ("approve", "certificates.k8s.io", "signers", "example.com/*", "*")])
        err = refused(self, p.validate(attrs(CSRS, csr("other.io/x"), "UPDATE", old=csr(),
                                             namespace="", subresource="approval")))
        self.assertEqual(err.status["message"], 'certificatesigningrequests.certificates.k8s.io '
                         '"r" is forbidden: user not permitted to approve requests with '
                         'signerName "other.io/x"')

    def test_signing(self):
        from kubetwist.admission.plugins.certificates import CertificateSigning

        p = CertificateSigning(lambda: _Authorizer())
        # no change of certificate or conditions: no check
        run(self, p.validate(attrs(CSRS, csr(), "UPDATE", old=csr(), namespace="",
                                   subresource="status")))
        err = refused(self, p.validate(attrs(CSRS, csr(certificate="Y2VydA=="), "UPDATE",
                                             old=csr(), namespace="", subresource="status")))
        self.assertEqual(err.status["message"], 'certificatesigningrequests.certificates.k8s.io '
                         '"r" is forbidden: user not permitted to sign requests with signerName '
                         '"example.com/foo"')
        p = CertificateSigning(lambda: _Authorizer(("sign", "example.com/foo")))
        run(self, p.validate(attrs(CSRS, csr(certificate="Y2VydA=="), "UPDATE", old=csr(),
                                   namespace="", subresource="status")))

    def test_subject_restriction(self):
        import base64

        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        from kubetwist.admission.plugins.certificates import CertificateSubjectRestriction

        def request(org: str) -> str:
            key = ec.generate_private_key(ec.SECP256R1())
            built = x509.CertificateSigningRequestBuilder().subject_name(x509.Name([
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, org),
                x509.NameAttribute(NameOID.COMMON_NAME, "me")])).sign(key, hashes.SHA256())
            return base64.b64encode(built.public_bytes(serialization.Encoding.PEM)).decode()

        p = CertificateSubjectRestriction()
        obj = csr("kubernetes.io/kube-apiserver-client")
        obj["spec"]["request"] = request("system:masters")
        err = refused(self, p.validate(attrs(CSRS, obj, namespace="")))
        self.assertEqual(err.status["message"], 'certificatesigningrequests.certificates.k8s.io '
                         '"r" is forbidden: use of kubernetes.io/kube-apiserver-client signer '
                         'with system:masters group is not allowed')
        obj["spec"]["request"] = request("devs")
        run(self, p.validate(attrs(CSRS, obj, namespace="")))
        obj = csr("example.com/foo")
        obj["spec"]["request"] = request("system:masters")
        run(self, p.validate(attrs(CSRS, obj, namespace="")))


class _SAStore:
    def __init__(self, *accounts: dict) -> None:
        self.accounts = {a["metadata"]["name"]: a for a in accounts}

    async def get(self, namespace: str, name: str, resource_version: str = ""):
        from kubetwist.runtime import errors

        if name not in self.accounts:
            raise errors.new_not_found("", "serviceaccounts", name)
        return copy.deepcopy(self.accounts[name])


class ServiceAccountTests(SynchronousTestCase):
    def plugin(self, *accounts: dict):
        from kubetwist.admission.plugins.serviceaccount import ServiceAccount

        return ServiceAccount(_SAStore(*accounts))

    def sa(self, name: str = "default", enforce: bool = False, **fields: Any) -> dict:
        meta: dict = {"name": name, "namespace": "ns"}
        if enforce:
            meta["annotations"] = {"kubernetes.io/enforce-mountable-secrets": "true"}
        return {"metadata": meta, **fields}

    def test_service_account_settings(self):
        """The account's automount switch and image pull secrets are honoured."""
        p = self.plugin(self.sa(automountServiceAccountToken=False,
                                imagePullSecrets=[{"name": "reg"}]))
        obj = pod(container())
        run(self, p.admit(attrs(PODS, obj)))
        self.assertEqual(obj["spec"]["serviceAccountName"], "default")
        self.assertNotIn("volumes", obj["spec"])
        self.assertEqual(obj["spec"]["imagePullSecrets"], [{"name": "reg"}])

    def test_missing_account_in_admit(self):
        obj = pod(container())
        obj["spec"]["serviceAccountName"] = "ghost"
        err = refused(self, self.plugin().admit(attrs(PODS, obj)))
        self.assertEqual(err.status["message"], 'pods "p" is forbidden: error looking up '
                         'service account ns/ghost: serviceaccount "ghost" not found')

    def test_mirror_pods(self):
        p = self.plugin(self.sa())
        obj = pod(container(env=[{"name": "X", "valueFrom": {"secretKeyRef": {
            "name": "s", "key": "k"}}}]))
        obj["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
        err = refused(self, p.admit(attrs(PODS, obj)))
        self.assertEqual(err.status["message"],
                         'pods "p" is forbidden: a mirror pod may not reference secrets')
        self.assertNotIn("serviceAccountName", obj["spec"])
        obj["spec"]["serviceAccountName"] = "default"
        err = refused(self, p.validate(attrs(PODS, obj)))
        self.assertEqual(err.status["message"], 'pods "p" is forbidden: a mirror pod may not '
                                                'reference service accounts')

    def test_enforce_mountable_secrets(self):
        p = self.plugin(self.sa(enforce=True, secrets=[{"name": "ok"}],
                                imagePullSecrets=[{"name": "reg"}]))
        cases = [
            ({"volumes": [{"name": "v", "secret": {"secretName": "bad"}}]},
             'volume with secret.secretName="bad" is not allowed because service account '
             'default does not reference that secret'),
            ({"containers": [container(env=[{"name": "E", "valueFrom": {"secretKeyRef": {
                "name": "bad", "key": "k"}}}])]},
             'container c with envVar E referencing secret.secretName="bad" is not allowed '
             'because service account default does not reference that secret'),
            ({"initContainers": [container("i", envFrom=[{"secretRef": {"name": "bad"}}])]},
             'init container i with envFrom referencing secret.secretName="bad" is not allowed '
             'because service account default does not reference that secret'),
            ({"imagePullSecrets": [{"name": "reg"}, {"name": "other"}]},
             'spec.imagePullSecrets[1].name="other" is not allowed because service account '
             'default does not reference that imagePullSecret'),
        ]
        for spec, message in cases:
            obj = pod(container())
            obj["spec"].update(spec)
            obj["spec"]["automountServiceAccountToken"] = False
            err = refused(self, p.admit(attrs(PODS, obj)))
            self.assertEqual(err.status["message"], 'pods "p" is forbidden: ' + message)
        obj = pod(container(env=[{"name": "E", "valueFrom": {"secretKeyRef": {
            "name": "ok", "key": "k"}}}]))
        run(self, p.admit(attrs(PODS, obj)))

    def test_ephemeral_containers(self):
        p = self.plugin(self.sa(enforce=True))
        obj = pod(container())
        obj["spec"]["serviceAccountName"] = "default"
        obj["spec"]["ephemeralContainers"] = [container("debug", envFrom=[
            {"secretRef": {"name": "bad"}}])]
        err = refused(self, p.validate(attrs(PODS, obj, "UPDATE", old=pod(container()),
                                             subresource="ephemeralcontainers")))
        self.assertEqual(err.status["message"], 'pods "p" is forbidden: ephemeral container '
                         'debug with envFrom referencing secret.secretName="bad" is not allowed '
                         'because service account default does not reference that secret')
