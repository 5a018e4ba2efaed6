# -*- test-case-name: tests.runtime.test_govalues -*-
"""
How Kubernetes' INTERNAL API types (C{k8s.io/kubernetes/pkg/apis/core} and the other internal
packages, which validation works on) differ from the versioned tables of
L{kubetwist.runtime.types}, for printing their values as Go does (L{kubetwist.runtime.govalues}:
C{%#v} and C{cmp.Diff} in validation messages).  Data only; everything not listed here is
derived from the versioned tables (field order, pointers, containers) and
L{kubetwist.runtime.gotypes} (named types), as of Kubernetes v1.32.

 - L{GO_NAMES}: Go field names that are not the JSON name with its first letter upper-cased
   (C{dnsPolicy} is C{DNSPolicy}), for every struct; L{FIELD_NAMES} per struct where a JSON name
   maps to a different Go name there (C{RBDVolumeSource.image} is C{RBDImage}).
 - L{LAYOUTS}: structs whose internal field order differs from the versioned one, as the JSON
   names of the internal fields in Go declaration order (fields of the versioned struct missing
   from the list do not exist internally: C{PodSpec.serviceAccount}, C{PodSpec.hostNetwork}).
 - L{EXTRA_FIELDS}: internal fields the versioned struct has not (C{PodSecurityContext}'s
   C{HostNetwork}, moved there from C{PodSpec} by conversion), as table type expressions.
 - L{TYPE_OVERRIDES}: internal fields whose type differs from the versioned one
   (C{ServiceAccountTokenProjection.ExpirationSeconds} is an C{int64}, not a C{*int64}).
 - L{PACKAGES}: the Go package name of each table package's internal types.
"""

#: Table package -> the Go package name its internal types print with (C{core.PodSpec}); meta
#: types are used by the internal packages as they are (C{v1.ObjectMeta}).
PACKAGES = {
    "io.k8s.api.core.v1": "core",
    "io.k8s.apimachinery.pkg.apis.meta.v1": "v1",
}

#: JSON name -> Go field name, where Go's name is not the JSON name capitalised.
GO_NAMES = {
    "metadata": "ObjectMeta",
    "os": "OS",
    "tty": "TTY",
    "dnsPolicy": "DNSPolicy",
    "dnsConfig": "DNSConfig",
    "setHostnameAsFQDN": "SetHostnameAsFQDN",
    "uid": "UID",
    "ip": "IP",
    "hostIP": "HostIP",
    "hostIPs": "HostIPs",
    "podIP": "PodIP",
    "podIPs": "PodIPs",
    "hostPID": "HostPID",
    "hostIPC": "HostIPC",
    "apiVersion": "APIVersion",
    "httpGet": "HTTPGet",
    "httpHeaders": "HTTPHeaders",
    "tcpSocket": "TCPSocket",
    "grpc": "GRPC",
    "fsType": "FSType",
    "fsGroup": "FSGroup",
    "fsGroupChangePolicy": "FSGroupChangePolicy",
    "seLinuxOptions": "SELinuxOptions",
    "seLinuxChangePolicy": "SELinuxChangePolicy",
    "iscsi": "ISCSI",
    "nfs": "NFS",
    "rbd": "RBD",
    "fc": "FC",
    "csi": "CSI",
    "gcePersistentDisk": "GCEPersistentDisk",
    "awsElasticBlockStore": "AWSElasticBlockStore",
    "cephfs": "CephFS",
    "scaleIO": "ScaleIO",
    "storageos": "StorageOS",
    "pdName": "PDName",
    "iqn": "IQN",
    "iscsiInterface": "ISCSIInterface",
    "chapAuthDiscovery": "DiscoveryCHAPAuth",
    "chapAuthSession": "SessionCHAPAuth",
    "wwids": "WWIDs",
    "targetWWNs": "TargetWWNs",
    "sslEnabled": "SSLEnabled",
    "qosClass": "QOSClass",
    "storagePolicyID": "StoragePolicyID",
    "datasetUUID": "DatasetUUID",
    "gmsaCredentialSpecName": "GMSACredentialSpecName",
    "gmsaCredentialSpec": "GMSACredentialSpec",
    "diskURI": "DataDiskURI",
    "apiGroup": "APIGroup",
}

#: (versioned struct name, JSON name) -> Go field name of the internal struct.
FIELD_NAMES = {
    ("RBDVolumeSource", "monitors"): "CephMonitors",
    ("RBDVolumeSource", "image"): "RBDImage",
    ("RBDVolumeSource", "pool"): "RBDPool",
    ("RBDVolumeSource", "user"): "RadosUser",
    ("RBDPersistentVolumeSource", "monitors"): "CephMonitors",
    ("RBDPersistentVolumeSource", "image"): "RBDImage",
    ("RBDPersistentVolumeSource", "pool"): "RBDPool",
    ("RBDPersistentVolumeSource", "user"): "RadosUser",
    ("GlusterfsVolumeSource", "endpoints"): "EndpointsName",
    ("GlusterfsPersistentVolumeSource", "endpoints"): "EndpointsName",
}

#: Versioned struct name -> the JSON names of the internal struct's fields, in Go order.
LAYOUTS = {
    "PodSpec": (
        "volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy",
        "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector",
        "serviceAccountName", "automountServiceAccountToken", "nodeName", "securityContext",
        "imagePullSecrets", "hostname", "subdomain", "setHostnameAsFQDN", "affinity",
        "schedulerName", "tolerations", "hostAliases", "priorityClassName", "priority",
        "preemptionPolicy", "dnsConfig", "readinessGates", "runtimeClassName", "overhead",
        "enableServiceLinks", "topologySpreadConstraints", "os", "schedulingGates",
        "resourceClaims", "resources",
    ),
    "PodSecurityContext": (
        "hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace", "hostUsers",
        "seLinuxOptions", "windowsOptions", "runAsUser", "runAsGroup", "runAsNonRoot",
        "supplementalGroups", "supplementalGroupsPolicy", "fsGroup", "fsGroupChangePolicy",
        "sysctls", "seccompProfile", "appArmorProfile", "seLinuxChangePolicy",
    ),
    "VolumeSource": (
        "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret",
        "nfs", "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "quobyte", "flexVolume",
        "cinder", "cephfs", "flocker", "downwardAPI", "fc", "azureFile", "configMap",
        "vsphereVolume", "azureDisk", "photonPersistentDisk", "projected", "portworxVolume",
        "scaleIO", "storageos", "csi", "ephemeral", "image",
    ),
    "PersistentVolumeSource": (
        "gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd",
        "quobyte", "iscsi", "flexVolume", "cinder", "cephfs", "fc", "flocker", "azureFile",
        "vsphereVolume", "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO",
        "local", "storageos", "csi",
    ),
}

#: Versioned struct name -> {JSON name: table type expression} of internal-only fields.
EXTRA_FIELDS = {
    "PodSecurityContext": {
        "hostNetwork": "bool",
        "hostPID": "bool",
        "hostIPC": "bool",
        "shareProcessNamespace": "*bool",
        "hostUsers": "*bool",
    },
}

#: (versioned struct name, JSON name) -> the internal field's table type expression.
TYPE_OVERRIDES = {
    ("ServiceAccountTokenProjection", "expirationSeconds"): "int64",
}

#: (versioned struct name, JSON name) -> the named Go type of a field that
#: L{kubetwist.runtime.gotypes} does not record (a pointer's or list's element type).
GO_TYPE_NAMES = {
    ("AzureDiskVolumeSource", "kind"): "core.AzureDataDiskKind",
}

#: Versioned PodSpec fields that conversion moves into the internal PodSecurityContext.
POD_SECURITY_CONTEXT_FIELDS = ("hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace",
                               "hostUsers")

#: Named Go types with a C{String()} method on the value, which go-cmp prints through it
#: (C{s"cpu"} for a C{core.ResourceName}).
STRINGERS = frozenset({"core.ResourceName"})
