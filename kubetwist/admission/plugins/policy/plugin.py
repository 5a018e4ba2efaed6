# -*- test-case-name: tests.admission.test_policy -*-
"""
The C{ValidatingAdmissionPolicy} plugin: upstream C{validating/plugin.go} and
C{validating/dispatcher.go} (C{Dispatch}), with C{generic.CollectParams}.

Policies and bindings are followed by two informers (a list, then a watch, over the
resources' storage), started by the plugin's post-start hook or by the first request, so a
change takes effect as soon as its watch event arrives.  A policy is compiled once per
C{metadata.generation}.
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable, Optional

from zope.interface import implementer

from kubetwist.admission.interfaces import OPERATIONS, Attributes, IValidationInterface
from kubetwist.admission.plugins.policy.authz import (
    MAX_ROUNDS,
    AuthzRun,
    authorizer_value,
    request_resource_value,
)
from kubetwist.admission.plugins.policy.matching import Equivalents, Match, matches
from kubetwist.admission.plugins.policy.validator import ADMIT, PolicyValidator
from kubetwist.apimachinery.selectors import label_selector_from_dict
from kubetwist.authorization.rbac.informer import Informer
from kubetwist.runtime import errors

__all__ = ["PLUGIN_NAME", "ValidatingAdmissionPolicy"]

PLUGIN_NAME = "ValidatingAdmissionPolicy"
#: Upstream C{maxAuditAnnotationValueLength}.
MAX_AUDIT_ANNOTATION_VALUE_LENGTH = 10 * 1024
#: Upstream C{maxValidationFailures}.
MAX_VALIDATION_FAILURES = 50
VALIDATION_FAILURE_ANNOTATION = "validation.policy.admission.k8s.io/validation_failure"

_REASON_CODES = {"Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413,
                 "Invalid": 422}

#: C{(apiVersion, kind) -> store or None}: where the objects of a C{paramKind} live (a store
#: with C{spec.namespaced}, C{async get(namespace, name)}).
ParamStores = Callable[[str, str], Any]


class _ConfigError(Exception):
    """A policy or binding that cannot be used (upstream's C{addConfigError})."""


def _go_param_kind(pk: dict) -> str:
    """Upstream C{ParamKind.String()} (generated)."""
    return f"&ParamKind{{APIVersion:{pk.get('apiVersion', '')},Kind:{pk.get('kind', '')},}}"


def _go_json(value: Any) -> str:
    """Go's C{json.Marshal}: compact, UTF-8 kept, C{<}, C{>} and C{&} escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _gvk_string(pk: dict) -> str:
    """Upstream C{GroupVersionKind.String()} of a C{paramKind}: C{/v1, Kind=ConfigMap}."""
    group, _, version = (pk.get("apiVersion") or "").rpartition("/")
    return f"{group}/{version}, Kind={pk.get('kind', '')}"


def _namespace_object(ns: Optional[dict]) -> Optional[dict]:
    """Upstream C{CreateNamespaceObject}: the namespace with part of its metadata."""
    if ns is None:
        return None
    meta = ns.get("metadata") or {}
    keep = ("name", "generateName", "namespace", "uid", "resourceVersion", "generation",
            "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
            "annotations", "finalizers")
    out: dict = {"metadata": {k: meta[k] for k in keep if k in meta}}
    if "creationTimestamp" not in out["metadata"]:
        out["metadata"]["creationTimestamp"] = None
    out["spec"] = ns.get("spec") or {}
    out["status"] = ns.get("status") or {}
    return out


def admission_request(a: Attributes, match: Match) -> dict:
    """Upstream C{CreateAdmissionRequest}: the C{request} variable."""
    req: dict = {
        "uid": "",
        "kind": {"group": match.kind.group, "version": match.kind.version,
                 "kind": match.kind.kind},
        "resource": {"group": match.resource.group, "version": match.resource.version,
                     "resource": match.resource.resource},
        "requestKind": {"group": a.kind.group, "version": a.kind.version, "kind": a.kind.kind},
        "requestResource": {"group": a.resource.group, "version": a.resource.version,
                            "resource": a.resource.resource},
    }
    if a.subresource:
        req["subResource"] = req["requestSubResource"] = a.subresource
    if a.name:
        req["name"] = a.name
    if a.namespace:
        req["namespace"] = a.namespace
    req["operation"] = a.operation
    user = a.user
    req["userInfo"] = user.to_user_info() if user is not None and \
        hasattr(user, "to_user_info") else {}
    req["dryRun"] = bool(a.dry_run)
    req["options"] = a.options
    return req


class _Hook:
    """One policy with its bindings (upstream C{PolicyHook})."""

    def __init__(self, policy: dict, validator: PolicyValidator, bindings: list[dict]) -> None:
        self.policy = policy
        self.validator = validator
        self.bindings = bindings


@implementer(IValidationInterface)
class ValidatingAdmissionPolicy:
    """
    @param policies: the C{validatingadmissionpolicies} store (C{storage}, C{prefix}), or
        C{None} when the group is not served (the plugin then admits everything).
    @param bindings: the C{validatingadmissionpolicybindings} store, or C{None}.
    @param get_namespace: C{async name -> Namespace or None}.
    @param param_stores: see L{ParamStores}; C{None}: only built-in kinds of C{stores}.
    @param list_items: C{async store -> [object]} (the params selected by a label selector).
    @param clock: C{IReactorTime} (informer relists).
    @param equivalents: see L{Equivalents <kubetwist.admission.plugins.policy.matching>}.
    @param authorizer: C{() -> IAuthorizer or None}, read at request time (the CEL
        C{authorizer} library).
    """

    name = PLUGIN_NAME

    def __init__(self, policies: Any, bindings: Any,
                 get_namespace: Callable[[str], Awaitable[Optional[dict]]],
                 param_stores: Optional[ParamStores], list_items: Any, clock: Any,
                 equivalents: Optional[Equivalents] = None,
                 authorizer: Optional[Callable[[], Any]] = None) -> None:
        self.authorizer = authorizer
        self.get_namespace = get_namespace
        self.param_stores = param_stores
        self.list_items = list_items
        self.equivalents = equivalents
        self._dirty = True
        self._hooks: list[_Hook] = []
        self._validators: dict[str, tuple[Any, PolicyValidator]] = {}
        self.policies = self.bindings = None
        if policies is not None and bindings is not None:
            self.policies = Informer(policies.storage, clock, policies.prefix(""),
                                     self._changed)
            self.bindings = Informer(bindings.storage, clock, bindings.prefix(""),
                                     self._changed)

    # --- following the configuration ------------------------------------------------------------
    def start(self) -> Any:
        """Start both informers (the post-start hook); a Deferred of their first lists."""
        from twisted.internet.defer import gatherResults, succeed

        if self.policies is None:
            return succeed(None)
        self.policies.start()
        self.bindings.start()
        return gatherResults([self.policies.wait_synced(), self.bindings.wait_synced()])

    def stop(self) -> None:
        """Stop following policies and bindings."""
        if self.policies is None:
            return
        self.policies.stop()
        self.bindings.stop()

    def _changed(self, _key: Any) -> None:
        self._dirty = True

    def hooks(self) -> list[_Hook]:
        """The policies that have bindings, in name order, each with its bindings."""
        if not self._dirty:
            return self._hooks
        self._dirty = False
        by_policy: dict[str, list[dict]] = {}
        for binding in sorted(self.bindings.items.values(),
                              key=lambda b: b["metadata"].get("name", "")):
            name = (binding.get("spec") or {}).get("policyName") or ""
            by_policy.setdefault(name, []).append(binding)
        hooks = []
        validators = {}
        for policy in sorted(self.policies.items.values(),
                             key=lambda p: p["metadata"].get("name", "")):
            name = policy["metadata"].get("name", "")
            if name not in by_policy:
                continue
            version = (policy["metadata"].get("uid"), policy["metadata"].get("generation"))
            cached = self._validators.get(name)
            if cached is None or cached[0] != version:
                cached = (version, PolicyValidator(policy.get("spec") or {}))
            validators[name] = cached
            hooks.append(_Hook(policy, cached[1], by_policy[name]))
        self._validators = validators
        self._hooks = hooks
        return hooks

    # --- admission ------------------------------------------------------------------------------
    def handles(self, operation: str) -> bool:
        """All four operations (upstream C{NewHandler(Connect, Create, Delete, Update)})."""
        return operation in OPERATIONS

    async def validate(self, a: Attributes) -> None:
        """
        Upstream C{dispatcher.Dispatch}.

        @raise StatusError: the first denial: upstream's C{admission.NewForbidden} message
            C{<resource> "<name>" is forbidden: ValidatingAdmissionPolicy 'p' with binding
            'b' denied request: <message>} with the validation's reason (C{Invalid}, 422,
            unless it names another) and the message as a cause.  Configuration errors
            (a param kind not served, no param with C{parameterNotFoundAction: Deny}, a
            namespace that cannot be read) refuse in the same form under C{failurePolicy:
            Fail} (C{failed to configure binding: ...}).
        """
        if self.policies is None:
            return
        if not (self.policies.synced and self.bindings.synced):
            await self.start()  # the first lists (a request before the post-start hook ran)
        hooks = self.hooks()
        if not hooks:
            return
        denied: list[tuple[dict, Optional[dict], str, str]] = []
        failures: list[dict] = []

        def config_error(err: str, policy: dict, binding: Optional[dict]) -> None:
            fp = (policy.get("spec") or {}).get("failurePolicy") or "Fail"
            if fp == "Ignore":
                return
            if fp == "Fail":
                what = "binding" if binding is not None else "policy"
                denied.append((policy, binding, f"failed to configure {what}: {err}", ""))
            else:
                denied.append((policy, binding, f"unrecognized failure policy: '{fp}'", ""))

        namespace_cache: dict[str, Optional[dict]] = {}

        async def namespace(name: str) -> Optional[dict]:
            if name not in namespace_cache:
                namespace_cache[name] = await self.get_namespace(name)
            return namespace_cache[name]

        for hook in hooks:
            policy = hook.policy
            spec = policy.get("spec") or {}
            try:
                match = await matches(spec.get("matchConstraints"), a, namespace,
                                      self.equivalents)
            except errors.StatusError as e:
                config_error(e.message, policy, None)
                continue
            if match is None:
                continue
            kind = spec.get("paramKind")
            if kind is not None and self._param_store(kind) is None:
                config_error(f"failed to find resource referenced by paramKind: "
                             f"'{_gvk_string(kind)}'", policy, None)
                continue
            collector: dict[str, list[str]] = {}
            for binding in hook.bindings:
                bspec = binding.get("spec") or {}
                try:
                    if await matches(bspec.get("matchResources"), a, namespace,
                                     self.equivalents, is_binding=True) is None:
                        continue
                except errors.StatusError as e:
                    config_error(e.message, policy, binding)
                    continue
                try:
                    params = await self._collect_params(spec.get("paramKind"),
                                                        bspec.get("paramRef"), a.namespace)
                except _ConfigError as e:
                    config_error(str(e), policy, binding)
                    continue
                ns_name = a.namespace
                if (a.kind.group, a.kind.version, a.kind.kind) == ("", "v1", "Namespace"):
                    ns_name = ""
                ns_object = _namespace_object(await namespace(ns_name)) if ns_name else None
                data = self._data(a, match, ns_object)
                for param in params:
                    result = await self._validate(hook.validator, dict(data, params=param))
                    self._record(result, policy, binding, a, denied, failures, collector)
            for key, values in collector.items():
                a.add_annotation(f"{policy['metadata'].get('name', '')}/{key}",
                                 values[0] if len(values) == 1 else ", ".join(values))
        if failures:
            a.add_annotation(VALIDATION_FAILURE_ANNOTATION,
                             _go_json(failures[:MAX_VALIDATION_FAILURES]))
        if denied:
            raise self._denial(a, *denied[0])

    async def _validate(self, validator: PolicyValidator, data: dict) -> Any:
        """Evaluate, asking the authorizer for the checks the expressions make (see
        L{AuthzRun})."""
        run = AuthzRun(self.authorizer() if self.authorizer is not None else None)
        result = None
        for _ in range(MAX_ROUNDS):
            with run.active():
                result = validator.validate(data)
            if not await run.resolve():
                break
        return result

    @staticmethod
    def _data(a: Attributes, match: Match, ns_object: Optional[dict]) -> dict:
        obj, old = a.object, a.old_object
        if a.operation == "DELETE":
            obj, old = None, a.old_object if a.old_object is not None else a.object
        return {"object": obj, "oldObject": old, "request": admission_request(a, match),
                "namespaceObject": ns_object, "authorizer": authorizer_value(a.user),
                "authorizer.requestResource": request_resource_value(
                    a.user, match.resource.group, match.resource.resource, a.subresource,
                    a.namespace, a.name)}

    @staticmethod
    def _record(result: Any, policy: dict, binding: dict, a: Attributes, denied: list,
                failures: list, collector: dict) -> None:
        pname = policy["metadata"].get("name", "")
        bname = binding["metadata"].get("name", "")
        actions = (binding.get("spec") or {}).get("validationActions") or []
        for i, decision in enumerate(result.decisions):
            if decision.action == ADMIT:
                continue
            for action in actions:
                if action == "Deny":
                    denied.append((policy, binding, decision.message, decision.reason))
                elif action == "Audit":
                    failures.append({"message": decision.message, "policy": pname,
                                     "binding": bname, "expressionIndex": i,
                                     "validationActions": actions})
                elif action == "Warn":
                    a.add_warning(f"Validation failed for ValidatingAdmissionPolicy '{pname}' "
                                  f"with binding '{bname}': {decision.message}")
        for ann in result.audit_annotations:
            if ann.action == "publish":
                values = collector.setdefault(ann.key, [])
                value = ann.value[:MAX_AUDIT_ANNOTATION_VALUE_LENGTH]
                if value not in values:
                    values.append(value)
            elif ann.action == "error":
                denied.append((policy, binding, ann.error, ""))

    @staticmethod
    def _denial(a: Attributes, policy: dict, binding: Optional[dict], message: str,
                reason: str) -> errors.StatusError:
        pname = policy["metadata"].get("name", "")
        if binding is not None:
            text = (f"ValidatingAdmissionPolicy '{pname}' with binding "
                    f"'{binding['metadata'].get('name', '')}' denied request: {message}")
        else:
            text = f"ValidatingAdmissionPolicy '{pname}' denied request: {message}"
        name = a.name
        if not name:
            meta = (a.object or {}).get("metadata") or {} if isinstance(a.object, dict) else {}
            name = meta.get("name") or meta.get("generateName") or "Unknown"
        err = errors.new_forbidden(a.resource.group, a.resource.resource, name, text)
        reason = reason or "Invalid"
        err.status["reason"] = reason
        err.status["code"] = _REASON_CODES.get(reason, 422)
        err.status.setdefault("details", {}).setdefault("causes", []).append({"message": text})
        return err

    # --- params ---------------------------------------------------------------------------------
    def _param_store(self, kind: dict) -> Any:
        if self.param_stores is None:
            return None
        return self.param_stores(kind.get("apiVersion", ""), kind.get("kind", ""))

    async def _collect_params(self, kind: Optional[dict], ref: Optional[dict],
                              namespace: str) -> list[Optional[dict]]:
        """
        Upstream C{CollectParams}: the param objects a binding selects (C{[None]} when the
        policy or binding has none).

        @raise _ConfigError: upstream's texts (C{no params found for policy binding with
            `Deny` parameterNotFoundAction}, ...).
        """
        if kind is None or ref is None:
            return [None]
        store = self._param_store(kind)
        if store is None:
            raise _ConfigError(f"paramKind kind `{_go_param_kind(kind)}` not known")
        namespaced = bool(getattr(store.spec, "namespaced", False))
        params_ns = ""
        if namespaced:
            params_ns = ref.get("namespace") or namespace
            if not params_ns:
                raise _ConfigError("cannot use namespaced paramRef in policy binding that "
                                   "matches cluster-scoped resources")
        elif ref.get("namespace"):
            raise _ConfigError("paramRef.namespace must not be provided for a cluster-scoped "
                               "`paramKind`")
        params: list[Optional[dict]]
        if ref.get("name"):
            if ref.get("selector") is not None:
                raise _ConfigError("paramRef.name and paramRef.selector are mutually exclusive")
            try:
                params = [await store.get(params_ns, ref["name"])]
            except errors.StatusError as e:
                if e.code != 404:
                    raise _ConfigError(e.message) from None
                params = []
        elif ref.get("selector") is not None:
            try:
                selector = label_selector_from_dict(ref["selector"])
            except errors.StatusError as e:
                raise _ConfigError(e.message) from None
            items = await self.list_items(store) if self.list_items is not None else []
            params = sorted(
                (o for o in items
                 if (not namespaced or (o.get("metadata") or {}).get("namespace") == params_ns)
                 and selector.matches((o.get("metadata") or {}).get("labels") or {})),
                key=lambda o: ((o.get("metadata") or {}).get("namespace", ""),
                               (o.get("metadata") or {}).get("name", "")))
        else:
            raise _ConfigError("one of name or selector must be provided")
        if not params and ref.get("parameterNotFoundAction") == "Deny":
            raise _ConfigError("no params found for policy binding with `Deny` "
                               "parameterNotFoundAction")
        return params



def new_plugin(ctx: Any) -> ValidatingAdmissionPolicy:
    """
    The plugin built from a L{PluginContext <kubetwist.admission.registry.PluginContext>}:
    its post-start hook C{validating-admission-policy} starts following policies and
    bindings; params are read through C{ctx.find_store} (built-in kinds of C{ctx.stores}
    when absent).
    """
    group = "admissionregistration.k8s.io"
    namespaces = ctx.stores.get(("", "namespaces"))

    async def get_namespace(name: str) -> Optional[dict]:
        if namespaces is None:
            return None
        try:
            return await namespaces.get("", name)
        except errors.StatusError as e:
            if e.code == 404:
                return None
            raise

    def builtin_store(api_version: str, kind: str) -> Any:
        grp = api_version.rpartition("/")[0]
        for store in ctx.stores.values():
            spec = getattr(store, "spec", None)
            if spec is not None and spec.group == grp and spec.kind == kind:
                return store
        return None

    def param_stores(api_version: str, kind: str) -> Any:
        store = builtin_store(api_version, kind)
        find = getattr(ctx, "find_store", None)  # set by the composition root after us
        if store is None and find is not None:
            store = find(api_version, kind)
        return store

    plugin = ValidatingAdmissionPolicy(
        ctx.stores.get((group, "validatingadmissionpolicies")),
        ctx.stores.get((group, "validatingadmissionpolicybindings")),
        get_namespace, param_stores, ctx.list_items, ctx.clock,
        equivalents=lambda group, resource: (
            ctx.equivalents(group, resource) if ctx.equivalents is not None else []),
        authorizer=lambda: ctx.authorizer)
    if ctx.add_post_start_hook is not None:
        ctx.add_post_start_hook("validating-admission-policy", plugin.start)
    return plugin
