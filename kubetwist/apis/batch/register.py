# -*- test-case-name: tests.apis.test_batch -*-
"""
The batch/v1 group-version: upstream C{pkg/registry/batch/rest/storage_batch.go} (jobs and
cronjobs with their C{status} subresources) and the two registry strategies.
"""

from __future__ import annotations

from kubetwist.apis.batch import cronjobs, jobs
from kubetwist.apis.batch.printers import CRONJOB_TABLE, JOB_TABLE
from kubetwist.apis.core import pod_warnings
from kubetwist.registry.rest import ResourceSpec, Strategy

__all__ = ["GROUP", "RESOURCES", "STRATEGIES", "VERSION"]

GROUP = "batch"
VERSION = "v1"

RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "cronjobs", "CronJob", "cronjob", short_names=["cj"],
                 categories=["all"], subresources=["status"]),
    ResourceSpec(GROUP, VERSION, "jobs", "Job", "job", categories=["all"],
                 subresources=["status"]),
]

_JOB = dict(kind="Job", group=GROUP, default=jobs.default_job,
            prepare_for_create=jobs.prepare_job_for_create, validate=jobs.validate_job,
            field_attrs=jobs.job_field_attrs, table=JOB_TABLE)
_CRON = dict(kind="CronJob", group=GROUP, default=cronjobs.default_cron_job,
             prepare_for_create=cronjobs.prepare_cron_job_for_create,
             validate=cronjobs.validate_cron_job, table=CRONJOB_TABLE)

STRATEGIES: dict[str, Strategy] = {
    "jobs": Strategy(**_JOB, prepare_for_update=jobs.prepare_job_for_update,
                     validate_update=jobs.validate_job_update, warnings=jobs.job_warnings,
                     delete_warnings=jobs.job_delete_warnings),
    "jobs/status": Strategy(**_JOB, prepare_for_update=jobs.prepare_job_status_for_update,
                            validate_update=jobs.validate_job_status_update),
    "cronjobs": Strategy(**_CRON, prepare_for_update=cronjobs.prepare_cron_job_for_update,
                         validate_update=cronjobs.validate_cron_job_update,
                         warnings=pod_warnings.cron_job_warnings),
    "cronjobs/status": Strategy(**_CRON,
                                prepare_for_update=cronjobs.prepare_cron_job_status_for_update,
                                validate_update=cronjobs.validate_cron_job_status_update),
}
