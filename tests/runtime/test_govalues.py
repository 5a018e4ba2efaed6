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


class QuantityTests(SynchronousTestCase):
    """L{gv.quantity_fields} is what C{ParseQuantity} leaves in a C{resource.Quantity}."""

    def test_table(self) -> None:
        cases = [
            (None, 0, 0, "", ""),
            ("0", 0, 0, "0", "DecimalSI"),
            ("500m", 500, -3, "500m", "DecimalSI"),
            ("1", 1, 0, "1", "DecimalSI"),
            ("1000", 1000, 0, "", "DecimalSI"),          # not canonical: 1k
            ("1.5", 15, -1, "", "DecimalSI"),
            ("-2k", -2, 3, "-2k", "DecimalSI"),
            ("128Mi", 134217728, 0, "", "BinarySI"),     # 128 is a multiple of 8
            ("1Gi", 1073741824, 0, "1Gi", "BinarySI"),
            ("1536Mi", 1610612736, 0, "", "BinarySI"),
            ("12e3", 12, 3, "12e3", "DecimalExponent"),
        ]
        for text, value, scale, cached, fmt in cases:
            f = gv.quantity_fields(text)
            self.assertEqual((f["i"]["value"], f["i"]["scale"], f["s"], f["Format"]),
                             (value, scale, cached, fmt), text)

    def test_sharp_v(self) -> None:
        t = gv.internal_type("io.k8s.api.core.v1.ResourceRequirements")
        self.assertEqual(
            gv.sharp_v(t, gv.from_json(t, {"limits": {"cpu": "100m"}})),
            'core.ResourceRequirements{Limits:core.ResourceList{"cpu":resource.Quantity{'
            'i:resource.int64Amount{value:100, scale:-3}, d:resource.infDecAmount{'
            'Dec:(*inf.Dec)(nil)}, s:"100m", Format:"DecimalSI"}}, '
            'Requests:core.ResourceList(nil), Claims:[]core.ResourceClaim(nil)}')

    def test_diff(self) -> None:
        """Resource names print through their String method, quantities as their fields."""
        old = changed(containers__0__resources={"limits": {"cpu": "500m", "memory": "128Mi"}})
        new = changed(containers__0__resources={"limits": {"cpu": "1", "memory": "128Mi"}})
        self.assertIn(
            "__\t\t\t\tLimits: core.ResourceList{\n"
            '-_\t\t\t\t\ts"cpu":    {i: resource.int64Amount{value: 500, scale: -3}, s: "500m",'
            ' Format: "DecimalSI"},\n'
            '+_\t\t\t\t\ts"cpu":    {i: resource.int64Amount{value: 1}, s: "1", Format: '
            '"DecimalSI"},\n'
            '__\t\t\t\t\ts"memory": {i: {...}, Format: "BinarySI"},\n', diff(old, new))


class SliceDiffTests(SynchronousTestCase):
    """Differences within long strings and slices of numbers (C{report_slices.go})."""

    def test_long_string(self) -> None:
        """Strings of 32 bytes or more differ by chunks in a C{strings.Join}."""
        base = "abcdefghijklmnopqrstuvwxyz0123456789-"
        old = changed(containers__0__env__0__value=base + "long-value")
        new = changed(containers__0__env__0__value=base + "LONG-value")
        self.assertIn('__\t\t\t\t\tName: "A",\n'
                      "__\t\t\t\t\tValue: strings.Join({\n"
                      f'__\t\t\t\t\t\t"{base}",\n'
                      '-_\t\t\t\t\t\t"long",\n'
                      '+_\t\t\t\t\t\t"LONG",\n'
                      '__\t\t\t\t\t\t"-value",\n'
                      '__\t\t\t\t\t}, ""),\n', diff(old, new))

    def test_short_string(self) -> None:
        """Shorter strings are replaced whole."""
        self.assertIn('-_\t\t\t\t\tValue:     "1",\n+_\t\t\t\t\tValue:     "one",\n',
                      diff(SPEC, changed(containers__0__env__0__value="one")))

    def test_lined_text(self) -> None:
        """Text of four lines or more differs by lines between triple quotes."""
        lines = ["first line", "second line", "third line", "fourth line", "fifth line"]
        old = changed(containers__0__env__0__value="\n".join(lines) + "\n")
        lines[2] = "THIRD line"
        new = changed(containers__0__env__0__value="\n".join(lines) + "\n")
        self.assertIn("__\t\t\t\t\tValue: (\n"
                      '__\t\t\t\t\t\t"""\n'
                      "__\t\t\t\t\t\tfirst line\n"
                      "__\t\t\t\t\t\tsecond line\n"
                      "-_\t\t\t\t\t\tthird line\n"
                      "+_\t\t\t\t\t\tTHIRD line\n"
                      "__\t\t\t\t\t\tfourth line\n"
                      "__\t\t\t\t\t\tfifth line\n"
                      '__\t\t\t\t\t\t"""\n'
                      "__\t\t\t\t\t),\n", diff(old, new))

    def test_numbers(self) -> None:
        old = changed(securityContext={"supplementalGroups": [1000]})
        new = changed(securityContext={"supplementalGroups": [2000]})
        self.assertIn("__\t\tSupplementalGroups: []int64{\n-_\t\t\t1000,\n+_\t\t\t2000,\n"
                      "__\t\t},\n", diff(old, new))


class SemanticEqualTests(SynchronousTestCase):
    """L{gv.semantic_equal} is C{apiequality.Semantic.DeepEqual}."""

    def test_table(self) -> None:
        cases = [
            (SPEC, SPEC, True),
            (SPEC, changed(initContainers=[]), True),          # nil and empty slices
            (SPEC, changed(nodeSelector={}), True),            # nil and empty maps
            (changed(containers__0__resources={"limits": {"cpu": "1"}}),
             changed(containers__0__resources={"limits": {"cpu": "1000m"}}), True),
            (SPEC, changed(restartPolicy="Never"), False),
            (SPEC, changed(activeDeadlineSeconds=0), False),   # nil and a pointer to 0
        ]
        for old, new, want in cases:
            self.assertEqual(gv.semantic_equal(POD_SPEC, gv.from_json(POD_SPEC, old),
                                               gv.from_json(POD_SPEC, new)), want)


class GoNameTests(SynchronousTestCase):
    """Go field and type names the JSON names do not give."""

    def test_table(self) -> None:
        cases = [
            ("TypedLocalObjectReference", "APIGroup", "*string"),
            ("GlusterfsVolumeSource", "EndpointsName", "string"),
            ("AzureDiskVolumeSource", "DataDiskURI", "string"),
            ("AzureDiskVolumeSource", "Kind", "*core.AzureDataDiskKind"),
            ("ISCSIVolumeSource", "DiscoveryCHAPAuth", "bool"),
            ("WindowsSecurityContextOptions", "GMSACredentialSpecName", "*string"),
            ("Container", "TTY", "bool"),
            ("ContainerPort", "HostIP", "string"),
            ("ObjectFieldSelector", "APIVersion", "string"),
            ("Capabilities", "Add", "[]core.Capability"),
            ("ResourceRequirements", "Limits", "core.ResourceList"),
        ]
        for struct, name, type_name in cases:
            t = gv.internal_type("io.k8s.api.core.v1." + struct)
            self.assertEqual({f.name: f.type.name for f in t.fields}.get(name), type_name,
                             (struct, name))
