# -*- test-case-name: tests.apis.test_batch -*-
"""
batch/v1 Jobs: defaulting (upstream C{pkg/apis/batch/v1/defaults.go} C{SetDefaults_Job} plus
the pod template walk), validation (C{pkg/apis/batch/validation}: C{ValidateJob},
C{ValidateGeneratedSelector}, C{validateJobSpec}, C{ValidateJobUpdate},
C{ValidateJobUpdateStatus}) and the registry strategy (C{pkg/registry/batch/job/strategy.go}:
the generated selector and template labels, status reset, generation).

Feature gates at their v1.32 defaults: JobPodFailurePolicy, JobBackoffLimitPerIndex,
JobPodReplacementPolicy, JobManagedBy (beta, on), JobSuccessPolicy (beta, on).
"""

from __future__ import annotations

import copy

from kubetwist.apimachinery.validation import (
    name_is_dns_subdomain,
    validate_immutable_field,
    validate_label_selector,
    validate_nonnegative,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.apps.validation import go_label_selector, selector_matches
from kubetwist.apis.core.pod_warnings import job_spec_warnings, workload_name_warning
from kubetwist.apis.core.podspec_defaults import default_pod_template_spec
from kubetwist.apis.core.podspec_validation import (
    GoValueError,
    go_string_map,
    validate_pod_template_spec,
)
from kubetwist.runtime import govalues
from kubetwist.runtime.field import (
    FieldError,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)

__all__ = [
    "CONTROLLER_UID_LABEL",
    "JOB_NAME_LABEL",
    "LEGACY_CONTROLLER_UID_LABEL",
    "LEGACY_JOB_NAME_LABEL",
    "default_job",
    "default_job_spec",
    "job_field_attrs",
    "job_warnings",
    "prepare_job_for_create",
    "prepare_job_for_update",
    "prepare_job_status_for_update",
    "validate_job",
    "validate_job_spec_common",
    "validate_job_status_update",
    "validate_job_update",
]

#: Upstream C{batch.ControllerUidLabel} and friends.
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"

_MAX_INT32 = 2**31 - 1
#: Upstream C{maxParallelismForIndexedJob}, C{maxFailedIndexesForIndexedJob},
#: C{completionsSoftLimit}, C{parallelismLimitForHighCompletions}.
_MAX_PARALLELISM_INDEXED = 100000
_MAX_FAILED_INDEXES = 100000
_COMPLETIONS_SOFT_LIMIT = 100000
_PARALLELISM_LIMIT_HIGH_COMPLETIONS = 10000


def _spec(obj: dict) -> dict:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta


def default_job_spec(spec: dict) -> None:
    """
    Upstream C{SetDefaults_Job} on a C{JobSpec} dict: C{parallelism}/C{completions} 1 (both when
    both unset), C{backoffLimit} 6 (MaxInt32 with C{backoffLimitPerIndex}), C{completionMode}
    C{NonIndexed}, C{suspend} false, C{podReplacementPolicy} C{TerminatingOrFailed} (C{Failed}
    with a C{podFailurePolicy}), C{manualSelector} false, C{onPodConditions[].status} C{True},
    and the pod template defaults.
    """
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = _MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    if spec.get("completionMode") is None:
        spec["completionMode"] = "NonIndexed"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    pfp = spec.get("podFailurePolicy")
    if isinstance(pfp, dict):
        for rule in pfp.get("rules") or []:
            for pattern in (rule or {}).get("onPodConditions") or []:
                if isinstance(pattern, dict) and not pattern.get("status"):
                    pattern["status"] = "True"
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if pfp is not None else "TerminatingOrFailed"
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    tpl = spec.get("template")
    if not isinstance(tpl, dict):
        tpl = spec["template"] = {}
    default_pod_template_spec(tpl)


def default_job(obj: dict) -> None:
    """
    Upstream C{SetObjectDefaults_Job}: the spec defaults; a Job without labels takes its
    template's labels.  Upstream assigns the template's map itself (Go maps alias), so the
    selector labels C{generateSelector} adds to the template on create land on the Job's
    labels too; the same dict is shared here for that reason.
    """
    spec = _spec(obj)
    default_job_spec(spec)
    labels = (spec.get("template") or {}).get("metadata", {}).get("labels")
    meta = _meta(obj)
    if labels is not None and not meta.get("labels"):
        meta["labels"] = labels


def _generate_selector(job: dict) -> None:
    """Upstream C{generateSelector}: template labels and the selector from the uid and name."""
    meta = _meta(job)
    spec = _spec(job)
    tpl = spec.setdefault("template", {})
    tmeta = tpl.get("metadata")
    if not isinstance(tmeta, dict):
        tmeta = tpl["metadata"] = {}
    labels = tmeta.get("labels")
    if not isinstance(labels, dict):
        labels = tmeta["labels"] = {}
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, meta.get("name", ""))
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        labels.setdefault(key, meta.get("uid", ""))
    sel = spec.get("selector")
    if not isinstance(sel, dict):
        sel = spec["selector"] = {}
    ml = sel.get("matchLabels")
    if not isinstance(ml, dict):
        ml = sel["matchLabels"] = {}
    ml.setdefault(CONTROLLER_UID_LABEL, meta.get("uid", ""))


def prepare_job_for_create(job: dict) -> None:
    """
    Upstream C{jobStrategy.PrepareForCreate}: the generated selector unless C{manualSelector},
    an empty status, generation 1.  Needs C{metadata.uid} and C{metadata.name} already set.
    """
    if not _spec(job).get("manualSelector"):
        _generate_selector(job)
    job["status"] = {}
    meta = _meta(job)
    meta["generation"] = 1
    # upstream's answer is decoded from storage, defaults applied again: a Job still without
    # labels takes its template's, now holding the generated ones
    labels = ((_spec(job).get("template") or {}).get("metadata") or {}).get("labels")
    if labels is not None and not meta.get("labels"):
        meta["labels"] = labels


def prepare_job_for_update(new: dict, old: dict) -> None:
    """Upstream C{jobStrategy.PrepareForUpdate}: keep the status; bump generation on spec change."""
    new["status"] = copy.deepcopy(old.get("status") or {})
    gen = (old.get("metadata") or {}).get("generation") or 0
    _meta(new)["generation"] = gen + 1 if new.get("spec") != old.get("spec") else gen


def prepare_job_status_for_update(new: dict, old: dict) -> None:
    """Upstream C{jobStatusStrategy.PrepareForUpdate}: keep the stored spec."""
    new["spec"] = copy.deepcopy(old.get("spec") or {})


# --- validation -----------------------------------------------------------------------------


def _validate_has_label(tmeta: dict, path: Path, key: str, expected: str) -> list[FieldError]:
    """Upstream C{ValidateHasLabel}."""
    labels = tmeta.get("labels") or {}
    if key not in labels:
        return [required(path.child("labels").key(key), expected)]
    if labels[key] != expected:
        return [GoValueError("Invalid", path.child("labels").key(key), go_string_map(labels),
                             f"must be '{expected}'")]
    return []


def _validate_generated_selector(job: dict, require_prefixed: bool) -> list[FieldError]:
    """Upstream C{ValidateGeneratedSelector}."""
    spec = job.get("spec") or {}
    if spec.get("manualSelector") or spec.get("selector") is None:
        return []
    meta = job.get("metadata") or {}
    uid, name = meta.get("uid", ""), meta.get("name", "")
    errs: list[FieldError] = []
    if not uid:
        errs.append(required(Path("metadata", "uid")))
    tmeta = (spec.get("template") or {}).get("metadata") or {}
    tpath = Path("spec", "template", "metadata")
    errs.extend(_validate_has_label(tmeta, tpath, LEGACY_CONTROLLER_UID_LABEL, uid))
    errs.extend(_validate_has_label(tmeta, tpath, LEGACY_JOB_NAME_LABEL, name))
    expected = {LEGACY_CONTROLLER_UID_LABEL: uid, LEGACY_JOB_NAME_LABEL: name}
    if require_prefixed:
        errs.extend(_validate_has_label(tmeta, tpath, CONTROLLER_UID_LABEL, uid))
        errs.extend(_validate_has_label(tmeta, tpath, JOB_NAME_LABEL, name))
        expected[CONTROLLER_UID_LABEL] = uid
        expected[JOB_NAME_LABEL] = name
    if not validate_label_selector(spec["selector"], Path("spec", "selector")):
        if not selector_matches(spec["selector"], expected):
            errs.append(GoValueError("Invalid", Path("spec", "selector"),
                                     go_label_selector(spec["selector"]),
                                     "`selector` not auto-generated"))
    return errs


def _nonneg(spec: dict, key: str, path: Path) -> list[FieldError]:
    value = spec.get(key)
    return validate_nonnegative(value, path.child(key)) if value is not None else []


def _validate_pod_failure_policy(spec: dict, path: Path) -> list[FieldError]:
    """Upstream C{validatePodFailurePolicy} (the rule shapes and actions)."""
    errs: list[FieldError] = []
    rules_path = path.child("rules")
    rules = (spec.get("podFailurePolicy") or {}).get("rules") or []
    if len(rules) > 20:
        errs.append(FieldError("TooMany", rules_path, len(rules), "must have at most 20 items"))
    actions = ["Count", "FailIndex", "FailJob", "Ignore"]
    for i, rule in enumerate(rules):
        rule = rule or {}
        rp = rules_path.index(i)
        action = rule.get("action", "")
        if action not in actions:
            errs.append(not_supported(rp.child("action"), action, actions))
        elif action == "FailIndex" and spec.get("backoffLimitPerIndex") is None:
            errs.append(forbidden(rp.child("action"),
                                  "requires the backoffLimitPerIndex to be set"))
        has_codes = rule.get("onExitCodes") is not None
        has_conds = bool(rule.get("onPodConditions"))
        if has_codes and has_conds:
            errs.append(invalid(rp, "", "specifying both OnExitCodes and OnPodConditions is "
                                        "not supported"))
        elif not has_codes and not has_conds:
            errs.append(invalid(rp, "", "specifying one of OnExitCodes and OnPodConditions is "
                                        "required"))
        codes = rule.get("onExitCodes")
        if isinstance(codes, dict):
            cp = rp.child("onExitCodes")
            op = codes.get("operator", "")
            if op not in ("In", "NotIn"):
                errs.append(not_supported(cp.child("operator"), op, ["In", "NotIn"]))
            values = codes.get("values") or []
            if not values:
                errs.append(invalid(cp.child("values"), values, "at least one value is required"))
            elif len(values) > 255:
                errs.append(FieldError("TooMany", cp.child("values"), len(values),
                                       "must have at most 255 items"))
            prev = None
            for j, v in enumerate(values):
                if op == "In" and v == 0:
                    errs.append(invalid(cp.child("values").index(j), v,
                                        "must not be 0 for the In operator"))
                if prev is not None and prev >= v:
                    errs.append(invalid(cp.child("values").index(j), v,
                                        "must be ordered" if prev < v else
                                        ("must be ordered" if prev > v else "duplicated values")))
                prev = v
        for j, pattern in enumerate(rule.get("onPodConditions") or []):
            pp = rp.child("onPodConditions").index(j)
            status = (pattern or {}).get("status", "")
            if status not in ("True", "False", "Unknown"):
                errs.append(not_supported(pp.child("status"), status,
                                          ["True", "False", "Unknown"]))
    return errs


def validate_job_spec_common(spec: dict, path: Path,
                             template_labels_check: bool = True) -> list[FieldError]:
    """
    Upstream C{validateJobSpec}: counters non-negative, completion mode and its limits, the pod
    failure policy, the pod replacement policy, the pod template and its C{restartPolicy}.
    """
    errs: list[FieldError] = []
    for key in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit",
                "ttlSecondsAfterFinished"):
        errs.extend(_nonneg(spec, key, path))
    mode = spec.get("completionMode")
    indexed = mode == "Indexed"
    if spec.get("backoffLimitPerIndex") is not None:
        errs.extend(_nonneg(spec, "backoffLimitPerIndex", path))
        if not indexed:
            errs.append(forbidden(path.child("backoffLimitPerIndex"),
                                  "requires indexed completion mode"))
    if spec.get("maxFailedIndexes") is not None:
        errs.extend(_nonneg(spec, "maxFailedIndexes", path))
        if spec.get("backoffLimitPerIndex") is None:
            errs.append(required(path.child("backoffLimitPerIndex"),
                                 "when maxFailedIndexes is specified"))
    if mode is not None:
        if mode not in ("NonIndexed", "Indexed"):
            errs.append(not_supported(path.child("completionMode"), mode,
                                      ["NonIndexed", "Indexed"]))
        if indexed:
            completions, parallelism = spec.get("completions"), spec.get("parallelism")
            if completions is None:
                errs.append(required(path.child("completions"),
                                     "when completion mode is Indexed"))
            if parallelism is not None and parallelism > _MAX_PARALLELISM_INDEXED:
                errs.append(invalid(path.child("parallelism"), parallelism,
                                    f"must be less than or equal to {_MAX_PARALLELISM_INDEXED} "
                                    "when completion mode is Indexed"))
            mfi = spec.get("maxFailedIndexes")
            if completions is not None and mfi is not None and mfi > completions:
                errs.append(invalid(path.child("maxFailedIndexes"), mfi,
                                    "must be less than or equal to completions"))
            if mfi is not None and mfi > _MAX_FAILED_INDEXES:
                errs.append(invalid(path.child("maxFailedIndexes"), mfi,
                                    f"must be less than or equal to {_MAX_FAILED_INDEXES}"))
            if (completions is not None and completions > _COMPLETIONS_SOFT_LIMIT
                    and spec.get("backoffLimitPerIndex") is not None
                    and parallelism is not None
                    and parallelism > _PARALLELISM_LIMIT_HIGH_COMPLETIONS):
                errs.append(invalid(path.child("parallelism"), parallelism,
                                    f"must be less than or equal to "
                                    f"{_PARALLELISM_LIMIT_HIGH_COMPLETIONS} when completions are "
                                    f"above {_COMPLETIONS_SOFT_LIMIT} and used with backoff "
                                    "limit per index"))
    if spec.get("podFailurePolicy") is not None:
        errs.extend(_validate_pod_failure_policy(spec, path.child("podFailurePolicy")))
    prp = spec.get("podReplacementPolicy")
    if prp is not None:
        if spec.get("podFailurePolicy") is not None:
            if prp != "Failed":
                errs.append(not_supported(path.child("podReplacementPolicy"), prp, ["Failed"]))
        elif prp not in ("Failed", "TerminatingOrFailed"):
            errs.append(not_supported(path.child("podReplacementPolicy"), prp,
                                      ["Failed", "TerminatingOrFailed"]))
    tpl = spec.get("template") or {}
    errs.extend(validate_pod_template_spec(tpl, path.child("template")))
    restart = (tpl.get("spec") or {}).get("restartPolicy", "")
    rp_path = path.child("template", "spec", "restartPolicy")
    if restart == "Always":
        # upstream validateJobSpec: Always (the pod default) is "required" to be another value
        errs.append(required(rp_path, 'valid values: "OnFailure", "Never"'))
    elif restart not in ("OnFailure", "Never"):
        errs.append(not_supported(rp_path, restart, ["OnFailure", "Never"]))
    elif spec.get("podFailurePolicy") is not None and restart != "Never":
        errs.append(invalid(rp_path, restart,
                            'only "Never" is supported when podFailurePolicy is specified'))
    return errs


def _validate_job_spec(spec: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateJobSpec}: the common checks plus the selector and its match."""
    errs = validate_job_spec_common(spec, path)
    sel = spec.get("selector")
    if sel is None:
        errs.append(required(path.child("selector")))
        return errs
    sel_errs = validate_label_selector(sel, path.child("selector"))
    errs.extend(sel_errs)
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if not sel_errs and not selector_matches(sel, labels or {}):
        errs.append(GoValueError("Invalid", path.child("template", "metadata", "labels"),
                                 go_string_map(labels),
                                 "`selector` does not match template `labels`"))
    return errs


def validate_job(job: dict, require_prefixed: bool = True) -> list[FieldError]:
    """
    Upstream C{ValidateJob}: ObjectMeta (DNS subdomain name), the generated selector, the spec.

    @param require_prefixed: upstream C{RequirePrefixedLabels} (true on create; on update only
        when the stored template already had both prefixed labels).
    """
    errs = validate_object_meta(job.get("metadata") or {}, True, name_is_dns_subdomain,
                                Path("metadata"))
    errs.extend(_validate_generated_selector(job, require_prefixed))
    errs.extend(_validate_job_spec(job.get("spec") or {}, Path("spec")))
    return errs


_MUTABLE_SCHEDULING = ("nodeSelector", "affinity", "tolerations", "schedulingGates")


def _take_scheduling_directives(otpl: dict, ntpl: dict) -> None:
    """
    Upstream C{validatePodTemplateUpdate} with C{AllowMutableSchedulingDirectives}: the old
    template takes the new one's node affinity (an old affinity left with nothing else is
    dropped), node selector, tolerations, scheduling gates, labels and annotations, so only the
    other fields are compared.
    """
    ospec, nspec = otpl.setdefault("spec", {}), ntpl.get("spec") or {}
    naff, oaff = nspec.get("affinity"), ospec.get("affinity")
    if naff is None and oaff is not None:
        rest = {k: v for k, v in oaff.items() if k != "nodeAffinity" and v is not None}
        if rest:
            ospec["affinity"] = rest
        else:
            ospec.pop("affinity")
    elif naff is not None and oaff is None:
        ospec["affinity"] = {"nodeAffinity": naff.get("nodeAffinity")}
    elif naff is not None:
        ospec["affinity"] = {**oaff, "nodeAffinity": naff.get("nodeAffinity")}
    for key in _MUTABLE_SCHEDULING:
        if key == "affinity":
            continue
        ospec.pop(key, None)
        if key in nspec:
            ospec[key] = nspec[key]
    ometa, nmeta = otpl.setdefault("metadata", {}), ntpl.get("metadata") or {}
    for key in ("labels", "annotations"):
        ometa.pop(key, None)
        if key in nmeta:
            ometa[key] = nmeta[key]


def validate_job_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{jobStrategy.ValidateUpdate}: L{validate_job} plus C{ValidateJobUpdate}: metadata
    update rules; C{completions} (unless elastic: C{Indexed} with C{completions ==
    parallelism} on both sides), C{selector}, C{completionMode}, C{podFailurePolicy},
    C{backoffLimitPerIndex} and C{managedBy} immutable; the template immutable except the
    scheduling directives of a suspended job that never started.
    """
    ospec = old.get("spec") or {}
    otlabels = ((ospec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    require_prefixed = JOB_NAME_LABEL in otlabels and CONTROLLER_UID_LABEL in otlabels
    errs = validate_job(new, require_prefixed)
    errs.extend(validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                            Path("metadata")))
    spec = new.get("spec") or {}
    path = Path("spec")
    elastic = (spec.get("completionMode") == "Indexed"
               and spec.get("completions") == spec.get("parallelism")
               and ospec.get("completions") == ospec.get("parallelism"))
    if not elastic:
        errs.extend(validate_immutable_field(spec.get("completions"), ospec.get("completions"),
                                             path.child("completions")))
    if spec.get("selector") != ospec.get("selector"):
        errs.append(GoValueError("Invalid", path.child("selector"),
                                 go_label_selector(spec.get("selector")), "field is immutable"))
    ntpl, otpl = copy.deepcopy(spec.get("template")
                               or {}), copy.deepcopy(ospec.get("template") or {})
    suspended = bool(ospec.get("suspend"))
    not_started = not (old.get("status") or {}).get("startTime")
    if suspended and not_started:
        _take_scheduling_directives(otpl, ntpl)
    tpl_type = govalues.internal_type("io.k8s.api.core.v1.PodTemplateSpec")
    if not govalues.semantic_equal(tpl_type, govalues.from_json(tpl_type, ntpl),
                                   govalues.from_json(tpl_type, otpl)):
        printed = govalues.sharp_v(tpl_type, govalues.from_json(tpl_type, spec.get("template")))
        errs.append(GoValueError("Invalid", path.child("template"), printed,
                                 "field is immutable"))
    for key in ("completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy"):
        if spec.get(key) == ospec.get(key):
            continue
        if key == "podFailurePolicy" and spec.get(key) is not None:
            # a *batch.PodFailurePolicy prints as its struct's %#v
            pfp_type = govalues.internal_type("io.k8s.api.batch.v1.PodFailurePolicy")
            errs.append(GoValueError("Invalid", path.child(key), govalues.sharp_v(
                pfp_type, govalues.from_json(pfp_type, spec[key])), "field is immutable"))
        else:
            errs.append(invalid(path.child(key), spec.get(key), "field is immutable"))
    return errs


def validate_job_status_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateJobUpdateStatus}: metadata update rules and non-negative counters
    (C{status.active}, C{succeeded}, C{failed}, C{ready}, C{terminating}).
    """
    errs = validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {},
                                       Path("metadata"))
    status = new.get("status") or {}
    for key in ("active", "succeeded", "failed"):
        errs.extend(validate_nonnegative(status.get(key) or 0, Path("status", key)))
    for key in ("ready", "terminating"):
        if status.get(key) is not None:
            errs.extend(validate_nonnegative(status[key], Path("status", key)))
    return errs


def job_warnings(job: dict) -> list[str]:
    """Upstream C{jobStrategy.WarningsOnCreate}: a name that is not a DNS label, then
    C{WarningsForJobSpec} (the pod template's warnings under C{spec.template})."""
    return workload_name_warning(job) + job_spec_warnings(Path("spec"), job.get("spec") or {})


def job_field_attrs(job: dict) -> dict[str, str]:
    """Upstream C{JobToSelectableFields}: C{status.successful}."""
    return {"status.successful": str((job.get("status") or {}).get("succeeded") or 0)}


#: Upstream C{pkg/registry/batch/job/storage.deleteOptionWarnings}.
JOB_DELETE_WARNING = ("child pods are preserved by default when jobs are deleted; set "
                      "propagationPolicy=Background to remove them or set "
                      "propagationPolicy=Orphan to suppress this warning")


def job_delete_warnings(options: dict) -> list[str]:
    """
    The C{Warning} of a Job delete that names no propagation (upstream Job C{REST.Delete}:
    batch/v1 orphans the pods by default); sent before the delete runs, so a 404 carries it too.

    @param options: the request's C{DeleteOptions} (C{propagationPolicy}, C{orphanDependents}).
    """
    if options.get("propagationPolicy") is None and options.get("orphanDependents") is None:
        return [JOB_DELETE_WARNING]
    return []
