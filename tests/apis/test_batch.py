"""
Tests for L{kubetwist.apis.batch}: Job and CronJob defaulting, the generated selector,
validation messages and paths as kube-apiserver v1.32 writes them, the cron parser's errors,
printer rows, and the HTTP round trip through the installed batch/v1 group.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.batch import cronjobs, jobs
from kubetwist.apis.batch.cron import parse_standard_error
from kubetwist.apis.batch.printers import CRONJOB_TABLE, JOB_TABLE
from kubetwist.runtime import protobuf as pb
from tests.support import KubeTestCase

_POD = {"containers": [{"name": "pi", "image": "perl"}], "restartPolicy": "Never"}


def _job(name="pi", **spec) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"template": {"spec": dict(_POD)}, **spec}}


def _messages(errs) -> list[str]:
    return [e.error() for e in errs]


class JobDefaultsTests(SynchronousTestCase):
    def test_defaults(self):
        """An empty spec gets upstream's SetDefaults_Job values."""
        job = _job()
        jobs.default_job(job)
        spec = job["spec"]
        self.assertEqual(
            {k: spec[k] for k in ("completions", "parallelism", "backoffLimit", "completionMode",
                                  "suspend", "podReplacementPolicy", "manualSelector")},
            {"completions": 1, "parallelism": 1, "backoffLimit": 6,
             "completionMode": "NonIndexed", "suspend": False,
             "podReplacementPolicy": "TerminatingOrFailed", "manualSelector": False})

    def test_parallelism_only(self):
        """With parallelism set, completions stays unset."""
        job = _job(parallelism=3)
        jobs.default_job(job)
        self.assertNotIn("completions", job["spec"])

    def test_pod_failure_policy_defaults(self):
        """A pod failure policy makes podReplacementPolicy Failed and patterns status True."""
        job = _job(podFailurePolicy={"rules": [{"action": "Ignore",
                                                "onPodConditions": [{
                                                    "type": "DisruptionTarget"}]}]})
        jobs.default_job(job)
        self.assertEqual(job["spec"]["podReplacementPolicy"], "Failed")
        self.assertEqual(job["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"],
                         [{"type": "DisruptionTarget", "status": "True"}])

    def test_backoff_limit_per_index(self):
        """backoffLimitPerIndex makes backoffLimit default to MaxInt32."""
        job = _job(backoffLimitPerIndex=1, completionMode="Indexed", completions=2)
        jobs.default_job(job)
        self.assertEqual(job["spec"]["backoffLimit"], 2**31 - 1)

    def test_labels_from_template(self):
        """The job gets the template's labels when it has none."""
        job = _job()
        job["spec"]["template"]["metadata"] = {"labels": {"a": "b"}}
        jobs.default_job(job)
        self.assertEqual(job["metadata"]["labels"], {"a": "b"})


class JobStrategyTests(SynchronousTestCase):
    def _created(self, job):
        jobs.default_job(job)
        job["metadata"]["uid"] = "u-1"
        jobs.prepare_job_for_create(job)
        return job

    def test_generated_selector(self):
        """PrepareForCreate adds the four template labels and the controller-uid selector."""
        job = self._created(_job())
        self.assertEqual(job["spec"]["template"]["metadata"]["labels"], {
            "job-name": "pi", "batch.kubernetes.io/job-name": "pi",
            "controller-uid": "u-1", "batch.kubernetes.io/controller-uid": "u-1"})
        self.assertEqual(job["spec"]["selector"],
                         {"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
        self.assertEqual((job["status"], job["metadata"]["generation"]), ({}, 1))
        self.assertEqual(jobs.validate_job(job), [])

    def test_restart_policy(self):
        """restartPolicy Always (the pod default) is refused with upstream's message
        (kube-apiserver v1.32, C{tests/vectors/batch.jsonl} job-create-bad-restart)."""
        job = _job()
        del job["spec"]["template"]["spec"]["restartPolicy"]
        job = self._created(job)
        self.assertEqual(_messages(jobs.validate_job(job)), [
            'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'])
        job["spec"]["template"]["spec"]["restartPolicy"] = "Sometimes"
        self.assertIn('spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported '
                      'values: "OnFailure", "Never"', _messages(jobs.validate_job(job)))

    def test_wrong_template_label(self):
        """A user-set controller-uid label that differs is refused."""
        job = _job()
        job["spec"]["template"]["metadata"] = {"labels": {"controller-uid": "other"}}
        job = self._created(job)
        self.assertIn("spec.template.metadata.labels[controller-uid]: Invalid value: "
                      'map[string]string{"batch.kubernetes.io/controller-uid":"u-1", '
                      '"batch.kubernetes.io/job-name":"pi", "controller-uid":"other", '
                      '"job-name":"pi"}: must be \'u-1\'', _messages(jobs.validate_job(job)))

    def test_manual_selector_must_match(self):
        """With manualSelector the selector must match the template labels."""
        job = _job(manualSelector=True, selector={"matchLabels": {"a": "b"}})
        job = self._created(job)
        self.assertEqual(_messages(jobs.validate_job(job)), [
            "spec.template.metadata.labels: Invalid value: map[string]string(nil): "
            "`selector` does not match template `labels`"])

    def test_indexed_requires_completions(self):
        """Indexed completion mode needs completions."""
        job = self._created(_job(completionMode="Indexed", parallelism=2))
        self.assertEqual(_messages(jobs.validate_job(job)), [
            "spec.completions: Required value: when completion mode is Indexed"])

    def test_negative_counts(self):
        """Negative counters are refused on their paths."""
        job = self._created(_job(backoffLimit=-1))
        self.assertEqual(_messages(jobs.validate_job(job)), [
            "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"])

    def test_update_immutable_completions(self):
        """completions cannot change; other fields bump the generation."""
        old = self._created(_job())
        old["metadata"]["resourceVersion"] = "5"
        new = {**old, "metadata": dict(old["metadata"]), "spec": {**old["spec"], "completions": 3}}
        jobs.prepare_job_for_update(new, old)
        self.assertEqual(new["metadata"]["generation"], 2)
        self.assertEqual(_messages(jobs.validate_job_update(new, old)), [
            "spec.completions: Invalid value: 3: field is immutable"])

    def test_created_job_takes_template_labels(self):
        """A Job created without labels carries its template's, generated ones included, as
        upstream's answer (decoded from storage with defaults) does."""
        job = self._created(_job())
        self.assertEqual(job["metadata"]["labels"], job["spec"]["template"]["metadata"]["labels"])
        self.assertIn("controller-uid", job["metadata"]["labels"])

    def _suspended_update(self, old_spec: dict, new_spec: dict) -> list[str]:
        old = self._created(_job(suspend=True))
        old["metadata"]["resourceVersion"] = "5"
        old["spec"]["template"]["spec"].update(old_spec)
        new = {**old, "spec": {**old["spec"], "template": {
            "metadata": old["spec"]["template"]["metadata"],
            "spec": {**old["spec"]["template"]["spec"], **new_spec}}}}
        return _messages(jobs.validate_job_update(new, old))

    def test_update_suspended_scheduling_directives(self):
        """A suspended Job that never started may change its template's node selector,
        tolerations and node affinity, and nothing else of the template."""
        node_affinity = {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "a", "operator": "Exists"}]}]}}
        self.assertEqual(self._suspended_update(
            {"affinity": {"nodeAffinity": node_affinity}},
            {"nodeSelector": {"a": "b"}, "affinity": None,
             "tolerations": [{"key": "k", "operator": "Exists"}]}), [])
        errs = self._suspended_update(
            {"affinity": {"nodeAffinity": node_affinity,
                          "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                              {"topologyKey": "zone", "labelSelector": {}}]}}},
            {"affinity": None})
        self.assertEqual(len(errs), 1)
        self.assertTrue(errs[0].startswith(
            "spec.template: Invalid value: core.PodTemplateSpec{ObjectMeta:v1.ObjectMeta{"))
        self.assertIn(", Affinity:(*core.Affinity)(nil), ", errs[0])
        self.assertTrue(errs[0].endswith("}}: field is immutable"))

    def test_update_immutable_template_and_policy(self):
        """The template is reported before the pod failure policy, printed with %#v of the
        internal types (kube-apiserver v1.32, C{tests/vectors/govalues.jsonl})."""
        policy = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In",
                                                                  "values": [1]}}]}
        old = self._created(_job(podFailurePolicy=policy))
        old["metadata"]["resourceVersion"] = "5"
        new = {**old, "spec": {**old["spec"], "podFailurePolicy": {"rules": [
            {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [1]}}]},
            "template": {**old["spec"]["template"], "spec": {
                **old["spec"]["template"]["spec"], "activeDeadlineSeconds": 5}}}}
        errs = _messages(jobs.validate_job_update(new, old))
        self.assertEqual([e.split(":", 1)[0] for e in errs],
                         ["spec.template", "spec.podFailurePolicy"])
        self.assertEqual(errs[1], (
            'spec.podFailurePolicy: Invalid value: batch.PodFailurePolicy{Rules:'
            '[]batch.PodFailurePolicyRule{batch.PodFailurePolicyRule{Action:"Ignore", '
            'OnExitCodes:(*batch.PodFailurePolicyOnExitCodesRequirement)(0xc000010000), '
            'OnPodConditions:[]batch.PodFailurePolicyOnPodConditionsPattern(nil)}}}: '
            'field is immutable'))

    def test_field_attrs(self):
        """status.successful is selectable."""
        self.assertEqual(jobs.job_field_attrs({"status": {"succeeded": 2}}),
                         {"status.successful": "2"})


class CronTests(SynchronousTestCase):
    def test_parser_errors(self):
        """robfig/cron's error texts."""
        self.assertIsNone(parse_standard_error("*/5 0-6 * jan-MAR mon,fri"))
        self.assertIsNone(parse_standard_error("@hourly"))
        self.assertEqual(parse_standard_error("* * *"),
                         "expected exactly 5 fields, found 3: [* * *]")
        self.assertEqual(parse_standard_error("60 * * * *"),
                         "end of range (60) above maximum (59): 60")
        self.assertEqual(parse_standard_error("x * * * *"),
                         'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax')
        self.assertEqual(parse_standard_error("@often"), "unrecognized descriptor: @often")
        self.assertEqual(parse_standard_error(""), "empty spec string")


def _cron(**spec) -> dict:
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "c", "namespace": "default"},
            "spec": {"schedule": "*/1 * * * *",
                     "jobTemplate": {"spec": {"template": {"spec": dict(_POD)}}}, **spec}}


class CronJobTests(SynchronousTestCase):
    def test_defaults(self):
        """SetDefaults_CronJob; the job template gets only its pod template's defaults."""
        cj = _cron()
        cronjobs.default_cron_job(cj)
        spec = cj["spec"]
        self.assertEqual((spec["concurrencyPolicy"], spec["suspend"],
                          spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]),
                         ("Allow", False, 3, 1))
        self.assertEqual(spec["jobTemplate"]["metadata"], {"creationTimestamp": None})
        self.assertNotIn("completions", spec["jobTemplate"]["spec"])
        self.assertEqual(cronjobs.validate_cron_job(cj), [])

    def test_validation(self):
        """Schedule, time zone, TZ in schedule, selector in the template, long names."""
        cj = _cron(schedule="TZ=UTC 0 * * * *", timeZone="Nowhere/Land")
        cj["metadata"]["name"] = "x" * 53
        cj["spec"]["jobTemplate"]["spec"]["selector"] = {"matchLabels": {"a": "b"}}
        cronjobs.default_cron_job(cj)
        self.assertEqual(_messages(cronjobs.validate_cron_job(cj)), [
            "metadata.name: Invalid value: \"" + "x" * 53
            + "\": must be no more than 52 characters",
            'spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in '
            "schedule, use timeZone field instead",
            'spec.jobTemplate.spec.selector: Invalid value: &v1.LabelSelector{MatchLabels:'
            'map[string]string{"a":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: '
            "`selector` will be auto-generated",
            'spec.timeZone: Invalid value: "Nowhere/Land": unknown time zone Nowhere/Land'])

    def test_concurrency_policy(self):
        """An unknown concurrencyPolicy lists the three supported values."""
        cj = _cron(concurrencyPolicy="Sometimes")
        cronjobs.default_cron_job(cj)
        self.assertEqual(_messages(cronjobs.validate_cron_job(cj)), [
            'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: '
            '"Allow", "Forbid", "Replace"'])


class PrinterTests(SynchronousTestCase):
    def test_job_row(self):
        """printJob: status, completions, duration from start to completion."""
        job = _job(completions=3)
        job["status"] = {"succeeded": 3, "startTime": "2024-01-01T00:00:00Z",
                         "completionTime": "2024-01-01T00:01:05Z",
                         "conditions": [{"type": "Complete", "status": "True"}]}
        row = JOB_TABLE.row(job)
        self.assertEqual(row[:4], ["pi", "Complete", "3/3", "65s"])
        self.assertEqual(row[5:], ["pi", "perl", "<none>"])

    def test_cron_job_row(self):
        """printCronJob: timezone <none>, suspend, active count, last schedule <none>."""
        cj = _cron(suspend=True)
        row = CRONJOB_TABLE.row(cj)
        self.assertEqual(row[:6], ["c", "*/1 * * * *", "<none>", "True", 0, "<none>"])
        self.assertEqual([c["name"] for c in CRONJOB_TABLE.columns], [
            "Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age",
            "Containers", "Images", "Selector"])


class ProtobufTests(SynchronousTestCase):
    def test_job_round_trip(self):
        """A Job encodes to protobuf and decodes back to the same JSON form."""
        job = _job(completions=2, parallelism=1, completionMode="Indexed",
                   podFailurePolicy={"rules": [{"action": "Ignore", "onExitCodes": {
                       "operator": "In", "values": [1, 2]}}]})
        decoded = pb.decode(pb.encode(job))
        self.assertEqual(decoded["spec"]["podFailurePolicy"], job["spec"]["podFailurePolicy"])
        self.assertEqual(decoded["spec"]["completionMode"], "Indexed")
        self.assertEqual(decoded["spec"]["template"]["spec"]["containers"][0]["image"], "perl")


class BatchHTTPTests(KubeTestCase):
    def test_create_job(self):
        """POST a Job: 201 with the generated selector keyed by the stored uid."""
        code, body, _ = self.request("POST", "/apis/batch/v1/namespaces/default/jobs", _job())
        self.assertEqual(code, 201)
        uid = body["metadata"]["uid"]
        self.assertEqual(body["spec"]["selector"],
                         {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
        self.assertEqual(body["spec"]["template"]["metadata"]["labels"]["controller-uid"], uid)

    def test_invalid_job(self):
        """A Job without restartPolicy gets kube-apiserver's 422."""
        job = _job("bad")
        del job["spec"]["template"]["spec"]["restartPolicy"]
        code, body, _ = self.request("POST", "/apis/batch/v1/namespaces/default/jobs", job)
        self.assertEqual((code, body["message"]), (422, (
            'Job.batch "bad" is invalid: spec.template.spec.restartPolicy: Required value: '
            'valid values: "OnFailure", "Never"')))

    def test_delete_warns_of_orphaned_pods(self):
        """A Job delete naming no propagation policy warns that the pods stay, even when the
        Job is missing; with a policy it does not (kube-apiserver v1.32,
        C{tests/vectors/batch.jsonl} job-delete-default)."""
        path = "/apis/batch/v1/namespaces/default/jobs/"
        code, _, resp = self.request("DELETE", path + "nope")
        self.assertEqual(code, 404)
        self.assertEqual(resp.headers.getRawHeaders("Warning"), [
            '299 - "child pods are preserved by default when jobs are deleted; set '
            'propagationPolicy=Background to remove them or set propagationPolicy=Orphan to '
            'suppress this warning"'])
        code, _, resp = self.request("DELETE", path + "nope?propagationPolicy=Background")
        self.assertEqual((code, resp.headers.getRawHeaders("Warning")), (404, None))

    def test_cron_job_short_name_and_status(self):
        """Discovery lists cronjobs with short name cj and a status subresource."""
        code, body, _ = self.request("GET", "/apis/batch/v1")
        self.assertEqual(code, 200)
        names = {r["name"]: r for r in body["resources"]}
        self.assertEqual(names["cronjobs"]["shortNames"], ["cj"])
        self.assertIn("jobs/status", names)
        self.assertIn("cronjobs/status", names)
