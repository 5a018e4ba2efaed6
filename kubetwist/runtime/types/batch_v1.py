# -*- test-case-name: tests.runtime.test_types -*-
"""
Field tables of C{k8s.io/api/batch/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.batch.v1}).

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.batch.v1"

GROUP = "batch"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "Job",
    "JobList",
    "CronJob",
    "CronJobList",
)

#: C{+enum} string types: name -> the values of their constants, sorted (OpenAPI
#: C{enum} on fields of that type).
ENUMS = {
    "CompletionMode": ("Indexed", "NonIndexed"),
    "ConcurrencyPolicy": ("Allow", "Forbid", "Replace"),
    "PodFailurePolicyAction": ("Count", "FailIndex", "FailJob", "Ignore"),
    "PodFailurePolicyOnExitCodesOperator": ("In", "NotIn"),
    "PodReplacementPolicy": ("Failed", "TerminatingOrFailed"),
}

TYPES = {
    "CronJob": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "CronJobSpec", "o"),
        ("status", 3, "CronJobStatus", "o"),
    ),
    "CronJobList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]CronJob", "r"),
    ),
    "CronJobSpec": (
        ("schedule", 1, "string", "r"),
        ("timeZone", 8, "*string", "o"),
        ("startingDeadlineSeconds", 2, "*int64", "o"),
        ("concurrencyPolicy", 3, "string", "o", {"enum": "ConcurrencyPolicy"}),
        ("suspend", 4, "*bool", "o"),
        ("jobTemplate", 5, "JobTemplateSpec", "r"),
        ("successfulJobsHistoryLimit", 6, "*int32", "o"),
        ("failedJobsHistoryLimit", 7, "*int32", "o"),
    ),
    "CronJobStatus": (
        ("active", 1, "[]core.ObjectReference", "o", {"list_type": "atomic"}),
        ("lastScheduleTime", 4, "*Time", "o"),
        ("lastSuccessfulTime", 5, "*Time", "o"),
    ),
    "Job": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "JobSpec", "o"),
        ("status", 3, "JobStatus", "o"),
    ),
    "JobCondition": (
        ("type", 1, "string", "r"),
        ("status", 2, "string", "r"),
        ("lastProbeTime", 3, "Time", "o"),
        ("lastTransitionTime", 4, "Time", "o"),
        ("reason", 5, "string", "o"),
        ("message", 6, "string", "o"),
    ),
    "JobList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]Job", "r"),
    ),
    "JobSpec": (
        ("parallelism", 1, "*int32", "o"),
        ("completions", 2, "*int32", "o"),
        ("activeDeadlineSeconds", 3, "*int64", "o"),
        ("podFailurePolicy", 11, "*PodFailurePolicy", "o"),
        ("successPolicy", 16, "*SuccessPolicy", "o"),
        ("backoffLimit", 7, "*int32", "o"),
        ("backoffLimitPerIndex", 12, "*int32", "o"),
        ("maxFailedIndexes", 13, "*int32", "o"),
        ("selector", 4, "*meta.LabelSelector", "o"),
        ("manualSelector", 5, "*bool", "o"),
        ("template", 6, "core.PodTemplateSpec", "r"),
        ("ttlSecondsAfterFinished", 8, "*int32", "o"),
        ("completionMode", 9, "*string", "o", {"enum": "CompletionMode"}),
        ("suspend", 10, "*bool", "o"),
        ("podReplacementPolicy", 14, "*string", "o", {"enum": "PodReplacementPolicy"}),
        ("managedBy", 15, "*string", "o"),
    ),
    "JobStatus": (
        ("conditions", 1, "[]JobCondition", "o", {
            "patch_strategy": "merge", "patch_merge_key": "type", "list_type": "atomic"}),
        ("startTime", 2, "*Time", "o"),
        ("completionTime", 3, "*Time", "o"),
        ("active", 4, "int32", "o"),
        ("succeeded", 5, "int32", "o"),
        ("failed", 6, "int32", "o"),
        ("terminating", 11, "*int32", "o"),
        ("completedIndexes", 7, "string", "o"),
        ("failedIndexes", 10, "*string", "o"),
        ("uncountedTerminatedPods", 8, "*UncountedTerminatedPods", "o"),
        ("ready", 9, "*int32", "o"),
    ),
    "JobTemplateSpec": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "JobSpec", "o"),
    ),
    "PodFailurePolicy": (
        ("rules", 1, "[]PodFailurePolicyRule", "r", {"list_type": "atomic"}),
    ),
    "PodFailurePolicyOnExitCodesRequirement": (
        ("containerName", 1, "*string", "o"),
        ("operator", 2, "string", "r", {"enum": "PodFailurePolicyOnExitCodesOperator"}),
        ("values", 3, "[]int32", "r", {"list_type": "set"}),
    ),
    "PodFailurePolicyOnPodConditionsPattern": (
        ("type", 1, "string", "r"),
        ("status", 2, "string", "r"),
    ),
    "PodFailurePolicyRule": (
        ("action", 1, "string", "r", {"enum": "PodFailurePolicyAction"}),
        ("onExitCodes", 2, "*PodFailurePolicyOnExitCodesRequirement", "o"),
        ("onPodConditions", 3, "[]PodFailurePolicyOnPodConditionsPattern", "o",
         {"list_type": "atomic"}),
    ),
    "SuccessPolicy": (
        ("rules", 1, "[]SuccessPolicyRule", "r", {"list_type": "atomic"}),
    ),
    "SuccessPolicyRule": (
        ("succeededIndexes", 1, "*string", "o"),
        ("succeededCount", 2, "*int32", "o"),
    ),
    "UncountedTerminatedPods": (
        ("succeeded", 1, "[]string", "o", {"list_type": "set"}),
        ("failed", 2, "[]string", "o", {"list_type": "set"}),
    ),
}
