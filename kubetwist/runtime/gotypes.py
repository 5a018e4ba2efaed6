# -*- test-case-name: tests.runtime.test_typed -*-
"""
Go type names (C{reflect.Type.String()}) of the type tables" fields where they differ
from what L{kubetwist.runtime.typed.default_go_type} derives: the named types
(C{v1.Protocol}, C{types.UID}, C{v1.ResourceList}) that Go"s decoder prints in
C{json: cannot unmarshal ... of type v1.Protocol}.  Recorded from kube-apiserver v1.32
by C{tests.runtime.typed_cases}; data only.

C{{type name: {json name: (field type, list or map element type)}}}; C{""} keeps the
derived name.
"""

#: Internal Go package of each API group, where it is not the group's first label (the C{%T}
#: of upstream's messages: C{*core.NamespaceList}, C{*apps.Deployment}).
INTERNAL_PACKAGES = {
    "": "core", "events.k8s.io": "core", "rbac.authorization.k8s.io": "rbac",
    "flowcontrol.apiserver.k8s.io": "flowcontrol", "internal.apiserver.k8s.io":
    "apiserverinternal",
}


def internal_package(group: str) -> str:
    """The Go package of C{group}'s internal types (C{core}, C{apps}, C{rbac})."""
    return INTERNAL_PACKAGES.get(group, group.split(".", 1)[0])


GO_TYPES = {
    "io.k8s.api.admissionregistration.v1.MatchResources": {
        "matchPolicy": ("v1.MatchPolicyType", ""),
    },
    "io.k8s.api.admissionregistration.v1.MutatingWebhook": {
        "failurePolicy": ("v1.FailurePolicyType", ""),
        "matchPolicy": ("v1.MatchPolicyType", ""),
        "reinvocationPolicy": ("v1.ReinvocationPolicyType", ""),
        "sideEffects": ("v1.SideEffectClass", ""),
    },
    "io.k8s.api.admissionregistration.v1.ParamRef": {
        "parameterNotFoundAction": ("v1.ParameterNotFoundActionType", ""),
    },
    "io.k8s.api.admissionregistration.v1.Rule": {
        "scope": ("v1.ScopeType", ""),
    },
    "io.k8s.api.admissionregistration.v1.RuleWithOperations": {
        "operations": ("[]v1.OperationType", "v1.OperationType"),
    },
    "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec": {
        "validationActions": ("[]v1.ValidationAction", "v1.ValidationAction"),
    },
    "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec": {
        "failurePolicy": ("v1.FailurePolicyType", ""),
    },
    "io.k8s.api.admissionregistration.v1.ValidatingWebhook": {
        "failurePolicy": ("v1.FailurePolicyType", ""),
        "matchPolicy": ("v1.MatchPolicyType", ""),
        "sideEffects": ("v1.SideEffectClass", ""),
    },
    "io.k8s.api.admissionregistration.v1.Validation": {
        "reason": ("v1.StatusReason", ""),
    },
    "io.k8s.api.apps.v1.DaemonSetCondition": {
        "status": ("v1.ConditionStatus", ""),
        "type": ("v1.DaemonSetConditionType", ""),
    },
    "io.k8s.api.apps.v1.DaemonSetUpdateStrategy": {
        "type": ("v1.DaemonSetUpdateStrategyType", ""),
    },
    "io.k8s.api.apps.v1.DeploymentCondition": {
        "status": ("v1.ConditionStatus", ""),
        "type": ("v1.DeploymentConditionType", ""),
    },
    "io.k8s.api.apps.v1.DeploymentStrategy": {
        "type": ("v1.DeploymentStrategyType", ""),
    },
    "io.k8s.api.apps.v1.ReplicaSetCondition": {
        "status": ("v1.ConditionStatus", ""),
        "type": ("v1.ReplicaSetConditionType", ""),
    },
    "io.k8s.api.apps.v1.StatefulSetCondition": {
        "status": ("v1.ConditionStatus", ""),
        "type": ("v1.StatefulSetConditionType", ""),
    },
    "io.k8s.api.apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy": {
        "whenDeleted": ("v1.PersistentVolumeClaimRetentionPolicyType", ""),
        "whenScaled": ("v1.PersistentVolumeClaimRetentionPolicyType", ""),
    },
    "io.k8s.api.apps.v1.StatefulSetSpec": {
        "podManagementPolicy": ("v1.PodManagementPolicyType", ""),
    },
    "io.k8s.api.apps.v1.StatefulSetUpdateStrategy": {
        "type": ("v1.StatefulSetUpdateStrategyType", ""),
    },
    "io.k8s.api.autoscaling.v2.ContainerResourceMetricSource": {
        "name": ("v1.ResourceName", ""),
    },
    "io.k8s.api.autoscaling.v2.ContainerResourceMetricStatus": {
        "name": ("v1.ResourceName", ""),
    },
    "io.k8s.api.autoscaling.v2.HPAScalingPolicy": {
        "type": ("v2.HPAScalingPolicyType", ""),
    },
    "io.k8s.api.autoscaling.v2.HPAScalingRules": {
        "selectPolicy": ("v2.ScalingPolicySelect", ""),
    },
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerCondition": {
        "status": ("v1.ConditionStatus", ""),
        "type": ("v2.HorizontalPodAutoscalerConditionType", ""),
    },
    "io.k8s.api.autoscaling.v2.MetricSpec": {
        "type": ("v2.MetricSourceType", ""),
    },
    "io.k8s.api.autoscaling.v2.MetricStatus": {
        "type": ("v2.MetricSourceType", ""),
    },
    "io.k8s.api.autoscaling.v2.MetricTarget": {
        "type": ("v2.MetricTargetType", ""),
    },
    "io.k8s.api.autoscaling.v2.ResourceMetricSource": {
        "name": ("v1.ResourceName", ""),
    },
    "io.k8s.api.autoscaling.v2.ResourceMetricStatus": {
        "name": ("v1.ResourceName", ""),
    },
    "io.k8s.api.batch.v1.CronJobSpec": {
        "concurrencyPolicy": ("v1.ConcurrencyPolicy", ""),
    },
    "io.k8s.api.batch.v1.JobCondition": {
        "status": ("v1.ConditionStatus", ""),
        "type": ("v1.JobConditionType", ""),
    },
    "io.k8s.api.batch.v1.JobSpec": {
        "completionMode": ("v1.CompletionMode", ""),
        "podReplacementPolicy": ("v1.PodReplacementPolicy", ""),
    },
    "io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement": {
        "operator": ("v1.PodFailurePolicyOnExitCodesOperator", ""),
    },
    "io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern": {
        "status": ("v1.ConditionStatus", ""),
        "type": ("v1.PodConditionType", ""),
    },
    "io.k8s.api.batch.v1.PodFailurePolicyRule": {
        "action": ("v1.PodFailurePolicyAction", ""),
    },
    "io.k8s.api.batch.v1.UncountedTerminatedPods": {
        "failed": ("[]types.UID", "types.UID"),
        "succeeded": ("[]types.UID", "types.UID"),
    },
    "io.k8s.api.certificates.v1.CertificateSigningRequestCondition": {
        "status": ("v1.ConditionStatus", ""),
        "type": ("v1.RequestConditionType", ""),
    },
    "io.k8s.api.certificates.v1.CertificateSigningRequestSpec": {
        "usages": ("[]v1.KeyUsage", "v1.KeyUsage"),
    },
    "io.k8s.api.coordination.v1.LeaseSpec": {
        "strategy": ("v1.CoordinatedLeaseStrategy", ""),
    },
    "io.k8s.api.core.v1.AppArmorProfile": {
        "type": ("v1.AppArmorProfileType", ""),
    },
    "io.k8s.api.core.v1.AttachedVolume": {
        "name": ("v1.UniqueVolumeName", ""),
    },
    "io.k8s.api.core.v1.AzureDiskVolumeSource": {
        "cachingMode": ("v1.AzureDataDiskCachingMode", ""),
    },
    "io.k8s.api.core.v1.Capabilities": {
        "add": ("[]v1.Capability", "v1.Capability"),
        "drop": ("[]v1.Capability", "v1.Capability"),
    },
    "io.k8s.api.core.v1.ConfigMapNodeConfigSource": {
        "uid": ("types.UID", ""),
    },
    "io.k8s.api.core.v1.Container": {
        "imagePullPolicy": ("v1.PullPolicy", ""),
        "restartPolicy": ("v1.ContainerRestartPolicy", ""),
        "terminationMessagePolicy": ("v1.TerminationMessagePolicy", ""),
    },
    "io.k8s.api.core.v1.ContainerPort": {
        "protocol": ("v1.Protocol", ""),
    },
    "io.k8s.api.core.v1.ContainerResizePolicy": {
        "resourceName": ("v1.ResourceName", ""),
        "restartPolicy": ("v1.ResourceResizeRestartPolicy", ""),
    },
    "io.k8s.api.core.v1.ContainerStatus": {
        "allocatedResources": ("v1.ResourceList", ""),
    },
    "io.k8s.api.core.v1.EmptyDirVolumeSource": {
        "medium": ("v1.StorageMedium", ""),
    },
    "io.k8s.api.core.v1.EndpointPort": {
        "protocol": ("v1.Protocol", ""),
    },
    "io.k8s.api.core.v1.EphemeralContainerCommon": {
        "imagePullPolicy": ("v1.PullPolicy", ""),
        "restartPolicy": ("v1.ContainerRestartPolicy", ""),
        "terminationMessagePolicy": ("v1.TerminationMessagePolicy", ""),
    },
    "io.k8s.api.core.v1.HTTPGetAction": {
        "scheme": ("v1.URIScheme", ""),
    },
    "io.k8s.api.core.v1.HostPathVolumeSource": {
        "type": ("v1.HostPathType", ""),
    },
    "io.k8s.api.core.v1.ImageVolumeSource": {
        "pullPolicy": ("v1.PullPolicy", ""),
    },
    "io.k8s.api.core.v1.LimitRangeItem": {
        "default": ("v1.ResourceList", ""),
        "defaultRequest": ("v1.ResourceList", ""),
        "max": ("v1.ResourceList", ""),
        "maxLimitRequestRatio": ("v1.ResourceList", ""),
        "min": ("v1.ResourceList", ""),
        "type": ("v1.LimitType", ""),
    },
    "io.k8s.api.core.v1.LoadBalancerIngress": {
        "ipMode": ("v1.LoadBalancerIPMode", ""),
    },
    "io.k8s.api.core.v1.ModifyVolumeStatus": {
        "status": ("v1.PersistentVolumeClaimModifyVolumeStatus", ""),
    },
    "io.k8s.api.core.v1.NamespaceCondition": {
        "status": ("v1.ConditionStatus", ""),
        "type": ("v1.NamespaceConditionType", ""),
    },
    "io.k8s.api.core.v1.NamespaceSpec": {
        "finalizers": ("[]v1.FinalizerName", "v1.FinalizerName"),
    },
    "io.k8s.api.core.v1.NamespaceStatus": {
        "phase": ("v1.NamespacePhase", ""),
    },
    "io.k8s.api.core.v1.NodeAddress": {
        "type": ("v1.NodeAddressType", ""),
    },
    "io.k8s.api.core.v1.NodeCondition": {
        "status": ("v1.ConditionStatus", ""),
        "type": ("v1.NodeConditionType", ""),
    },
    "io.k8s.api.core.v1.NodeSelectorRequirement": {
        "operator": ("v1.NodeSelectorOperator", ""),
    },
    "io.k8s.api.core.v1.NodeStatus": {
        "allocatable": ("v1.ResourceList", ""),
        "capacity": ("v1.ResourceList", ""),
        "phase": ("v1.NodePhase", ""),
        "volumesInUse": ("[]v1.UniqueVolumeName", "v1.UniqueVolumeName"),
    },
    "io.k8s.api.core.v1.ObjectReference": {
        "uid": ("types.UID", ""),
    },
    "io.k8s.api.core.v1.PersistentVolumeClaimCondition": {
        "status": ("v1.ConditionStatus", ""),
        "type": ("v1.PersistentVolumeClaimConditionType", ""),
    },
    "io.k8s.api.core.v1.PersistentVolumeClaimSpec": {
        "accessModes": ("[]v1.PersistentVolumeAccessMode", "v1.PersistentVolumeAccessMode"),
        "volumeMode": ("v1.PersistentVolumeMode", ""),
    },
    "io.k8s.api.core.v1.PersistentVolumeClaimStatus": {
        "accessModes": ("[]v1.PersistentVolumeAccessMode", "v1.PersistentVolumeAccessMode"),
        "allocatedResourceStatuses": ("map[v1.ResourceName]v1.ClaimResourceStatus",
                                      "v1.ClaimResourceStatus"),
        "allocatedResources": ("v1.ResourceList", ""),
        "capacity": ("v1.ResourceList", ""),
        "phase": ("v1.PersistentVolumeClaimPhase", ""),
    },
    "io.k8s.api.core.v1.PersistentVolumeSpec": {
        "accessModes": ("[]v1.PersistentVolumeAccessMode", "v1.PersistentVolumeAccessMode"),
        "capacity": ("v1.ResourceList", ""),
        "persistentVolumeReclaimPolicy": ("v1.PersistentVolumeReclaimPolicy", ""),
        "volumeMode": ("v1.PersistentVolumeMode", ""),
    },
    "io.k8s.api.core.v1.PersistentVolumeStatus": {
        "phase": ("v1.PersistentVolumePhase", ""),
    },
    "io.k8s.api.core.v1.PodCondition": {
        "status": ("v1.ConditionStatus", ""),
        "type": ("v1.PodConditionType", ""),
    },
    "io.k8s.api.core.v1.PodOS": {
        "name": ("v1.OSName", ""),
    },
    "io.k8s.api.core.v1.PodReadinessGate": {
        "conditionType": ("v1.PodConditionType", ""),
    },
    "io.k8s.api.core.v1.PodSecurityContext": {
        "fsGroupChangePolicy": ("v1.PodFSGroupChangePolicy", ""),
        "seLinuxChangePolicy": ("v1.PodSELinuxChangePolicy", ""),
        "supplementalGroupsPolicy": ("v1.SupplementalGroupsPolicy", ""),
    },
    "io.k8s.api.core.v1.PodSpec": {
        "dnsPolicy": ("v1.DNSPolicy", ""),
        "overhead": ("v1.ResourceList", ""),
        "preemptionPolicy": ("v1.PreemptionPolicy", ""),
        "restartPolicy": ("v1.RestartPolicy", ""),
    },
    "io.k8s.api.core.v1.PodStatus": {
        "phase": ("v1.PodPhase", ""),
        "qosClass": ("v1.PodQOSClass", ""),
        "resize": ("v1.PodResizeStatus", ""),
    },
    "io.k8s.api.core.v1.PortStatus": {
        "protocol": ("v1.Protocol", ""),
    },
    "io.k8s.api.core.v1.ReplicationControllerCondition": {
        "status": ("v1.ConditionStatus", ""),
        "type": ("v1.ReplicationControllerConditionType", ""),
    },
    "io.k8s.api.core.v1.ResourceHealth": {
        "health": ("v1.ResourceHealthStatus", ""),
        "resourceID": ("v1.ResourceID", ""),
    },
    "io.k8s.api.core.v1.ResourceQuotaSpec": {
        "hard": ("v1.ResourceList", ""),
        "scopes": ("[]v1.ResourceQuotaScope", "v1.ResourceQuotaScope"),
    },
    "io.k8s.api.core.v1.ResourceQuotaStatus": {
        "hard": ("v1.ResourceList", ""),
        "used": ("v1.ResourceList", ""),
    },
    "io.k8s.api.core.v1.ResourceRequirements": {
        "limits": ("v1.ResourceList", ""),
        "requests": ("v1.ResourceList", ""),
    },
    "io.k8s.api.core.v1.ResourceStatus": {
        "name": ("v1.ResourceName", ""),
    },
    "io.k8s.api.core.v1.ScopedResourceSelectorRequirement": {
        "operator": ("v1.ScopeSelectorOperator", ""),
        "scopeName": ("v1.ResourceQuotaScope", ""),
    },
    "io.k8s.api.core.v1.SeccompProfile": {
        "type": ("v1.SeccompProfileType", ""),
    },
    "io.k8s.api.core.v1.Secret": {
        "type": ("v1.SecretType", ""),
    },
    "io.k8s.api.core.v1.SecurityContext": {
        "procMount": ("v1.ProcMountType", ""),
    },
    "io.k8s.api.core.v1.ServicePort": {
        "protocol": ("v1.Protocol", ""),
    },
    "io.k8s.api.core.v1.ServiceSpec": {
        "externalTrafficPolicy": ("v1.ServiceExternalTrafficPolicy", ""),
        "internalTrafficPolicy": ("v1.ServiceInternalTrafficPolicy", ""),
        "ipFamilies": ("[]v1.IPFamily", "v1.IPFamily"),
        "ipFamilyPolicy": ("v1.IPFamilyPolicy", ""),
        "sessionAffinity": ("v1.ServiceAffinity", ""),
        "type": ("v1.ServiceType", ""),
    },
    "io.k8s.api.core.v1.Taint": {
        "effect": ("v1.TaintEffect", ""),
    },
    "io.k8s.api.core.v1.Toleration": {
        "effect": ("v1.TaintEffect", ""),
        "operator": ("v1.TolerationOperator", ""),
    },
    "io.k8s.api.core.v1.TopologySpreadConstraint": {
        "nodeAffinityPolicy": ("v1.NodeInclusionPolicy", ""),
        "nodeTaintsPolicy": ("v1.NodeInclusionPolicy", ""),
        "whenUnsatisfiable": ("v1.UnsatisfiableConstraintAction", ""),
    },
    "io.k8s.api.core.v1.VolumeMount": {
        "mountPropagation": ("v1.MountPropagationMode", ""),
        "recursiveReadOnly": ("v1.RecursiveReadOnlyMode", ""),
    },
    "io.k8s.api.core.v1.VolumeMountStatus": {
        "recursiveReadOnly": ("v1.RecursiveReadOnlyMode", ""),
    },
    "io.k8s.api.core.v1.VolumeResourceRequirements": {
        "limits": ("v1.ResourceList", ""),
        "requests": ("v1.ResourceList", ""),
    },
    "io.k8s.api.discovery.v1.EndpointPort": {
        "protocol": ("v1.Protocol", ""),
    },
    "io.k8s.api.discovery.v1.EndpointSlice": {
        "addressType": ("v1.AddressType", ""),
    },
    "io.k8s.api.flowcontrol.v1.FlowDistinguisherMethod": {
        "type": ("v1.FlowDistinguisherMethodType", ""),
    },
    "io.k8s.api.flowcontrol.v1.FlowSchemaCondition": {
        "status": ("v1.ConditionStatus", ""),
        "type": ("v1.FlowSchemaConditionType", ""),
    },
    "io.k8s.api.flowcontrol.v1.LimitResponse": {
        "type": ("v1.LimitResponseType", ""),
    },
    "io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationCondition": {
        "status": ("v1.ConditionStatus", ""),
        "type": ("v1.PriorityLevelConfigurationConditionType", ""),
    },
    "io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationSpec": {
        "type": ("v1.PriorityLevelEnablement", ""),
    },
    "io.k8s.api.networking.v1.HTTPIngressPath": {
        "pathType": ("v1.PathType", ""),
    },
    "io.k8s.api.networking.v1.IngressPortStatus": {
        "protocol": ("v1.Protocol", ""),
    },
    "io.k8s.api.networking.v1.NetworkPolicyPort": {
        "protocol": ("v1.Protocol", ""),
    },
    "io.k8s.api.networking.v1.NetworkPolicySpec": {
        "policyTypes": ("[]v1.PolicyType", "v1.PolicyType"),
    },
    "io.k8s.api.node.v1.Overhead": {
        "podFixed": ("v1.ResourceList", ""),
    },
    "io.k8s.api.policy.v1.PodDisruptionBudgetSpec": {
        "unhealthyPodEvictionPolicy": ("v1.UnhealthyPodEvictionPolicyType", ""),
    },
    "io.k8s.api.scheduling.v1.PriorityClass": {
        "preemptionPolicy": ("v1.PreemptionPolicy", ""),
    },
    "io.k8s.api.storage.v1.CSIDriverSpec": {
        "fsGroupPolicy": ("v1.FSGroupPolicy", ""),
        "volumeLifecycleModes": ("[]v1.VolumeLifecycleMode", "v1.VolumeLifecycleMode"),
    },
    "io.k8s.api.storage.v1.StorageClass": {
        "reclaimPolicy": ("v1.PersistentVolumeReclaimPolicy", ""),
        "volumeBindingMode": ("v1.VolumeBindingMode", ""),
    },
    "io.k8s.apimachinery.pkg.apis.meta.v1.Condition": {
        "status": ("v1.ConditionStatus", ""),
    },
    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions": {
        "propagationPolicy": ("v1.DeletionPropagation", ""),
    },
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement": {
        "operator": ("v1.FieldSelectorOperator", ""),
    },
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement": {
        "operator": ("v1.LabelSelectorOperator", ""),
    },
    "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry": {
        "operation": ("v1.ManagedFieldsOperationType", ""),
    },
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {
        "uid": ("types.UID", ""),
    },
    "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference": {
        "uid": ("types.UID", ""),
    },
    "io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions": {
        "uid": ("types.UID", ""),
    },
}
