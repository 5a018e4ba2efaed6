# -*- test-case-name: tests.apis.test_batch -*-
"""
batch/v1 CronJobs: defaulting (upstream C{pkg/apis/batch/v1/defaults.go}
C{SetDefaults_CronJob} plus the job template's defaults), validation
(C{pkg/apis/batch/validation}: C{ValidateCronJobCreate}, C{ValidateCronJobUpdate},
C{validateScheduleFormat}, C{validateTimeZone}, C{ValidateJobTemplateSpec}) and the registry
strategy (C{pkg/registry/batch/cronjob/strategy.go}).
"""

from __future__ import annotations

import copy
import re

from kubetwist.apimachinery.validation import (
    name_is_dns_subdomain,
    validate_annotations,
    validate_labels,
    validate_nonnegative,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.apps.validation import go_label_selector
from kubetwist.apis.batch.cron import parse_standard_error, time_zone_error
from kubetwist.apis.batch.jobs import validate_job_spec_common
from kubetwist.apis.core.podspec_validation import GoValueError
from kubetwist.runtime.field import FieldError, Path, invalid, not_supported, required

__all__ = [
    "default_cron_job",
    "prepare_cron_job_for_create",
    "prepare_cron_job_for_update",
    "prepare_cron_job_status_for_update",
    "validate_cron_job",
    "validate_cron_job_status_update",
    "validate_cron_job_update",
]

_CONCURRENCY = ["Allow", "Forbid", "Replace"]
_TZ_PART = re.compile(r"^[A-Za-z.\-_0-9+]{1,14}$")
#: Upstream: a CronJob's name is at most 52 characters (11 are left for the job suffix).
_MAX_NAME = 52


def default_cron_job(obj: dict) -> None:
    """
    Upstream C{SetObjectDefaults_CronJob}: C{concurrencyPolicy} C{Allow}, C{suspend} false,
    C{successfulJobsHistoryLimit} 3, C{failedJobsHistoryLimit} 1, and the job template's
    spec defaults (the Job's own C{SetDefaults_Job} is not run on a template: only the
    pod template's).
    """
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = "Allow"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("successfulJobsHistoryLimit") is None:
        spec["successfulJobsHistoryLimit"] = 3
    if spec.get("failedJobsHistoryLimit") is None:
        spec["failedJobsHistoryLimit"] = 1
    jt = spec.get("jobTemplate")
    if not isinstance(jt, dict):
        jt = spec["jobTemplate"] = {}
    jmeta = jt.get("metadata")
    if not isinstance(jmeta, dict):
        jmeta = jt["metadata"] = {}
    jmeta.setdefault("creationTimestamp", None)  # Go writes the embedded zero time
    jspec = jt.get("spec")
    if not isinstance(jspec, dict):
        jspec = jt["spec"] = {}
    _default_template_only(jspec)


def _default_template_only(jspec: dict) -> None:
    """The generated defaulters walk into C{jobTemplate.spec.template} (and pod failure policy
    patterns) but do not call C{SetDefaults_Job} on the template."""
    from kubetwist.apis.core.podspec_defaults import default_pod_template_spec

    tpl = jspec.get("template")
    if not isinstance(tpl, dict):
        tpl = jspec["template"] = {}
    default_pod_template_spec(tpl)
    for rule in (jspec.get("podFailurePolicy") or {}).get("rules") or []:
        for pattern in (rule or {}).get("onPodConditions") or []:
            if isinstance(pattern, dict) and not pattern.get("status"):
                pattern["status"] = "True"


def prepare_cron_job_for_create(obj: dict) -> None:
    """Upstream C{cronJobStrategy.PrepareForCreate}: empty status, generation 1."""
    obj["status"] = {}
    obj.setdefault("metadata", {})["generation"] = 1


def prepare_cron_job_for_update(new: dict, old: dict) -> None:
    """Upstream C{PrepareForUpdate}: keep the status; bump the generation on spec changes."""
    new["status"] = copy.deepcopy(old.get("status") or {})
    gen = (old.get("metadata") or {}).get("generation") or 0
    new.setdefault("metadata", {})["generation"] = (
        gen + 1 if new.get("spec") != old.get("spec") else gen)


def prepare_cron_job_status_for_update(new: dict, old: dict) -> None:
    """Upstream C{cronJobStatusStrategy.PrepareForUpdate}: keep the stored spec."""
    new["spec"] = copy.deepcopy(old.get("spec") or {})


def _validate_schedule(schedule: str, allow_tz: bool, time_zone: str | None,
                       path: Path) -> list[FieldError]:
    """Upstream C{validateScheduleFormat}."""
    errs: list[FieldError] = []
    err = parse_standard_error(schedule)
    if err:
        errs.append(invalid(path, schedule, err))
    if allow_tz and "TZ" in schedule and time_zone is not None:
        errs.append(invalid(path, schedule,
                            "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
    elif not allow_tz and "TZ" in schedule:
        errs.append(invalid(path, schedule,
                            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
    return errs


def _validate_time_zone(tz: str | None, path: Path) -> list[FieldError]:
    """Upstream C{validateTimeZone}."""
    if tz is None:
        return []
    if tz == "":
        return [invalid(path, tz, "timeZone must be nil or non-empty string")]
    for part in tz.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TZ_PART.match(part):
            return [invalid(path, tz, f"unknown time zone {tz}")]
    errs: list[FieldError] = []
    if tz.lower() == "local":
        errs.append(invalid(path, tz, "timeZone must be an explicit time zone as defined in "
                                      "https://www.iana.org/time-zones"))
    err = time_zone_error(tz)
    if err:
        errs.append(invalid(path, tz, err))
    return errs


def _validate_job_template_spec(jt: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateJobTemplateSpec}: the job spec without selector, template metadata."""
    jspec = jt.get("spec") or {}
    errs = validate_job_spec_common(jspec, path.child("spec"))
    if jspec.get("selector") is not None:
        errs.append(GoValueError("Invalid", path.child("spec", "selector"),
                                 "&" + go_label_selector(jspec["selector"]),
                                 "`selector` will be auto-generated"))
    if jspec.get("manualSelector"):
        errs.append(not_supported(path.child("spec", "manualSelector"), True, ["nil", "false"]))
    jmeta = jt.get("metadata") or {}
    errs.extend(validate_labels(jmeta.get("labels"), path.child("metadata", "labels")))
    errs.extend(validate_annotations(jmeta.get("annotations"),
                                     path.child("metadata", "annotations")))
    return errs


def _validate_spec(spec: dict, path: Path, allow_tz: bool) -> list[FieldError]:
    """Upstream C{validateCronJobSpec}."""
    errs: list[FieldError] = []
    schedule = spec.get("schedule") or ""
    if not schedule:
        errs.append(required(path.child("schedule")))
    else:
        errs.extend(_validate_schedule(schedule, allow_tz, spec.get("timeZone"),
                                       path.child("schedule")))
    if spec.get("startingDeadlineSeconds") is not None:
        errs.extend(validate_nonnegative(spec["startingDeadlineSeconds"],
                                         path.child("startingDeadlineSeconds")))
    cp = spec.get("concurrencyPolicy") or ""
    if not cp:
        errs.append(required(path.child("concurrencyPolicy")))
    elif cp not in _CONCURRENCY:
        errs.append(not_supported(path.child("concurrencyPolicy"), cp, _CONCURRENCY))
    errs.extend(_validate_job_template_spec(spec.get("jobTemplate") or {},
                                            path.child("jobTemplate")))
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        if spec.get(key) is not None:
            errs.extend(validate_nonnegative(spec[key], path.child(key)))
    errs.extend(_validate_time_zone(spec.get("timeZone"), path.child("timeZone")))
    return errs


def validate_cron_job(cj: dict) -> list[FieldError]:
    """
    Upstream C{ValidateCronJobCreate}: ObjectMeta (DNS subdomain), a name of at most 52
    characters, the spec (C{TZ=} in the schedule refused).
    """
    meta = cj.get("metadata") or {}
    errs = validate_object_meta(meta, True, name_is_dns_subdomain, Path("metadata"))
    name = meta.get("name") or ""
    if len(name) > _MAX_NAME:
        errs.append(invalid(Path("metadata", "name"), name,
                            f"must be no more than {_MAX_NAME} characters"))
    errs.extend(_validate_spec(cj.get("spec") or {}, Path("spec"), allow_tz=False))
    return errs


def validate_cron_job_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateCronJobUpdate}: metadata update rules and the spec (C{TZ=} allowed only
    if the stored schedule had it).
    """
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    old_schedule = (old.get("spec") or {}).get("schedule") or ""
    errs.extend(_validate_spec(new.get("spec") or {}, Path("spec"),
                               allow_tz="TZ" in old_schedule))
    return errs


def validate_cron_job_status_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{cronJobStatusStrategy.ValidateUpdate}: no checks beyond metadata."""
    return validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
