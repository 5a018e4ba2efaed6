# -*- test-case-name: tests.admission.test_podsecurity -*-
"""
The C{PodSecurity} admission plugin: upstream
C{k8s.io/kubernetes/plugin/pkg/admission/security/podsecurity} over
C{k8s.io/pod-security-admission/admission} (C{admission.go}, C{response.go}) of v1.32.

A validating plugin for creates and updates of:

 - pods: the namespace's C{enforce} level refuses (403 C{pods "x" is forbidden: violates
   PodSecurity "restricted:latest": <reason> (<detail>), ...}), C{audit} adds the audit
   annotation C{pod-security.kubernetes.io/audit-violations}, C{warn} a C{Warning}
   (C{would violate PodSecurity "restricted:latest": ...}); an update that changes no image and
   adds no container is not evaluated; C{status}, C{binding}, C{eviction} and the connect
   subresources are not evaluated, C{ephemeralcontainers} (and every other) is;
 - the pod templates of ReplicationControllers, PodTemplates, ReplicaSets, Deployments,
   StatefulSets, DaemonSets, Jobs and CronJobs: C{audit} and C{warn} only (never refused);
 - namespaces: the Pod Security labels must parse (422 C{Namespace "x" is invalid:
   metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: ...}); an update that
   makes C{enforce} stricter warns about the existing pods that violate it.

Exemptions (usernames, namespaces, runtimeClasses) and the defaults for unlabelled namespaces
come from the L{PodSecurityConfiguration
<kubetwist.admission.plugins.podsecurity.config.PodSecurityConfiguration>}.  A dry run is
evaluated exactly like a real request, as upstream's plugin does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Optional

from zope.interface import implementer

from kubetwist.admission.interfaces import CREATE, UPDATE, IValidationInterface
from kubetwist.admission.plugins.podsecurity import api
from kubetwist.admission.plugins.podsecurity.checks import (
    DEFAULT_EVALUATOR,
    AggregateCheckResult,
    Evaluator,
    aggregate,
)
from kubetwist.admission.plugins.podsecurity.config import (
    PodSecurityConfiguration,
    load_configuration,
)
from kubetwist.admission.plugins.podsecurity.metrics import (
    DECISION_ALLOW,
    DECISION_DENY,
    MODE_AUDIT,
    MODE_ENFORCE,
    MODE_WARN,
    PodSecurityMetrics,
)
from kubetwist.runtime import errors
from kubetwist.runtime import field as fielderr

__all__ = ["PodSecurity", "POD_SPEC_RESOURCES", "extract_pod_spec"]

#: Upstream C{defaultNamespaceMaxPodsToCheck}.
NAMESPACE_MAX_PODS_TO_CHECK = 3000
#: Upstream C{defaultNamespacePodCheckTimeout}, in seconds.
NAMESPACE_POD_CHECK_TIMEOUT = 1.0

#: Upstream C{defaultPodSpecResources}: C{(group, resource)} of the kinds with a pod spec.
POD_SPEC_RESOURCES = frozenset({
    ("", "pods"), ("", "replicationcontrollers"), ("", "podtemplates"),
    ("apps", "replicasets"), ("apps", "deployments"), ("apps", "statefulsets"),
    ("apps", "daemonsets"), ("batch", "jobs"), ("batch", "cronjobs"),
})

#: Upstream C{ignoredPodSubresources}.
IGNORED_POD_SUBRESOURCES = frozenset({
    "exec", "attach", "binding", "eviction", "log", "portforward", "proxy", "status"})


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def extract_pod_spec(group: str, resource: str,
                     obj: Optional[dict]) -> tuple[Optional[dict], Optional[dict]]:
    """
    Upstream C{DefaultPodSpecExtractor.ExtractPodSpec}: the pod (template) C{metadata} and
    C{spec} of a v1 object of one of L{POD_SPEC_RESOURCES}; C{(None, None)} when the object
    has none (a ReplicationController without C{spec.template}).
    """
    obj = _dict(obj)
    if (group, resource) == ("", "pods"):
        return _dict(obj.get("metadata")), _dict(obj.get("spec"))
    if (group, resource) == ("", "podtemplates"):
        template = _dict(obj.get("template"))
    elif (group, resource) == ("", "replicationcontrollers"):
        template = _dict(obj.get("spec")).get("template")
        if not isinstance(template, dict):
            return None, None
    elif (group, resource) == ("batch", "cronjobs"):
        template = _dict(_dict(_dict(_dict(obj.get("spec")).get("jobTemplate")).get("spec"))
                         .get("template"))
    else:
        template = _dict(_dict(obj.get("spec")).get("template"))
    return _dict(template.get("metadata")), _dict(template.get("spec"))


@dataclass
class Response:
    """What upstream's C{Validate} answers (an C{AdmissionResponse}): allowed or a refusal,
    warnings and audit annotations (keys without the C{pod-security.kubernetes.io/}
    prefix)."""

    allowed: bool = True
    error: Optional[errors.StatusError] = None
    warnings: list[str] = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)


def _exempt(reason: str) -> Response:
    return Response(annotations={api.EXEMPTION_REASON_ANNOTATION_KEY: reason})


def _significant_pod_update(pod: dict, old: dict) -> bool:
    """Upstream C{isSignificantPodUpdate}: containers or init containers added or removed,
    an image changed, an ephemeral container added or its image changed."""
    spec, ospec = _dict(pod.get("spec")), _dict(old.get("spec"))
    for key in ("containers", "initContainers"):
        new, prev = spec.get(key) or [], ospec.get(key) or []
        if len(new) != len(prev):
            return True
    for key in ("containers", "initContainers"):
        for c, oc in zip(spec.get(key) or [], ospec.get(key) or [], strict=True):
            if _dict(c).get("image") != _dict(oc).get("image"):
                return True
    old_ephemeral = {_dict(c).get("name"): _dict(c) for c in ospec.get("ephemeralContainers") or []}
    for c in spec.get("ephemeralContainers") or []:
        c = _dict(c)
        oc = old_ephemeral.get(c.get("name"))
        if oc is None or oc.get("image") != c.get("image"):
            return True
    return False


def _controller_uid(pod: dict) -> Optional[str]:
    """Upstream C{metav1.GetControllerOfNoCopy}: the uid of the controlling owner."""
    for ref in _dict(pod.get("metadata")).get("ownerReferences") or []:
        if _dict(ref).get("controller") is True:
            return ref.get("uid") or ""
    return None


def _label_errors_key(errs: list[fielderr.FieldError]) -> list[tuple]:
    return [(e.type, e.field, repr(e.bad_value), e.detail) for e in errs]


@implementer(IValidationInterface)
class PodSecurity:
    """
    The plugin (see the module docstring).

    @ivar configuration: the loaded L{PodSecurityConfiguration}.
    @ivar default_policy: the policy of a namespace without labels.
    @ivar metrics: the plugin's L{PodSecurityMetrics} (a collector for C{/metrics}).
    """

    name = "PodSecurity"

    def __init__(
        self,
        configuration: Any = None,
        namespaces: Any = None,
        list_pods: Optional[Callable[[], Awaitable[list[dict]]]] = None,
        evaluator: Evaluator = DEFAULT_EVALUATOR,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """
        @param configuration: a loaded L{PodSecurityConfiguration}, or what
            L{load_configuration} takes (the AdmissionConfiguration's dict, C{None}).
        @param namespaces: the namespaces storage (C{async get(namespace, name,
            resource_version)}).
        @param list_pods: C{() -> coroutine of [pod]}: every pod (upstream's pod lister).
        @param monotonic: the clock of the existing-pods check's one-second budget.
        @raise ConfigurationError: a configuration that does not load (upstream's text).
        """
        if not isinstance(configuration, PodSecurityConfiguration):
            configuration = load_configuration(configuration)
        self.configuration = configuration
        self.default_policy: api.Policy = configuration.policy or api.PRIVILEGED_POLICY
        self.namespaces = namespaces
        self.list_pods = list_pods
        self.evaluator = evaluator
        self.monotonic = monotonic
        self.metrics = PodSecurityMetrics()

    def handles(self, operation: str) -> bool:
        """Creates and updates (upstream C{admission.NewHandler(Create, Update)})."""
        return operation in (CREATE, UPDATE)

    # -- the plugin --------------------------------------------------------------------------

    async def validate(self, a: Any) -> None:
        """
        Upstream C{Plugin.Validate}: evaluate, then add the warnings and the audit annotations
        (C{pod-security.kubernetes.io/enforce-policy}, C{.../audit-violations},
        C{.../exempt}, C{.../error}) to the request, and refuse when not allowed.

        @raise StatusError: 403 Forbidden (a pod violating the enforce level), 422 Invalid
            (namespace labels), 500 InternalError (the pod's namespace cannot be read).
        """
        gr = (a.resource.group, a.resource.resource)
        if gr != ("", "namespaces") and gr not in POD_SPEC_RESOURCES:
            return
        response = await self.evaluate(a)
        for text in response.warnings:
            a.add_warning(text)
        for key, value in response.annotations.items():
            a.add_annotation(api.AUDIT_ANNOTATION_PREFIX + key, value)
        if not response.allowed:
            raise response.error or errors.new_forbidden(
                a.resource.group, a.resource.resource, a.name, "Not allowed by PodSecurity")

    async def evaluate(self, a: Any) -> Response:
        """Upstream C{Admission.Validate}: the response for one request."""
        gr = (a.resource.group, a.resource.resource)
        if gr == ("", "namespaces"):
            return await self.validate_namespace(a)
        if gr == ("", "pods"):
            return await self.validate_pod(a)
        return await self.validate_pod_controller(a)

    # -- namespaces --------------------------------------------------------------------------

    def policy_to_evaluate(self, labels: Any) -> tuple[api.Policy, list[fielderr.FieldError]]:
        """The policy of a namespace with C{labels} (upstream C{PolicyToEvaluate})."""
        return api.policy_to_evaluate(labels if isinstance(labels, dict) else None,
                                      self.default_policy)

    async def validate_namespace(self, a: Any) -> Response:
        """Upstream C{ValidateNamespace}."""
        if a.subresource:
            return Response()
        namespace = _dict(a.object)
        meta = _dict(namespace.get("metadata"))
        name = meta.get("name") or a.name
        # upstream's create handler names a namespace's request by the namespace itself
        request_namespace = a.namespace or name
        new_policy, new_errs = self.policy_to_evaluate(meta.get("labels"))

        def invalid() -> Response:
            return Response(False, errors.new_invalid(a.kind.group, a.kind.kind, a.name or name,
                                                      new_errs))

        def exempt_warning() -> Optional[Response]:
            if self._exempt_namespace(request_namespace):
                warning = self._exempt_namespace_warning(name, new_policy, meta.get("labels"))
                return Response(warnings=[warning] if warning else [])
            return None

        if a.operation == CREATE:
            if new_errs:
                return invalid()
            return exempt_warning() or Response()
        if a.operation != UPDATE:
            return Response()
        old_policy, old_errs = self.policy_to_evaluate(
            _dict(_dict(a.old_object).get("metadata")).get("labels"))
        if new_errs and (not old_errs or
                         _label_errors_key(new_errs) != _label_errors_key(old_errs)):
            return invalid()
        if new_policy.enforce == old_policy.enforce:
            return Response()
        if new_policy.enforce.level == api.LEVEL_PRIVILEGED:
            return Response()
        if new_policy.enforce.version == old_policy.enforce.version and \
                api.compare_levels(new_policy.enforce.level, old_policy.enforce.level) < 1:
            return Response()
        exempt = exempt_warning()
        if exempt is not None:
            return exempt
        return Response(warnings=await self.evaluate_pods_in_namespace(
            name, new_policy.enforce))

    async def evaluate_pods_in_namespace(self, namespace: str,
                                         enforce: api.LevelVersion) -> list[str]:
        """
        Upstream C{EvaluatePodsInNamespace}: the warnings about the pods of C{namespace} that
        violate C{enforce}: C{existing pods in namespace "x" violate the new PodSecurity
        enforce level "restricted:latest"}, then one warning per distinct set of reasons
        (C{p: privileged}, C{p (and 2 other pods): ...}), sorted.  At most
        L{NAMESPACE_MAX_PODS_TO_CHECK} pods (one per controller first) within
        L{NAMESPACE_POD_CHECK_TIMEOUT} seconds.
        """
        deadline = self.monotonic() + NAMESPACE_POD_CHECK_TIMEOUT
        try:
            pods = [p for p in (await self.list_pods() if self.list_pods else [])
                    if _dict(p.get("metadata")).get("namespace") == namespace]
        except Exception:
            return ["failed to list pods while checking new PodSecurity enforce level"]
        prioritized = self._prioritize_pods(pods)
        total = len(prioritized)
        prioritized = prioritized[:NAMESPACE_MAX_PODS_TO_CHECK]
        checked = len(prioritized)
        order: list[str] = []
        counts: dict[str, list] = {}
        for i, pod in enumerate(prioritized):
            meta = _dict(pod.get("metadata"))
            result = aggregate(self.evaluator.evaluate_pod(enforce, meta, pod.get("spec")))
            if not result.allowed:
                warning = result.forbidden_reason()
                pod_name = meta.get("name") or ""
                seen = counts.get(warning)
                if seen is None:
                    counts[warning] = seen = [pod_name, 0]
                    order.append(warning)
                elif pod_name < seen[0]:
                    seen[0] = pod_name
                seen[1] += 1
            if self.monotonic() > deadline:
                checked = i + 1
                break
        warnings = []
        if checked < total:
            warnings.append(f"new PodSecurity enforce level only checked against the first "
                            f"{checked} of {total} existing pods")
        if order:
            warnings.append(f"existing pods in namespace \"{namespace}\" violate the new "
                            f"PodSecurity enforce level \"{enforce}\"")
        decorated = []
        for warning in order:
            pod_name, count = counts[warning]
            if count == 1:
                decorated.append(f"{pod_name}: {warning}")
            elif count == 2:
                decorated.append(f"{pod_name} (and 1 other pod): {warning}")
            else:
                decorated.append(f"{pod_name} (and {count - 1} other pods): {warning}")
        return warnings + sorted(decorated)

    def _prioritize_pods(self, pods: list[dict]) -> list[dict]:
        """Upstream C{prioritizePods}: exempt runtime classes left out, the first pod of each
        controller first, the other replicas after."""
        first, replicas = [], []
        controllers: set[str] = set()
        for pod in pods:
            if self._exempt_runtime_class(_dict(pod.get("spec")).get("runtimeClassName")):
                continue
            uid = _controller_uid(pod)
            if uid is None:
                first.append(pod)
            elif uid in controllers:
                replicas.append(pod)
            else:
                first.append(pod)
                controllers.add(uid)
        return first + replicas

    # -- pods and pod controllers ------------------------------------------------------------

    def _user_name(self, a: Any) -> str:
        return getattr(a.user, "name", "") or "" if a.user is not None else ""

    async def validate_pod(self, a: Any) -> Response:
        """Upstream C{ValidatePod}."""
        if a.subresource in IGNORED_POD_SUBRESOURCES:
            return Response()
        if self._exempt_namespace(a.namespace):
            self.metrics.record_exemption(a)
            return _exempt("namespace")
        if self._exempt_user(self._user_name(a)):
            self.metrics.record_exemption(a)
            return _exempt("user")
        try:
            namespace = await self._namespace(a.namespace)
        except Exception as e:
            self.metrics.record_error(True, a)
            message = f'failed to lookup namespace "{a.namespace}"'
            err = errors.new_internal_error(message)
            return Response(False, err, annotations={
                "error": f"{err.status['message']}: {_error_text(e)}"})
        ns_policy, ns_errs = self.policy_to_evaluate(
            _dict(namespace.get("metadata")).get("labels"))
        if not ns_errs and ns_policy.fully_privileged():
            self.metrics.record_evaluation(DECISION_ALLOW, ns_policy.enforce, MODE_ENFORCE, a)
            return Response(annotations={api.ENFORCED_POLICY_ANNOTATION_KEY: str(
                api.LevelVersion(api.LEVEL_PRIVILEGED, api.LATEST))})
        pod = _dict(a.object)
        if a.operation == UPDATE and not _significant_pod_update(pod, _dict(a.old_object)):
            return Response()
        return self.evaluate_pod(ns_policy, ns_errs, _dict(pod.get("metadata")),
                                 _dict(pod.get("spec")), a, enforce=True)

    async def validate_pod_controller(self, a: Any) -> Response:
        """Upstream C{ValidatePodController}: never refuses."""
        if a.subresource:
            return Response()
        if self._exempt_namespace(a.namespace):
            self.metrics.record_exemption(a)
            return _exempt("namespace")
        if self._exempt_user(self._user_name(a)):
            self.metrics.record_exemption(a)
            return _exempt("user")
        try:
            namespace = await self._namespace(a.namespace)
        except Exception as e:
            self.metrics.record_error(True, a)
            return Response(annotations={
                "error": f'failed to lookup namespace "{a.namespace}": {_error_text(e)}'})
        ns_policy, ns_errs = self.policy_to_evaluate(
            _dict(namespace.get("metadata")).get("labels"))
        if not ns_errs and ns_policy.warn.level == api.LEVEL_PRIVILEGED and \
                ns_policy.audit.level == api.LEVEL_PRIVILEGED:
            return Response()
        meta, spec = extract_pod_spec(a.resource.group, a.resource.resource, a.object)
        if meta is None and spec is None:
            return Response()
        return self.evaluate_pod(ns_policy, ns_errs, meta, spec, a, enforce=False)

    def evaluate_pod(self, ns_policy: api.Policy, ns_errs: list[fielderr.FieldError],
                     meta: Optional[dict], spec: Optional[dict], a: Any,
                     enforce: bool) -> Response:
        """
        Upstream C{EvaluatePod}: the enforce level (when C{enforce}), then audit, then warn
        (not when refused), each level-version evaluated once.
        """
        if self._exempt_runtime_class(_dict(spec).get("runtimeClassName")):
            self.metrics.record_exemption(a)
            return _exempt("runtimeClass")
        response = Response()
        if ns_errs:
            self.metrics.record_error(False, a)
            response.annotations["error"] = \
                f"Failed to parse policy: {fielderr.aggregate_message(ns_errs)}"
        cached: dict[api.LevelVersion, AggregateCheckResult] = {}

        def result_of(lv: api.LevelVersion) -> AggregateCheckResult:
            if lv not in cached:
                cached[lv] = aggregate(self.evaluator.evaluate_pod(lv, meta, spec))
            return cached[lv]

        if enforce:
            response.annotations[api.ENFORCED_POLICY_ANNOTATION_KEY] = str(ns_policy.enforce)
            result = result_of(ns_policy.enforce)
            if not result.allowed:
                response.allowed = False
                response.error = errors.new_forbidden(
                    a.resource.group, a.resource.resource, a.name,
                    f'violates PodSecurity "{ns_policy.enforce}": {result.forbidden_detail()}')
            self.metrics.record_evaluation(DECISION_ALLOW if result.allowed else DECISION_DENY,
                                           ns_policy.enforce, MODE_ENFORCE, a)
        audit = result_of(ns_policy.audit)
        if not audit.allowed:
            response.annotations[api.AUDIT_VIOLATIONS_ANNOTATION_KEY] = \
                f'would violate PodSecurity "{ns_policy.audit}": {audit.forbidden_detail()}'
            self.metrics.record_evaluation(DECISION_DENY, ns_policy.audit, MODE_AUDIT, a)
        if response.allowed:
            warn = result_of(ns_policy.warn)
            if not warn.allowed:
                response.warnings.append(
                    f'would violate PodSecurity "{ns_policy.warn}": {warn.forbidden_detail()}')
                self.metrics.record_evaluation(DECISION_DENY, ns_policy.warn, MODE_WARN, a)
        return response

    # -- lookups and exemptions --------------------------------------------------------------

    async def _namespace(self, name: str) -> dict:
        """The namespace from the watch cache (resourceVersion "0", upstream's lister), else
        live (upstream's client fallback for a namespace created a moment ago).

        @raise StatusError: 404 when it does not exist."""
        if self.namespaces is None:
            raise errors.new_not_found("", "namespaces", name)
        for rv in ("0", ""):
            try:
                return await self.namespaces.get("", name, rv)
            except errors.StatusError as e:
                if e.code != 404:
                    raise
        raise errors.new_not_found("", "namespaces", name)

    def _exempt_namespace(self, namespace: str) -> bool:
        return bool(namespace) and namespace in self.configuration.namespaces

    def _exempt_user(self, username: str) -> bool:
        return bool(username) and username in self.configuration.usernames

    def _exempt_runtime_class(self, runtime_class: Any) -> bool:
        return bool(runtime_class) and runtime_class in self.configuration.runtime_classes

    def _exempt_namespace_warning(self, namespace: str, policy: api.Policy,
                                  labels: Any) -> str:
        """Upstream C{exemptNamespaceWarning}: C{namespace "x" is exempt from Pod Security,
        and the policy (enforce=restricted:latest, warn=...) will be ignored}, or C{""}."""
        if policy.fully_privileged() or policy.equivalent(self.default_policy):
            return ""
        labels = labels if isinstance(labels, dict) else {}
        parts = []
        for mode, lv, level_label, version_label in (
                ("enforce", policy.enforce, api.ENFORCE_LEVEL_LABEL, api.ENFORCE_VERSION_LABEL),
                ("audit", policy.audit, api.AUDIT_LEVEL_LABEL, api.AUDIT_VERSION_LABEL),
                ("warn", policy.warn, api.WARN_LEVEL_LABEL, api.WARN_VERSION_LABEL)):
            if lv.level != api.LEVEL_PRIVILEGED and (level_label in labels or
                                                     version_label in labels):
                parts.append(f"{mode}={lv}")
        return (f'namespace "{namespace}" is exempt from Pod Security, and the policy '
                f"({', '.join(parts)}) will be ignored")


def _error_text(e: Exception) -> str:
    if isinstance(e, errors.StatusError):
        return e.status.get("message", "")
    return str(e)
