# -*- test-case-name: tests.apis.test_admissionregistration -*-
"""
Validation of admissionregistration.k8s.io/v1 objects: upstream
C{pkg/apis/admissionregistration/validation/validation.go} (webhook configurations,
ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding), C{ValidateWebhookURL} and
C{ValidateWebhookService} of C{k8s.io/apiserver/pkg/util/webhook/validation.go}, and the
compile step of C{k8s.io/apiserver/pkg/admission/plugin/cel/compile.go}.

CEL expressions are compiled with the project's CEL runtime (the environment of
L{kubetwist.cel.library}) with C{object}, C{oldObject}, C{request},
C{namespaceObject} (and C{params}, C{variables} when the policy has them) declared C{dyn}:
syntax errors, unknown functions and undeclared variables are refused as upstream does
(C{compilation failed: ERROR: <input>:L:C: ...}), and expressions whose type is known to
be wrong (C{must evaluate to bool but got int}).  Differences: cel-go types C{request} and
C{namespaceObject}, so it also refuses unknown fields of those; cost limits are not
estimated.  The environment is the admission plugin's
(L{kubetwist.admission.plugins.policy.compiler}), C{authorizer} library included.
"""

from __future__ import annotations

import re
import threading
import urllib.parse
from typing import Any

from kubetwist.apimachinery.validation import (
    is_dns1035_label,
    is_dns1123_subdomain,
    is_fully_qualified_name,
    is_valid_port_num,
    name_is_dns_subdomain,
    validate_conditions,
    validate_label_selector,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.common import validate_qualified_name
from kubetwist.runtime import gofmt
from kubetwist.runtime.field import (
    FieldError,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_many,
)

__all__ = [
    "ACCEPTED_ADMISSION_REVIEW_VERSIONS",
    "compile_expression",
    "validate_mutating_webhook_configuration",
    "validate_mutating_webhook_configuration_update",
    "validate_policy",
    "validate_policy_binding",
    "validate_policy_binding_update",
    "validate_policy_status_update",
    "validate_policy_update",
    "validate_validating_webhook_configuration",
    "validate_validating_webhook_configuration_update",
    "validate_webhook_service",
    "validate_webhook_url",
]

#: Upstream C{AcceptedAdmissionReviewVersions}.
ACCEPTED_ADMISSION_REVIEW_VERSIONS = ["v1", "v1beta1"]

_FAILURE_POLICIES = ["Fail", "Ignore"]
_MATCH_POLICIES = ["Equivalent", "Exact"]
_SIDE_EFFECTS_ALL = ["None", "NoneOnDryRun", "Some", "Unknown"]
_SIDE_EFFECTS_NONE = ["None", "NoneOnDryRun"]
_OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]
_REINVOCATION = ["IfNeeded", "Never"]
_SCOPES = ["*", "Cluster", "Namespaced"]
_REASONS = ["Forbidden", "Invalid", "RequestEntityTooLarge"]
_ACTIONS = ["Audit", "Deny", "Warn"]
_MAX_AUDIT_ANNOTATIONS = 20
_MAX_AUDIT_VALUE_EXPRESSION = 5 * 1024


class _GoValueError(FieldError):
    """A field error whose bad value is printed already (Go's C{%#v} of a slice)."""

    def body(self) -> str:
        text = f"{self.type_text()}: {self.bad_value}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text

    def type_text(self) -> str:
        return "Invalid value"


def _go_slice(type_name: str, values: list) -> str:
    """Go's C{%#v} of a string-typed slice: C{[]string{"a", "b"}}."""
    return gofmt.string_slice(values, type_name)


def _invalid_slice(path: Path, type_name: str, values: list, detail: str) -> FieldError:
    return _GoValueError("Invalid", path, _go_slice(type_name, values), detail)


def _has_wildcard(values: list) -> bool:
    return "*" in values


# --- rules ----------------------------------------------------------------------------------------


def _validate_resources(resources: list, path: Path) -> list[FieldError]:
    """Upstream C{validateResources}: subresource wildcards must not overlap."""
    errs: list[FieldError] = []
    if not resources:
        errs.append(required(path))
    res_with_wild_sub: set[str] = set()
    sub_with_wild_res: set[str] = set()
    double = single = plain = False
    for i, res_sub in enumerate(resources):
        if res_sub == "":
            errs.append(required(path.index(i)))
            continue
        if res_sub == "*/*":
            double = True
        if res_sub == "*":
            single = True
        parts = res_sub.split("/", 1)
        if len(parts) == 1:
            plain = res_sub != "*"
            continue
        res, sub = parts
        if res in res_with_wild_sub:
            errs.append(invalid(path.index(i), res_sub,
                                f"if '{res}/*' is present, must not specify {res_sub}"))
        if sub in sub_with_wild_res:
            errs.append(invalid(path.index(i), res_sub,
                                f"if '*/{sub}' is present, must not specify {res_sub}"))
        if sub == "*":
            res_with_wild_sub.add(res)
        if res == "*":
            sub_with_wild_res.add(sub)
    if len(resources) > 1 and double:
        errs.append(_invalid_slice(path, "string", resources,
                                   "if '*/*' is present, must not specify other resources"))
    if single and plain:
        errs.append(_invalid_slice(
            path, "string", resources,
            "if '*' is present, must not specify other resources without subresources"))
    return errs


def _validate_rule(rule: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateRule} (subresources allowed)."""
    errs: list[FieldError] = []
    groups = rule.get("apiGroups") or []
    versions = rule.get("apiVersions") or []
    if not groups:
        errs.append(required(path.child("apiGroups")))
    if len(groups) > 1 and _has_wildcard(groups):
        errs.append(_invalid_slice(path.child("apiGroups"), "string", groups,
                                   "if '*' is present, must not specify other API groups"))
    if not versions:
        errs.append(required(path.child("apiVersions")))
    if len(versions) > 1 and _has_wildcard(versions):
        errs.append(_invalid_slice(path.child("apiVersions"), "string", versions,
                                   "if '*' is present, must not specify other API versions"))
    for i, version in enumerate(versions):
        if version == "":
            errs.append(required(path.child("apiVersions").index(i)))
    errs.extend(_validate_resources(rule.get("resources") or [], path.child("resources")))
    scope = rule.get("scope")
    if scope is not None and scope not in _SCOPES:
        errs.append(not_supported(path.child("scope"), scope, _SCOPES))
    return errs


def _validate_rule_with_operations(rule: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateRuleWithOperations}."""
    errs: list[FieldError] = []
    ops = rule.get("operations") or []
    if not ops:
        errs.append(required(path.child("operations")))
    if len(ops) > 1 and _has_wildcard(ops):
        errs.append(_invalid_slice(path.child("operations"), "admissionregistration.OperationType",
                                   ops, "if '*' is present, must not specify other operations"))
    for i, op in enumerate(ops):
        if op not in _OPERATIONS:
            errs.append(not_supported(path.child("operations").index(i), op, _OPERATIONS))
    errs.extend(_validate_rule(rule, path))
    return errs


def _path_segment_name(name: str) -> list[str]:
    """Upstream C{path.ValidatePathSegmentName} (not a prefix)."""
    msgs = [f"may not be '{name}'"] if name in (".", "..") else []
    msgs.extend(f"may not contain '{bad}'" for bad in ("/", "%") if bad in name)
    return msgs


def _validate_named_rule(rule: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateNamedRuleWithOperations}."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, name in enumerate(rule.get("resourceNames") or []):
        errs.extend(invalid(path.child("resourceNames").index(i), name, m)
                    for m in _path_segment_name(name))
        if name in seen:
            errs.append(duplicate(path.child("resourceNames").index(i), name))
        seen.add(name)
    errs.extend(_validate_rule_with_operations(rule, path))
    return errs


def _validate_match_resources(mc: dict | None, path: Path) -> list[FieldError]:
    """Upstream C{validateMatchResources}: matchPolicy and both selectors required (the
    defaults fill them), strict label selectors, the rules."""
    if mc is None:
        return []
    errs: list[FieldError] = []
    policy = mc.get("matchPolicy")
    if policy is None:
        errs.append(required(path.child("matchPolicy")))
    elif policy not in _MATCH_POLICIES:
        errs.append(not_supported(path.child("matchPolicy"), policy, _MATCH_POLICIES))
    for key in ("namespaceSelector", "objectSelector"):
        if mc.get(key) is None:
            errs.append(required(path.child(key)))
        else:
            errs.extend(validate_label_selector(mc[key], path.child(key)))
    for key in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(mc.get(key) or []):
            errs.extend(_validate_named_rule(rule or {}, path.child(key).index(i)))
    return errs


# --- CEL ------------------------------------------------------------------------------------------

_env_lock = threading.Lock()
_envs: dict[tuple, Any] = {}
_CEL_TYPE_NAMES = {"NULL": "null_type", "TIMESTAMP": "google.protobuf.Timestamp",
                   "DURATION": "google.protobuf.Duration"}
_CEL_TYPE_TOKEN = re.compile(r"[A-Z_]+")


def _go_type_name(runtime_name: str) -> str:
    """cel-go's C{Type.String()} of a type printed by the runtime: C{LIST<INT>} ->
    C{list(int)}, C{NULL} -> C{null_type}."""
    text = runtime_name.split(".")[-1] if "<" not in runtime_name else runtime_name
    text = _CEL_TYPE_TOKEN.sub(lambda m: _CEL_TYPE_NAMES.get(m.group(0), m.group(0).lower()),
                               text)
    return text.replace("<", "(").replace(">", ")")


def _env(has_params: bool, has_variables: bool) -> Any:
    from cel_expr_python import cel

    from kubetwist.admission.plugins.policy.compiler import environment

    key = (has_params, has_variables)
    with _env_lock:
        env = _envs.get(key)
        if env is None:
            T = cel.Type
            names = {n: T.DYN for n in ("object", "oldObject", "request", "namespaceObject")}
            if has_params:
                names["params"] = T.DYN
            if has_variables:
                names["variables"] = T.DYN
            # the admission plugin's library: the Kubernetes functions and the authorizer's
            names["authorizer"] = T.Map(T.BOOL, T.BYTES)
            names["authorizer.requestResource"] = T.Map(T.UINT, T.List(T.BYTES))
            env = environment(has_params, typed=names)
            _envs[key] = env
        return env


def compile_expression(expression: str, returns: tuple[str, ...], has_params: bool = False,
                       has_variables: bool = False) -> str | None:
    """
    Compile one admission CEL expression (upstream C{CompileCELExpression}).

    @param returns: the accepted result types (C{("bool",)}; C{("string", "null_type")});
        C{("dyn",)} accepts any type; C{dyn} results are always accepted.
    @return: upstream's error detail (C{compilation failed: ERROR: <input>:1:3: ...},
        C{must evaluate to bool but got int}), or C{None} when it compiles.
    """
    from kubetwist.cel import strip_status as _strip_status

    try:
        compiled = _env(has_params, has_variables).compile(expression)
    except RuntimeError as e:
        return "compilation failed: " + _strip_status(str(e))
    got = _go_type_name(str(compiled.return_type()))
    if got and got != "dyn" and "dyn" not in returns and got not in returns:
        if len(returns) == 1:
            return f"must evaluate to {returns[0]} but got {got}"
        return f"must evaluate to one of [{' '.join(returns)}] but got {got}"
    return None


def _validate_match_conditions(conditions: list, path: Path, has_params: bool) -> list[FieldError]:
    """Upstream C{validateMatchConditions}: at most 64, unique qualified names, boolean
    expressions."""
    errs: list[FieldError] = []
    if len(conditions) > 64:
        errs.append(too_many(path, len(conditions), 64))
    seen: set[str] = set()
    for i, mc in enumerate(conditions):
        mc = mc or {}
        expression = (mc.get("expression") or "").strip()
        if not expression:
            errs.append(required(path.index(i).child("expression")))
        else:
            problem = compile_expression(expression, ("bool",), has_params)
            if problem:
                errs.append(invalid(path.index(i).child("expression"), expression, problem))
        name = mc.get("name") or ""
        if not name:
            errs.append(required(path.index(i).child("name")))
        else:
            errs.extend(validate_qualified_name(name, path.index(i).child("name")))
        if name:
            if name in seen:
                errs.append(duplicate(path.index(i).child("name"), name))
            seen.add(name)
    return errs


# --- webhooks -------------------------------------------------------------------------------------


def validate_webhook_url(path: Path, url: str) -> list[FieldError]:
    """Upstream C{ValidateWebhookURL} with C{forceHttps}: C{https://host[/path]}, no user
    information, fragment or query."""
    form = "; desired format: https://host[/path]"
    try:
        u = urllib.parse.urlsplit(url)
        u.port  # noqa: B018 - raises on a bad port, as url.Parse does
    except ValueError as e:
        return [required(path, f'url must be a valid URL: parse "{url}": {e}{form}')]
    errs: list[FieldError] = []
    if u.scheme != "https":
        errs.append(invalid(path, u.scheme, "'https' is the only allowed URL scheme" + form))
    host = u.netloc.rsplit("@", 1)[-1]
    if not host:
        errs.append(invalid(path, host, "host must be specified" + form))
    if "@" in u.netloc:
        errs.append(invalid(path, u.netloc.rsplit("@", 1)[0],
                            "user information is not permitted in the URL"))
    if u.fragment:
        errs.append(invalid(path, u.fragment, "fragments are not permitted in the URL"))
    if u.query:
        errs.append(invalid(path, u.query, "query parameters are not permitted in the URL"))
    return errs


def validate_webhook_service(path: Path, service: dict) -> list[FieldError]:
    """Upstream C{ValidateWebhookService}: name and namespace required, a valid port, a path of
    DNS-1123 subdomain segments."""
    errs: list[FieldError] = []
    if not service.get("name"):
        errs.append(required(path.child("name")))
    if not service.get("namespace"):
        errs.append(required(path.child("namespace")))
    port = service.get("port")
    port = 443 if port is None else port
    problems = is_valid_port_num(port)
    if problems:
        errs.append(invalid(path.child("port"), port, "port is not valid: " + ", ".join(problems)))
    url_path = service.get("path")
    if url_path is None or url_path in ("", "/"):
        return errs
    if url_path == "//":
        return errs + [invalid(path.child("path"), url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        errs.append(invalid(path.child("path"), url_path, "must start with a '/'"))
    check = url_path[1:]
    check = check.removesuffix("/")
    for i, step in enumerate(check.split("/")):
        if not step:
            errs.append(invalid(path.child("path"), url_path, f"segment[{i}] may not be empty"))
            continue
        errs.extend(invalid(path.child("path"), url_path, f"segment[{i}]: {m}")
                    for m in is_dns1123_subdomain(step))
    return errs


def _validate_admission_review_versions(versions: list, require_known: bool,
                                        path: Path) -> list[FieldError]:
    """Upstream C{validateAdmissionReviewVersions}."""
    accepted = ", ".join(ACCEPTED_ADMISSION_REVIEW_VERSIONS)
    if not versions:
        return [required(path, f"must specify one of {accepted}")]
    errs: list[FieldError] = []
    seen: set[str] = set()
    known = False
    for i, v in enumerate(versions):
        if v in seen:
            errs.append(invalid(path.index(i), v, "duplicate version"))
            continue
        seen.add(v)
        errs.extend(invalid(path.index(i), v, m) for m in is_dns1035_label(v))
        known = known or v in ACCEPTED_ADMISSION_REVIEW_VERSIONS
    if require_known and not known:
        errs.append(_invalid_slice(path, "string", versions,
                                   f"must include at least one of {accepted}"))
    return errs


def _validate_webhook(hook: dict, opts: dict, path: Path, mutating: bool) -> list[FieldError]:
    """Upstream C{validateValidatingWebhook} / C{validateMutatingWebhook}."""
    errs = is_fully_qualified_name(path.child("name"), hook.get("name") or "")
    for i, rule in enumerate(hook.get("rules") or []):
        errs.extend(_validate_rule_with_operations(rule or {}, path.child("rules").index(i)))
    fp = hook.get("failurePolicy")
    if fp is not None and fp not in _FAILURE_POLICIES:
        errs.append(not_supported(path.child("failurePolicy"), fp, _FAILURE_POLICIES))
    mp = hook.get("matchPolicy")
    if mp is not None and mp not in _MATCH_POLICIES:
        errs.append(not_supported(path.child("matchPolicy"), mp, _MATCH_POLICIES))
    allowed = _SIDE_EFFECTS_NONE if opts["no_side_effects"] else _SIDE_EFFECTS_ALL
    se = hook.get("sideEffects")
    if se is None:
        errs.append(required(path.child("sideEffects"),
                             f"must specify one of {', '.join(allowed)}"))
    elif se not in allowed:
        errs.append(not_supported(path.child("sideEffects"), se, allowed))
    timeout = hook.get("timeoutSeconds")
    if timeout is not None and not 1 <= timeout <= 30:
        errs.append(invalid(path.child("timeoutSeconds"), timeout,
                            "the timeout value must be between 1 and 30 seconds"))
    for key in ("namespaceSelector", "objectSelector"):
        if hook.get(key) is not None:
            errs.extend(validate_label_selector(hook[key], path.child(key),
                                                opts["invalid_label_values"]))
    if mutating:
        rp = hook.get("reinvocationPolicy")
        if rp is not None and rp not in _REINVOCATION:
            errs.append(not_supported(path.child("reinvocationPolicy"), rp, _REINVOCATION))
    cc = hook.get("clientConfig") or {}
    url, service = cc.get("url"), cc.get("service")
    if (url is None) == (service is None):
        errs.append(required(path.child("clientConfig"),
                             "exactly one of url or service is required"))
    elif url is not None:
        errs.extend(validate_webhook_url(path.child("clientConfig", "url"), url))
    else:
        errs.extend(validate_webhook_service(path.child("clientConfig", "service"), service))
    if not opts["ignore_match_conditions"]:
        errs.extend(_validate_match_conditions(hook.get("matchConditions") or [],
                                               path.child("matchConditions"), False))
    return errs


def _validate_webhook_configuration(config: dict, opts: dict, mutating: bool) -> list[FieldError]:
    errs = validate_object_meta(config.get("metadata") or {}, False, name_is_dns_subdomain,
                                Path("metadata"))
    names: set[str] = set()
    for i, hook in enumerate(config.get("webhooks") or []):
        hook = hook or {}
        path = Path("webhooks").index(i)
        errs.extend(_validate_webhook(hook, opts, path, mutating))
        errs.extend(_validate_admission_review_versions(
            hook.get("admissionReviewVersions") or [], opts["known_review_version"],
            path.child("admissionReviewVersions")))
        name = hook.get("name") or ""
        if opts["unique_names"] and name:
            if name in names:
                errs.append(duplicate(path.child("name"), name))
            names.add(name)
    return errs


_CREATE_OPTS = {"ignore_match_conditions": False, "no_side_effects": True,
                "known_review_version": True, "unique_names": True,
                "invalid_label_values": False}


def _update_opts(new: dict, old: dict) -> dict:
    """The tolerances of an update for what the stored object already has (upstream
    C{ValidateValidatingWebhookConfigurationUpdate})."""
    new_hooks = [h or {} for h in new.get("webhooks") or []]
    old_hooks = [h or {} for h in old.get("webhooks") or []]
    names = [h.get("name") for h in old_hooks]

    def bad_selector(h: dict) -> bool:
        return any(h.get(k) is not None and validate_label_selector(h[k], Path(k))
                   for k in ("namespaceSelector", "objectSelector"))

    return {
        "ignore_match_conditions": len(new_hooks) == len(old_hooks) and all(
            n.get("matchConditions") == o.get("matchConditions")
            for n, o in zip(new_hooks, old_hooks, strict=False)),
        "no_side_effects": all(h.get("sideEffects") in _SIDE_EFFECTS_NONE for h in old_hooks),
        "known_review_version": all(
            not h.get("admissionReviewVersions")
            or any(v in ACCEPTED_ADMISSION_REVIEW_VERSIONS for v in h["admissionReviewVersions"])
            for h in old_hooks),
        "unique_names": len(set(names)) == len(names),
        "invalid_label_values": any(bad_selector(h) for h in old_hooks),
    }


def validate_validating_webhook_configuration(config: dict) -> list[FieldError]:
    """
    Upstream C{ValidateValidatingWebhookConfiguration}: DNS-subdomain name; per webhook a
    fully qualified unique name, rules, failure/match policies, C{sideEffects} C{None} or
    C{NoneOnDryRun}, C{timeoutSeconds} 1..30, selectors, exactly one of C{url}/C{service},
    C{admissionReviewVersions} with a known version, match conditions.
    """
    return _validate_webhook_configuration(config, _CREATE_OPTS, False)


def validate_validating_webhook_configuration_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateValidatingWebhookConfigurationUpdate}, then the ObjectMeta update
    rules (the strategy's C{ValidateUpdate})."""
    errs = _validate_webhook_configuration(new, _update_opts(new, old), False)
    return errs + validate_object_meta_update(new.get("metadata") or {},
                                              old.get("metadata") or {}, Path("metadata"))


def validate_mutating_webhook_configuration(config: dict) -> list[FieldError]:
    """Upstream C{ValidateMutatingWebhookConfiguration}: as for validating webhooks, plus
    C{reinvocationPolicy}."""
    return _validate_webhook_configuration(config, _CREATE_OPTS, True)


def validate_mutating_webhook_configuration_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateMutatingWebhookConfigurationUpdate} and the ObjectMeta rules."""
    errs = _validate_webhook_configuration(new, _update_opts(new, old), True)
    return errs + validate_object_meta_update(new.get("metadata") or {},
                                              old.get("metadata") or {}, Path("metadata"))


# --- ValidatingAdmissionPolicy -------------------------------------------------------------------

_CEL_IDENT = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*$")
_CEL_RESERVED = {"true", "false", "null", "in", "as", "break", "const", "continue", "else",
                 "for", "function", "if", "import", "let", "loop", "package", "namespace",
                 "return", "var", "void", "while"}


def _validate_param_kind(pk: dict, path: Path) -> list[FieldError]:
    """Upstream C{validateParamKind}."""
    errs: list[FieldError] = []
    api_version = pk.get("apiVersion") or ""
    if not api_version:
        errs.append(required(path.child("apiVersion")))
    elif api_version.count("/") > 1:
        errs.append(invalid(path.child("apiVersion"), api_version,
                            f"unexpected GroupVersion string: {api_version}"))
    else:
        group, version = ("", "") if api_version == "/" else (
            api_version.split("/", 1) if "/" in api_version else ("", api_version))
        if group:
            problems = is_dns1123_subdomain(group)
            if problems:
                errs.append(invalid(path.child("apiVersion"), group, ",".join(problems)))
        if not version:
            errs.append(invalid(path.child("apiVersion"), api_version, "version must be specified"))
        else:
            problems = is_dns1035_label(version)
            if problems:
                errs.append(invalid(path.child("apiVersion"), version, ",".join(problems)))
    kind = pk.get("kind") or ""
    if not kind:
        errs.append(required(path.child("kind")))
    else:
        problems = is_dns1035_label(kind.lower())
        if problems:
            errs.append(invalid(path.child("kind"), kind,
                                "may have mixed case, but should otherwise match: "
                                + ",".join(problems)))
    return errs


def _validate_validation(v: dict, has_params: bool, has_variables: bool,
                         path: Path) -> list[FieldError]:
    """Upstream C{validateValidation}."""
    errs: list[FieldError] = []
    expression = v.get("expression") or ""
    message = v.get("message") or ""
    message_expression = v.get("messageExpression") or ""
    if not expression.strip():
        errs.append(required(path.child("expression"), "expression is not specified"))
    else:
        problem = compile_expression(expression, ("bool",), has_params, has_variables)
        if problem:
            errs.append(invalid(path.child("expression"), expression, problem))
    if message_expression and not message_expression.strip():
        errs.append(invalid(path.child("messageExpression"), message_expression,
                            "must be non-empty if specified"))
    elif message_expression.strip():
        problem = compile_expression(message_expression, ("string",), has_params, has_variables)
        if problem:
            errs.append(invalid(path.child("messageExpression"), message_expression, problem))
    if message and not message.strip():
        errs.append(invalid(path.child("message"), message,
                            "message must be non-empty if specified"))
    elif re.search(r"[\n\r]", message.strip()):
        errs.append(invalid(path.child("message"), message, "message must not contain line breaks"))
    reason = v.get("reason")
    if reason is not None and reason not in _REASONS:
        errs.append(not_supported(path.child("reason"), reason, _REASONS))
    return errs


def _validate_variable(v: dict, has_params: bool, path: Path) -> list[FieldError]:
    """Upstream C{validateVariable}."""
    errs: list[FieldError] = []
    name = v.get("name") or ""
    if not name.strip():
        errs.append(required(path.child("name"), "name is not specified"))
    elif not _CEL_IDENT.match(name) or name in _CEL_RESERVED:
        errs.append(invalid(path.child("name"), name, "name is not a valid CEL identifier"))
    expression = v.get("expression") or ""
    if not expression.strip():
        errs.append(required(path.child("expression"), "expression is not specified"))
    else:
        problem = compile_expression(expression, ("dyn",), has_params, True)
        if problem:
            errs.append(invalid(path.child("expression"), expression, problem))
    return errs


def _validate_audit_annotation(meta: dict, a: dict, has_params: bool, has_variables: bool,
                               path: Path) -> list[FieldError]:
    """Upstream C{validateAuditAnnotation}."""
    errs: list[FieldError] = []
    key = a.get("key") or ""
    name = meta.get("name") or ""
    if name:
        errs.extend(validate_qualified_name(f"{name}/{key}", path.child("key")))
    else:
        errs.append(invalid(path.child("key"), key, "requires metadata.name be non-empty"))
    value = a.get("valueExpression") or ""
    trimmed = value.strip()
    if not trimmed:
        errs.append(required(path.child("valueExpression"), "valueExpression is not specified"))
    elif len(trimmed) > _MAX_AUDIT_VALUE_EXPRESSION:
        errs.append(required(path.child("valueExpression"),
                             f"must not exceed {_MAX_AUDIT_VALUE_EXPRESSION} bytes in length"))
    else:
        problem = compile_expression(trimmed, ("string", "null_type"), has_params, has_variables)
        if problem:
            errs.append(invalid(path.child("valueExpression"), value, problem))
    return errs


def _validate_policy_spec(meta: dict, spec: dict, ignore_match_conditions: bool,
                          path: Path) -> list[FieldError]:
    """Upstream C{validateValidatingAdmissionPolicySpec}."""
    errs: list[FieldError] = []
    fp = spec.get("failurePolicy")
    if fp is None:
        errs.append(required(path.child("failurePolicy")))
    elif fp not in _FAILURE_POLICIES:
        errs.append(not_supported(path.child("failurePolicy"), fp, _FAILURE_POLICIES))
    has_params = spec.get("paramKind") is not None
    if has_params:
        errs.extend(_validate_param_kind(spec["paramKind"] or {}, path.child("paramKind")))
    mc = spec.get("matchConstraints")
    if mc is None:
        errs.append(required(path.child("matchConstraints")))
    else:
        errs.extend(_validate_match_resources(mc, path.child("matchConstraints")))
        if not mc.get("resourceRules"):
            errs.append(required(path.child("matchConstraints", "resourceRules")))
    if not ignore_match_conditions:
        errs.extend(_validate_match_conditions(spec.get("matchConditions") or [],
                                               path.child("matchConditions"), has_params))
    variables = spec.get("variables") or []
    for i, v in enumerate(variables):
        errs.extend(_validate_variable(v or {}, has_params, path.child("variables").index(i)))
    validations = spec.get("validations") or []
    annotations = spec.get("auditAnnotations")
    if not validations and not annotations:
        text = "validations or auditAnnotations must contain at least one item"
        errs.append(required(path.child("validations"), text))
        errs.append(required(path.child("auditAnnotations"), text))
        return errs
    for i, v in enumerate(validations):
        errs.extend(_validate_validation(v or {}, has_params, bool(variables),
                                         path.child("validations").index(i)))
    if annotations is not None:
        if len(annotations) > _MAX_AUDIT_ANNOTATIONS:
            errs.append(_GoValueError(
                "Invalid", path.child("auditAnnotations"),
                "[]admissionregistration.AuditAnnotation{...}",
                f"must not have more than {_MAX_AUDIT_ANNOTATIONS} auditAnnotations"))
        keys: set[str] = set()
        for i, a in enumerate(annotations):
            a = a or {}
            errs.extend(_validate_audit_annotation(meta, a, has_params, bool(variables),
                                                   path.child("auditAnnotations").index(i)))
            key = a.get("key") or ""
            if key in keys:
                errs.append(duplicate(path.child("auditAnnotations").index(i).child("key"), key))
            keys.add(key)
    return errs


def validate_policy(policy: dict) -> list[FieldError]:
    """
    Upstream C{ValidateValidatingAdmissionPolicy}: DNS-subdomain name; C{failurePolicy};
    C{paramKind}; C{matchConstraints} with at least one resource rule; match conditions,
    variables, validations and audit annotations (CEL compiled).
    """
    meta = policy.get("metadata") or {}
    errs = validate_object_meta(meta, False, name_is_dns_subdomain, Path("metadata"))
    return errs + _validate_policy_spec(meta, policy.get("spec") or {}, False, Path("spec"))


def validate_policy_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateValidatingAdmissionPolicyUpdate} (match conditions are not
    re-checked while they and C{paramKind} are unchanged) and the ObjectMeta rules."""
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    ignore = new_spec.get("paramKind") == old_spec.get("paramKind") and \
        new_spec.get("matchConditions") == old_spec.get("matchConditions")
    meta = new.get("metadata") or {}
    errs = validate_object_meta(meta, False, name_is_dns_subdomain, Path("metadata"))
    errs += _validate_policy_spec(meta, new_spec, ignore, Path("spec"))
    return errs + validate_object_meta_update(meta, old.get("metadata") or {}, Path("metadata"))


def validate_policy_status_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateValidatingAdmissionPolicyStatusUpdate}: expression warnings need a
    C{warning} and a C{fieldRef}; conditions as C{metav1.Condition}s."""
    status = new.get("status") or {}
    path = Path("status")
    errs: list[FieldError] = []
    warnings = (status.get("typeChecking") or {}).get("expressionWarnings") or []
    for i, w in enumerate(warnings):
        w = w or {}
        wpath = path.child("typeChecking", "expressionWarnings").index(i)
        if not w.get("warning"):
            errs.append(required(wpath.child("warning")))
        if not (w.get("fieldRef") or "").strip():
            errs.append(required(wpath.child("fieldRef")))
    errs.extend(validate_conditions(status.get("conditions"), path.child("conditions")))
    return errs + validate_object_meta_update(new.get("metadata") or {},
                                              old.get("metadata") or {}, Path("metadata"))


# --- bindings -------------------------------------------------------------------------------------


def _validate_param_ref(ref: dict | None, path: Path) -> list[FieldError]:
    """Upstream C{validateParamRef}."""
    if ref is None:
        return []
    errs: list[FieldError] = []
    name = ref.get("name") or ""
    selector = ref.get("selector")
    exclusive = "name and selector are mutually exclusive"
    if name:
        errs.extend(invalid(path.child("name"), name, m) for m in _path_segment_name(name))
        if selector is not None:
            errs.append(forbidden(path.child("name"), exclusive))
    if selector is not None:
        errs.extend(validate_label_selector(selector, path.child("selector")))
        if name:
            errs.append(forbidden(path.child("selector"), exclusive))
    if not name and selector is None:
        errs.append(required(path, "one of name or selector must be specified"))
    action = ref.get("parameterNotFoundAction")
    if not action:
        errs.append(required(path.child("parameterNotFoundAction")))
    elif action not in ("Deny", "Allow"):
        errs.append(not_supported(path.child("parameterNotFoundAction"), action, ["Deny", "Allow"]))
    return errs


def _validate_actions(actions: list, path: Path) -> list[FieldError]:
    """Upstream C{validateValidationActions}."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, action in enumerate(actions):
        if action not in _ACTIONS:
            errs.append(not_supported(path.index(i), action, _ACTIONS))
        if action in seen:
            errs.append(duplicate(path.index(i), action))
        seen.add(action)
    if "Deny" in seen and "Warn" in seen:
        errs.append(_invalid_slice(
            path, "admissionregistration.ValidationAction", actions,
            "must not contain both Deny and Warn (repeating the same validation failure "
            "information in the API response and headers serves no purpose)"))
    if not seen:
        errs.append(required(path, "at least one validation action is required"))
    return errs


def validate_policy_binding(binding: dict) -> list[FieldError]:
    """
    Upstream C{ValidateValidatingAdmissionPolicyBinding}: DNS-subdomain name and
    C{policyName}; C{paramRef} (exactly one of name/selector, C{parameterNotFoundAction});
    C{matchResources} (reported under upstream's misspelt C{spec.matchResouces});
    C{validationActions} required, known, unique, not both Deny and Warn.
    """
    errs = validate_object_meta(binding.get("metadata") or {}, False, name_is_dns_subdomain,
                                Path("metadata"))
    spec = binding.get("spec") or {}
    path = Path("spec")
    policy_name = spec.get("policyName") or ""
    if not policy_name:
        errs.append(required(path.child("policyName")))
    else:
        errs.extend(invalid(path.child("policyName"), policy_name, m)
                    for m in name_is_dns_subdomain(policy_name, False))
    errs.extend(_validate_param_ref(spec.get("paramRef"), path.child("paramRef")))
    errs.extend(_validate_match_resources(spec.get("matchResources"),
                                          path.child("matchResouces")))
    errs.extend(_validate_actions(spec.get("validationActions") or [],
                                  path.child("validationActions")))
    return errs


def validate_policy_binding_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateValidatingAdmissionPolicyBindingUpdate} and the ObjectMeta rules."""
    return validate_policy_binding(new) + validate_object_meta_update(
        new.get("metadata") or {}, old.get("metadata") or {}, Path("metadata"))
