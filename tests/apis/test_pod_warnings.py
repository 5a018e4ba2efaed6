"""
Tests for L{kubetwist.apis.core.pod_warnings}: the texts follow upstream
C{pkg/api/pod/warnings.go} and the workload strategies' C{WarningsOnCreate} (v1.32).
"""

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core import pod_warnings as w
from kubetwist.runtime.field import Path
from tests.support import KubeTestCase


def _pod(name="web", annotations=None, **spec):
    spec.setdefault("containers", [{"name": "app", "image": "nginx"}])
    meta = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": spec}


class PodWarningTests(SynchronousTestCase):
    def test_clean_pod_has_none(self):
        """A plain pod draws no warning."""
        self.assertEqual(w.pod_warnings(_pod()), [])

    def test_name_not_a_dns_label(self):
        """A dotted pod name warns that it is used as the hostname."""
        self.assertEqual(w.pod_warnings(_pod("a.b")), [
            "metadata.name: this is used in the Pod's hostname, which can result in surprising "
            "behavior; a DNS label is recommended: [must not contain dots]"])

    def test_deprecated_node_labels(self):
        """Deprecated node labels in nodeSelector, node affinity and topology keys."""
        pod = _pod(
            nodeSelector={"beta.kubernetes.io/os": "linux"},
            affinity={"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "failure-domain.beta.kubernetes.io/zone",
                                           "operator": "Exists"}]}]},
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "preference": {"matchExpressions": [
                        {"key": "beta.kubernetes.io/arch", "operator": "Exists"}]}}]}},
            topologySpreadConstraints=[{"topologyKey": "failure-domain.beta.kubernetes.io/zone",
                                        "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}],
        )
        self.assertEqual(w.pod_warnings(pod), [
            'spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use '
            '"kubernetes.io/os" instead',
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
            "nodeSelectorTerms[0].matchExpressions[0].key: failure-domain.beta.kubernetes.io/"
            'zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
            "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
            "preference.matchExpressions[0].key: beta.kubernetes.io/arch is deprecated since "
            'v1.14; use "kubernetes.io/arch" instead',
            "spec.topologySpreadConstraints[0].topologyKey: failure-domain.beta.kubernetes.io/"
            'zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
            "spec.topologySpreadConstraints[0].labelSelector: a null labelSelector results in "
            "matching no pod",
        ])

    def test_volumes_annotations_and_seccomp(self):
        """Deprecated volume plugins, annotations and seccomp annotations without fields."""
        pod = _pod(annotations={"scheduler.alpha.kubernetes.io/critical-pod": "",
                                "seccomp.security.alpha.kubernetes.io/pod": "runtime/default",
                                "container.seccomp.security.alpha.kubernetes.io/app": "x"},
                   volumes=[{"name": "g", "gitRepo": {"repository": "r"}},
                            {"name": "c", "cephfs": {"monitors": ["m"]}}])
        self.assertEqual(w.pod_warnings(pod), [
            "metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional "
            'in v1.16+; use the "priorityClassName" field instead',
            "spec.volumes[0].gitRepo: deprecated in v1.11",
            "spec.volumes[1].cephfs: deprecated in v1.28, non-functional in v1.31+",
            "metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in "
            'v1.27+; use the "seccompProfile" field instead',
            "metadata.annotations[container.seccomp.security.alpha.kubernetes.io/app]: "
            'non-functional in v1.27+; use the "seccompProfile" field instead',
        ])

    def test_duplicates_and_fractions(self):
        """Duplicate host aliases, pull secrets and env; fractional memory; ports."""
        pod = _pod(
            hostAliases=[{"ip": "1.2.3.4"}, {"ip": "1.2.3.4"}],
            imagePullSecrets=[{"name": "a"}, {"name": "a"}, {}],
            containers=[{"name": "app", "image": "i",
                         "resources": {"limits": {"memory": "1.5"}},
                         "env": [{"name": "X", "value": "1"}, {"name": "X", "value": "2"},
                                 {"name": "X", "value": "$(X)-3"}],
                         "ports": [{"containerPort": 80, "protocol": "TCP"},
                                   {"containerPort": 80, "protocol": "TCP"},
                                   {"containerPort": 81, "protocol": "TCP",
                                    "hostIP": "10.0.0.1"}]}],
            terminationGracePeriodSeconds=-1,
        )
        self.assertEqual(w.pod_warnings(pod), [
            'spec.hostAliases[1].ip: duplicate ip "1.2.3.4"',
            'spec.imagePullSecrets[1].name: duplicate name "a"',
            'spec.imagePullSecrets[2].name: invalid empty name ""',
            'spec.containers[0].resources.limits[memory]: fractional byte value "1500m" is '
            "invalid, must be an integer",
            'spec.containers[0].env[1]: hides previous definition of "X", which may be dropped '
            "when using apply",
            "spec.containers[0].ports[1]: duplicate port definition with "
            "spec.containers[0].ports[0]",
            "spec.containers[0].ports[2]: hostIP set without hostPort: {Name: HostPort:0 "
            "ContainerPort:81 Protocol:TCP HostIP:10.0.0.1}",
            "spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and "
            "will be treated as 1",
        ])

    def test_projected_path_collision(self):
        """A projected configMap item with a service account token's path."""
        pod = _pod(volumes=[{"name": "p", "projected": {"sources": [
            {"serviceAccountToken": {"path": "token"}},
            {"configMap": {"name": "c", "items": [{"key": "k", "path": "token"}]}}]}}])
        self.assertEqual(w.pod_warnings(pod), [
            "spec.volumes[0].projected.sources.configMap[0]: has duplicated path with "
            'ServiceAccountToken "token"'])


class WorkloadWarningTests(SynchronousTestCase):
    def test_deployment_template_paths(self):
        """A Deployment's template warnings are under spec.template; its name must be a label."""
        d = {"metadata": {"name": "a.b"}, "spec": {"template": {
            "metadata": {"annotations": {
                "container.apparmor.security.beta.kubernetes.io/app": "runtime/default"}},
            "spec": {"containers": [{"name": "app"}],
                     "nodeSelector": {"beta.kubernetes.io/arch": "amd64"}}}}}
        self.assertEqual(w.deployment_warnings(d), [
            "metadata.name: this is used in Pod names and hostnames, which can result in "
            "surprising behavior; a DNS label is recommended: [must not contain dots]",
            "spec.template.spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; "
            'use "kubernetes.io/arch" instead',
            "spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/"
            'app]: deprecated since v1.30; use the "appArmorProfile" field instead',
        ])

    def test_cron_job_and_stateful_set(self):
        """CronJob templates sit under spec.jobTemplate.spec.template; StatefulSet PVCs."""
        cj = {"metadata": {"name": "c"}, "spec": {"jobTemplate": {"spec": {"template": {
            "spec": {"containers": [{"name": "a"}], "volumes": [
                {"name": "v", "flocker": {"datasetName": "d"}}]}}}}}}
        self.assertEqual(w.cron_job_warnings(cj), [
            "spec.jobTemplate.spec.template.spec.volumes[0].flocker: deprecated in v1.22, "
            "non-functional in v1.25+"])
        ss = {"metadata": {"name": "s"}, "spec": {
            "revisionHistoryLimit": -1, "template": {"spec": {"containers": [{"name": "a"}]}},
            "volumeClaimTemplates": [{"spec": {"resources": {"requests": {"storage": "0.5"}}}}]}}
        self.assertEqual(w.stateful_set_warnings(ss), [
            'spec.volumeClaimTemplates[0].resources.requests[storage]: fractional byte value '
            '"500m" is invalid, must be an integer',
            "spec.revisionHistoryLimit: a negative value retains all historical revisions; a "
            "value >= 0 is recommended"])

    def test_pvc_and_runtime_class(self):
        """The beta storage-class annotation and deprecated node labels in RuntimeClass."""
        pvc = {"metadata": {"annotations": {"volume.beta.kubernetes.io/storage-class": "x"}},
               "spec": {}}
        self.assertEqual(w.pvc_warnings(pvc), [
            "metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since "
            'v1.8; use "storageClassName" attribute instead'])
        rc = {"scheduling": {"nodeSelector": {"beta.kubernetes.io/os": "linux"}}}
        self.assertEqual(w.runtime_class_warnings(rc), [
            'scheduling.nodeSelector: deprecated since v1.14; use "kubernetes.io/os" instead'])

    def test_job_spec_paths(self):
        """WarningsForJobSpec: the pod template at <path>.template."""
        self.assertEqual(w.job_spec_warnings(Path("spec"), {"template": {"spec": {
            "containers": [{"name": "a"}], "terminationGracePeriodSeconds": -5}}}), [
            "spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values "
            "are invalid and will be treated as 1"])


class WarningHeaderTests(KubeTestCase):
    def test_deployment_create_sends_template_warnings(self):
        """
        Creating a Deployment whose pod template uses a deprecated node label answers 201 with
        upstream's warning as a C{Warning: 299 - "..."} header.
        """
        d = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
             "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                 "metadata": {"labels": {"app": "web"}},
                 "spec": {"nodeSelector": {"beta.kubernetes.io/os": "linux"},
                          "containers": [{"name": "app", "image": "nginx"}]}}}}
        code, _, response = self.request(
            "POST", "/apis/apps/v1/namespaces/default/deployments", d)
        self.assertEqual(code, 201)
        self.assertEqual(response.headers.getRawHeaders("warning"), [
            '299 - "spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since '
            'v1.14; use \\"kubernetes.io/os\\" instead"'])

    def test_pod_create_sends_warnings(self):
        """Creating a pod with a deprecated volume plugin answers 201 with its warning."""
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": [{"name": "app", "image": "nginx"}],
                        "volumes": [{"name": "g", "gitRepo": {"repository": "r"}}]}}
        code, _, response = self.request("POST", "/api/v1/namespaces/default/pods", pod)
        self.assertEqual(code, 201)
        self.assertEqual(response.headers.getRawHeaders("warning"),
                         ['299 - "spec.volumes[0].gitRepo: deprecated in v1.11"'])
