# -*- test-case-name: tests.runtime.test_govalues -*-
"""
Tests for L{kubetwist.runtime.govalues}: internal Go types from the type tables, C{%#v} and
go-cmp's C{cmp.Diff}.  Expected texts are kube-apiserver v1.32's (the recorded vectors in
C{tests/vectors/govalues.jsonl}, C{core.jsonl} and C{batch.jsonl} replay them end to end);
U+00A0 is written C{_} below for readability.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.runtime import govalues as gv

POD_SPEC = gv.internal_type("io.k8s.api.core.v1.PodSpec")
TEMPLATE = gv.internal_type("io.k8s.api.core.v1.PodTemplateSpec")

#: A pod spec as stored after defaulting (one container, one emptyDir volume).
SPEC = {
    "volumes": [{"name": "data", "emptyDir": {}}],
    "containers": [{
        "name": "c", "image": "nginx:1.27", "ports": [{"containerPort": 80, "name": "http",
                                                        "protocol": "TCP"}],
        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
        "resources": {}, "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent",
        "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
    "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
    "serviceAccountName": "default", "serviceAccount": "default",
    "automountServiceAccountToken": False, "securityContext": {},
    "schedulerName": "default-scheduler", "enableServiceLinks": True, "priority": 0,
    "preemptionPolicy": "PreemptLowerPriority",
}


def diff(old: dict, new: dict) -> str:
    """C{cmp.Diff} of two versioned pod specs, U+00A0 shown as C{_}."""
    text = gv.cmp_diff(POD_SPEC, gv.from_json(POD_SPEC, old), gv.from_json(POD_SPEC, new))
    return text.replace("\u00a0", "_")


def changed(**paths) -> dict:
    """L{SPEC} with some values replaced: C{containers__0__env__1__value="3"}."""
    import copy
    spec = copy.deepcopy(SPEC)
    for path, value in paths.items():
        keys = [int(k) if k.isdigit() else k for k in path.split("__")]
        target = spec
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value
    return spec


class InternalTypeTests(SynchronousTestCase):
    """L{gv.internal_type} lays out the internal structs from the tables and internal_core."""

    def names(self, t: gv.GoType) -> list[str]:
        return [f.name for f in t.fields]

    def test_pod_spec_layout(self) -> None:
        """Internal PodSpec: no serviceAccount or host namespace fields, its own order, Go
        names with acronyms, named types."""
        names = self.names(POD_SPEC)
        self.assertEqual(len(names), 34)
        self.assertEqual(names[:5], ["Volumes", "InitContainers", "Containers",
                                     "EphemeralContainers", "RestartPolicy"])
        for absent in ("DeprecatedServiceAccount", "ServiceAccount", "HostNetwork", "HostPID"):
            self.assertNotIn(absent, names)
        self.assertEqual(names.index("SetHostnameAsFQDN"), names.index("Subdomain") + 1)
        types = {f.name: f.type.name for f in POD_SPEC.fields}
        self.assertEqual(types["DNSPolicy"], "core.DNSPolicy")
        self.assertEqual(types["PreemptionPolicy"], "*core.PreemptionPolicy")
        self.assertEqual(types["Overhead"], "core.ResourceList")
        self.assertEqual(types["OS"], "*core.PodOS")
        self.assertEqual(types["Volumes"], "[]core.Volume")

    def test_security_context_holds_host_namespaces(self) -> None:
        """Internal PodSecurityContext starts with the fields conversion moves there."""
        sc = next(f.type.elem for f in POD_SPEC.fields if f.name == "SecurityContext")
        self.assertEqual(self.names(sc)[:6], ["HostNetwork", "HostPID", "HostIPC",
                                              "ShareProcessNamespace", "HostUsers",
                                              "SELinuxOptions"])
        value = gv.from_json(POD_SPEC, {"hostPID": True, "serviceAccount": "sa"})
        self.assertTrue(value["SecurityContext"]["HostPID"])
        self.assertEqual(value["ServiceAccountName"], "sa")

    def test_overrides(self) -> None:
        """Per-type names and types: ServiceAccountTokenProjection.ExpirationSeconds is an
        int64; RBD's image is RBDImage; Quobyte sits after RBD in VolumeSource."""
        sat = gv.internal_type("io.k8s.api.core.v1.ServiceAccountTokenProjection")
        self.assertEqual([(f.name, f.type.name) for f in sat.fields],
                         [("Audience", "string"), ("ExpirationSeconds", "int64"),
                          ("Path", "string")])
        rbd = gv.internal_type("io.k8s.api.core.v1.RBDVolumeSource")
        self.assertEqual(self.names(rbd)[:2], ["CephMonitors", "RBDImage"])
        vs = self.names(gv.internal_type("io.k8s.api.core.v1.VolumeSource"))
        self.assertEqual(vs[vs.index("RBD") + 1], "Quobyte")


class SharpVTests(SynchronousTestCase):
    """L{gv.sharp_v} is C{%#v}."""

    def test_table(self) -> None:
        """Scalars, nil and non-nil pointers, slices and maps, times, embedded structs."""
        container = gv.internal_type("io.k8s.api.core.v1.ContainerPort")
        meta = gv.internal_type("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        selector = gv.internal_type("io.k8s.api.core.v1.ConfigMapKeySelector")
        cases = [
            (container, {"containerPort": 80, "protocol": "TCP"},
             'core.ContainerPort{Name:"", HostPort:0, ContainerPort:80, Protocol:"TCP", '
             'HostIP:""}'),
            (selector, {"name": "cm", "key": "k", "optional": True},
             'core.ConfigMapKeySelector{LocalObjectReference:core.LocalObjectReference{'
             'Name:"cm"}, Key:"k", Optional:(*bool)(0xc000010000)}'),
            (meta, {"name": "a\"b", "labels": {"z": "1", "a": "2"}, "finalizers": []},
             'v1.ObjectMeta{Name:"a\\"b", GenerateName:"", Namespace:"", SelfLink:"", '
             'UID:"", ResourceVersion:"", Generation:0, '
             'CreationTimestamp:time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC), '
             'DeletionTimestamp:<nil>, DeletionGracePeriodSeconds:(*int64)(nil), '
             'Labels:map[string]string{"a":"2", "z":"1"}, Annotations:map[string]string(nil), '
             'OwnerReferences:[]v1.OwnerReference(nil), Finalizers:[]string{}, '
             'ManagedFields:[]v1.ManagedFieldsEntry(nil)}'),
        ]
        for t, value, want in cases:
            self.assertEqual(gv.sharp_v(t, gv.from_json(t, value)), want)

    def test_pod_template(self) -> None:
        """A Job's template as upstream's immutable-template error prints it (the start of
        the batch vector)."""
        text = gv.sharp_v(TEMPLATE, gv.from_json(TEMPLATE, {"spec": SPEC}))
        self.assertTrue(text.startswith('core.PodTemplateSpec{ObjectMeta:v1.ObjectMeta{Name:""'))
        self.assertIn(', Spec:core.PodSpec{Volumes:[]core.Volume{core.Volume{Name:"data", '
                      'VolumeSource:core.VolumeSource{HostPath:(*core.HostPathVolumeSource)'
                      '(nil), EmptyDir:(*core.EmptyDirVolumeSource)(0xc', text)
        self.assertIn('TerminationMessagePolicy:"File", ImagePullPolicy:"IfNotPresent", '
                      'SecurityContext:(*core.SecurityContext)(nil), Stdin:false, '
                      'StdinOnce:false, TTY:false}}', text)
        self.assertTrue(text.endswith("Resources:(*core.ResourceRequirements)(nil)}}"))


class DifferenceTests(SynchronousTestCase):
    """L{gv.difference} is go-cmp's edit script, reverse search first."""

    def test_scripts(self) -> None:
        def script(x: str, y: str) -> str:
            return gv.difference(len(x), len(y), lambda i, j: (1, 0) if x[i] == y[j] else (0, 2))
        cases = [("", "", ""), ("a", "a", "."), ("b", "ab", "Y."), ("ab", "b", "X."),
                 ("ab", "abc", "..Y"), ("abc", "axc", ".XY."), ("", "ab", "YY")]
        for x, y, want in cases:
            self.assertEqual(script(x, y), want, (x, y))

    def test_modified(self) -> None:
        """Similar elements (at most one more difference than sameness) are modified."""
        self.assertEqual(gv.difference(2, 2, lambda i, j: (3, 1) if i == j else (0, 4)), "MM")


class CmpDiffTests(SynchronousTestCase):
    """L{gv.cmp_diff} is C{cmp.Diff}."""

    def test_equal(self) -> None:
        self.assertEqual(diff(SPEC, SPEC), "")

    def test_modified_leaf_in_slice_element(self) -> None:
        """A changed env var value: the element expands, the leaf shows -/+ lines, the
        other fields elide around two records of context."""
        self.assertEqual(diff(SPEC, changed(containers__0__env__1__value="3")), "\n".join([
            "__core.PodSpec{",
            '__\tVolumes:        {{Name: "data", VolumeSource: {EmptyDir: &{}}}},',
            "__\tInitContainers: nil,",
            "__\tContainers: []core.Container{",
            "__\t\t{",
            "__\t\t\t... // 5 identical fields",
            '__\t\t\tPorts:   {{Name: "http", ContainerPort: 80, Protocol: "TCP"}},',
            "__\t\t\tEnvFrom: nil,",
            "__\t\t\tEnv: []core.EnvVar{",
            '__\t\t\t\t{Name: "A", Value: "1"},',
            "__\t\t\t\t{",
            '__\t\t\t\t\tName:      "B",',
            '-_\t\t\t\t\tValue:     "2",',
            '+_\t\t\t\t\tValue:     "3",',
            "__\t\t\t\t\tValueFrom: nil,",
            "__\t\t\t\t},",
            "__\t\t\t},",
            "__\t\t\tResources:    {},",
            "__\t\t\tResizePolicy: nil,",
            "__\t\t\t... // 14 identical fields",
            "__\t\t},",
            "__\t},",
            "__\tEphemeralContainers: nil,",
            '__\tRestartPolicy:       "Always",',
            "__\t... // 29 identical fields",
            "__}",
            ""]))

    def test_top_level_field(self) -> None:
        """A changed PodSpec field; equal containers print compactly, truncated past four
        fields."""
        self.assertEqual(diff(SPEC, changed(restartPolicy="Never")), "\n".join([
            "__core.PodSpec{",
            "__\t... // 2 identical fields",
            '__\tContainers:                    {{Name: "c", Image: "nginx:1.27", Ports: '
            '{{Name: "http", ContainerPort: 80, Protocol: "TCP"}}, Env: {{Name: "A", Value: '
            '"1"}, {Name: "B", Value: "2"}}, ...}},',
            "__\tEphemeralContainers:           nil,",
            '-_\tRestartPolicy:                 "Always",',
            '+_\tRestartPolicy:                 "Never",',
            "__\tTerminationGracePeriodSeconds: &30,",
            "__\tActiveDeadlineSeconds:         nil,",
            "__\t... // 27 identical fields",
            "__}",
            ""]))

    def test_nil_to_values(self) -> None:
        """A nil map or slice given values prints the whole new value with its type."""
        text = diff(SPEC, changed(nodeSelector={"zone": "a", "disk": "ssd"}))
        self.assertIn('-_\tNodeSelector:                 nil,\n'
                      '+_\tNodeSelector:                 map[string]string{"disk": "ssd", '
                      '"zone": "a"},\n', text)
        text = diff(SPEC, changed(containers__0__command=["sh", "-c", "sleep 1"]))
        self.assertIn('-_\t\t\tCommand:    nil,\n'
                      '+_\t\t\tCommand:    []string{"sh", "-c", "sleep 1"},\n', text)

    def test_inserted_and_removed_elements(self) -> None:
        """Added and removed slice elements are +/- lines of their compact value."""
        spec = changed()
        spec["containers"][0]["env"].append({"name": "C", "value": "x"})
        self.assertIn('__\t\t\t\t{Name: "B", Value: "2"},\n+_\t\t\t\t{Name: "C", Value: "x"},\n',
                      diff(SPEC, spec))
        spec = changed()
        del spec["containers"][0]["env"][0]
        self.assertIn('-_\t\t\t\t{Name: "A", Value: "1"},\n__\t\t\t\t{Name: "B", Value: "2"},\n',
                      diff(SPEC, spec))

    def test_internal_security_context(self) -> None:
        """A versioned PodSpec field the internal type keeps in its security context."""
        text = diff(SPEC, changed(shareProcessNamespace=True))
        self.assertIn("__\tSecurityContext: &core.PodSecurityContext{\n"
                      "__\t\tHostNetwork:           false,\n", text)
        self.assertIn("-_\t\tShareProcessNamespace: nil,\n"
                      "+_\t\tShareProcessNamespace: &true,\n", text)
