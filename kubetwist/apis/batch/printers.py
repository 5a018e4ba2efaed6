# -*- test-case-name: tests.apis.test_batch -*-
"""
Server-side printing of batch/v1 Jobs and CronJobs: upstream C{printJob}, C{printCronJob} and
their column definitions in C{k8s.io/kubernetes/pkg/printers/internalversion/printers.go}.
"""

from __future__ import annotations

from kubetwist.apimachinery.meta import human_duration, parse_rfc3339
from kubetwist.apimachinery.selectors import format_label_selector
from kubetwist.apis.printers import (
    age,
    age_column,
    column,
    layout_container_cells,
    name_column,
    now,
    obj_age,
    obj_name,
)
from kubetwist.registry.rest import TableConvertor

__all__ = ["CRONJOB_TABLE", "JOB_TABLE", "job_status_cell"]

_CONTAINERS = "Names of each container in the template."
_IMAGES = "Images referenced by each container in the template."
#: C{SwaggerDoc()} texts of k8s.io/api batch/v1 v0.32.
_DOCS = {
    "JobStatus.succeeded": "The number of pods which reached phase Succeeded. The value "
    "increases monotonically for a given spec. However, it may decrease in reaction to scale "
    "down of elastic indexed jobs.",
    "JobSpec.selector": "A label query over pods that should match the pod count. Normally, the "
    "system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/"
    "working-with-objects/labels/#label-selectors",
    "CronJobSpec.schedule": "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
    "CronJobSpec.timeZone": "The time zone name for the given schedule, see https://en.wikipedia"
    ".org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time "
    "zone of the kube-controller-manager process. The set of valid time zone names and the time "
    "zone offset is loaded from the system-wide time zone database by the API server during "
    "CronJob validation and the controller manager during execution. If no system-wide time "
    "zone database can be found a bundled version of the database is used instead. If the time "
    "zone name becomes invalid during the lifetime of a CronJob or due to a change in host "
    "configuration, the controller will stop creating new new Jobs and will create a system "
    "event with the reason UnknownTimeZone. More information can be found in https://"
    "kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones",
    "CronJobSpec.suspend": "This flag tells the controller to suspend subsequent executions, it "
    "does not apply to already started executions.  Defaults to false.",
    "CronJobStatus.active": "A list of pointers to currently running jobs.",
    "CronJobStatus.lastScheduleTime": "Information when was the last time the job was "
    "successfully scheduled.",
}


def _has_condition(job: dict, ctype: str) -> bool:
    return any((c or {}).get("type") == ctype and (c or {}).get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or [])


def job_status_cell(job: dict) -> str:
    """Upstream C{printJob}'s C{Status}: the first of Complete, Failed, Terminating, Suspended,
    FailureTarget, SuccessCriteriaMet, else Running."""
    if _has_condition(job, "Complete"):
        return "Complete"
    if _has_condition(job, "Failed"):
        return "Failed"
    if (job.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    for ctype in ("Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if _has_condition(job, ctype):
            return ctype
    return "Running"


def _job_row(job: dict) -> list:
    spec, status = job.get("spec") or {}, job.get("status") or {}
    succeeded = status.get("succeeded") or 0
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    elif (spec.get("parallelism") or 0) > 1:
        completions = f"{succeeded}/1 of {spec['parallelism']}"
    else:
        completions = f"{succeeded}/1"
    duration = ""
    start, end = status.get("startTime"), status.get("completionTime")
    if start:
        try:
            began = parse_rfc3339(start)
            finished = parse_rfc3339(end) if end else now()
            duration = human_duration(finished - began)
        except ValueError:
            duration = ""
    names, images = layout_container_cells(
        ((spec.get("template") or {}).get("spec") or {}).get("containers"))
    return [obj_name(job), job_status_cell(job), completions, duration, obj_age(job),
            names, images, format_label_selector(spec.get("selector"))]


def _bool_ptr(value) -> str:
    if value is None:
        return "<unset>"
    return "True" if value else "False"


def _cron_job_row(cj: dict) -> list:
    spec, status = cj.get("spec") or {}, cj.get("status") or {}
    last = status.get("lastScheduleTime")
    jspec = (spec.get("jobTemplate") or {}).get("spec") or {}
    names, images = layout_container_cells(
        ((jspec.get("template") or {}).get("spec") or {}).get("containers"))
    tz = spec.get("timeZone")
    return [obj_name(cj), spec.get("schedule") or "", "<none>" if tz is None else tz,
            _bool_ptr(spec.get("suspend")), len(status.get("active") or []),
            age(last) if last else "<none>", obj_age(cj),
            names, images, format_label_selector(jspec.get("selector"))]


JOB_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Status", "string", "Status of the job."),
        column("Completions", "string", _DOCS["JobStatus.succeeded"]),
        column("Duration", "string", "Time required to complete the job."),
        age_column(),
        column("Containers", "string", _CONTAINERS, priority=1),
        column("Images", "string", _IMAGES, priority=1),
        column("Selector", "string", _DOCS["JobSpec.selector"], priority=1),
    ],
    row=_job_row,
)

CRONJOB_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Schedule", "string", _DOCS["CronJobSpec.schedule"]),
        column("Timezone", "string", _DOCS["CronJobSpec.timeZone"]),
        column("Suspend", "boolean", _DOCS["CronJobSpec.suspend"]),
        column("Active", "integer", _DOCS["CronJobStatus.active"]),
        column("Last Schedule", "string", _DOCS["CronJobStatus.lastScheduleTime"]),
        age_column(),
        column("Containers", "string", _CONTAINERS, priority=1),
        column("Images", "string", _IMAGES, priority=1),
        column("Selector", "string", _DOCS["JobSpec.selector"], priority=1),
    ],
    row=_cron_job_row,
)
