# -*- test-case-name: tests.admission.test_podsecurity_checks -*-
"""
The Pod Security Standards' checks and their evaluator: upstream
C{k8s.io/pod-security-admission/policy} of v1.32 (C{check_*.go}, C{checks.go},
C{registry.go}, C{visitor.go}).

Every check is a function C{(metadata, spec) -> CheckResult} over a pod's (or a pod template's)
C{metadata} and C{spec} as v1 JSON dicts, with upstream's reason and detail texts.  A check
has one implementation per minimum policy version (L{Check.versions}); the L{Evaluator}
expands them into the list of functions each level runs at each version C{v1.0} ...
C{v1.32}: baseline checks first, then restricted ones, each group sorted by check id, a
restricted check replacing the baseline checks it overrides from its version on.  A version
newer than the newest check version (and C{latest}) evaluates as that newest version.

kube-apiserver v1.32 leaves its feature gate C{UserNamespacesPodSecurityStandards} (alpha) off,
so pods with C{hostUsers: false} get no relaxation here either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Optional

from kubetwist.admission.plugins.podsecurity.api import (
    LEVEL_BASELINE,
    LEVEL_PRIVILEGED,
    LEVEL_RESTRICTED,
    LevelVersion,
    Version,
    v1,
)
from kubetwist.runtime.gofmt import quote as go_quote

__all__ = ["CheckResult", "AggregateCheckResult", "Check", "VersionedCheck", "DEFAULT_CHECKS",
           "Evaluator", "aggregate", "DEFAULT_EVALUATOR"]


class CheckResult(NamedTuple):
    """Upstream C{CheckResult}: allowed, or a short reason and a detail text."""

    allowed: bool
    reason: str = ""
    detail: str = ""


ALLOWED = CheckResult(True)

#: C{(metadata dict, spec dict) -> CheckResult}
CheckFn = Callable[[dict, dict], CheckResult]

UNKNOWN_FORBIDDEN_REASON = "unknown forbidden reason"


@dataclass
class AggregateCheckResult:
    """Upstream C{AggregateCheckResult}: the refused checks' reasons and details, in order."""

    allowed: bool
    reasons: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)

    def forbidden_reason(self) -> str:
        """C{privileged, runAsNonRoot != true} (upstream C{ForbiddenReason})."""
        return ", ".join(self.reasons)

    def forbidden_detail(self) -> str:
        """C{privileged (container "c" must not ...), ...} (upstream C{ForbiddenDetail})."""
        return ", ".join(f"{r} ({d})" if d else r
                         for r, d in zip(self.reasons, self.details, strict=True))


def aggregate(results: Iterable[CheckResult]) -> AggregateCheckResult:
    """Upstream C{AggregateCheckResults}."""
    reasons, details = [], []
    for r in results:
        if not r.allowed:
            reasons.append(r.reason or UNKNOWN_FORBIDDEN_REASON)
            details.append(r.detail)
    return AggregateCheckResult(not reasons, reasons, details)


# -- helpers -----------------------------------------------------------------------------------

def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def containers(spec: dict) -> Iterator[dict]:
    """Upstream C{visitContainers}: init containers, containers, then ephemeral containers."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in _list(spec.get(key)):
            if isinstance(c, dict):
                yield c


def _name(c: dict) -> str:
    return c.get("name") or ""


def _sc(obj: dict) -> dict:
    """The C{securityContext} of a container or a pod spec (empty when unset)."""
    return _dict(obj.get("securityContext"))


def join_quote(items: list[str]) -> str:
    """Upstream C{joinQuote}: C{"a", "b"} (no escaping)."""
    return '"' + '", "'.join(items) + '"' if items else ""


def pluralize(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def _containers_text(names: list[str]) -> str:
    """C{container "a"} / C{containers "a", "b"}."""
    return f'{pluralize("container", "containers", len(names))} {join_quote(names)}'


def _windows(spec: dict) -> bool:
    return _dict(spec.get("os")).get("name") == "windows"


def _strs(value: Any) -> list[str]:
    return [v if isinstance(v, str) else str(v) for v in _list(value)]


# -- baseline ----------------------------------------------------------------------------------

def _allowed_apparmor_annotation(value: str) -> bool:
    return not value or value == "runtime/default" or value.startswith("localhost/")


_APPARMOR_TYPES = ("RuntimeDefault", "Localhost")


def app_armor_profile_1_0(meta: dict, spec: dict) -> CheckResult:
    """C{appArmorProfile}: profile types other than RuntimeDefault/Localhost, and the beta
    annotations' values other than C{runtime/default}, C{localhost/*} or empty."""
    bad_setters: list[str] = []
    bad_values: set[str] = set()
    pod_profile = _sc(spec).get("appArmorProfile")
    if isinstance(pod_profile, dict) and pod_profile.get("type", "") not in _APPARMOR_TYPES:
        bad_setters.append("pod")
        bad_values.add(pod_profile.get("type") or "")
    bad_containers = []
    for c in containers(spec):
        profile = _sc(c).get("appArmorProfile")
        if isinstance(profile, dict) and profile.get("type", "") not in _APPARMOR_TYPES:
            bad_containers.append(_name(c))
            bad_values.add(profile.get("type") or "")
    if bad_containers:
        bad_setters.append(_containers_text(bad_containers))
    forbidden = sorted(
        f"{k}={go_quote(v)}" for k, v in _dict(meta.get("annotations")).items()
        if k.startswith("container.apparmor.security.beta.kubernetes.io/")
        and isinstance(v, str) and not _allowed_apparmor_annotation(v))
    values = sorted(bad_values)
    if forbidden:
        values += forbidden
        bad_setters.append(pluralize("annotation", "annotations", len(forbidden)))
    if bad_setters:
        return CheckResult(
            False,
            pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles", len(values)),
            f"{' and '.join(bad_setters)} must not set AppArmor profile type to "
            f"{join_quote(values)}")
    return ALLOWED


CAPABILITIES_ALLOWED_1_0 = frozenset({
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
})


def capabilities_baseline_1_0(meta: dict, spec: dict) -> CheckResult:
    """C{capabilities_baseline}: only the default capabilities may be added."""
    bad_containers = []
    non_default: set[str] = set()
    for c in containers(spec):
        caps = _sc(c).get("capabilities")
        if not isinstance(caps, dict):
            continue
        bad = [cap for cap in _strs(caps.get("add")) if cap not in CAPABILITIES_ALLOWED_1_0]
        if bad:
            non_default.update(bad)
            bad_containers.append(_name(c))
    if bad_containers:
        return CheckResult(
            False, "non-default capabilities",
            f"{_containers_text(bad_containers)} must not include "
            f"{join_quote(sorted(non_default))} in securityContext.capabilities.add")
    return ALLOWED


def host_namespaces_1_0(meta: dict, spec: dict) -> CheckResult:
    """C{hostNamespaces}: no hostNetwork, hostPID, hostIPC."""
    used = [f"{k}=true" for k in ("hostNetwork", "hostPID", "hostIPC") if spec.get(k) is True]
    if used:
        return CheckResult(False, "host namespaces", ", ".join(used))
    return ALLOWED


def host_path_volumes_1_0(meta: dict, spec: dict) -> CheckResult:
    """C{hostPathVolumes}: no hostPath volumes."""
    names = [v.get("name") or "" for v in _list(spec.get("volumes"))
             if isinstance(v, dict) and v.get("hostPath") is not None]
    if names:
        return CheckResult(False, "hostPath volumes",
                           f"{pluralize('volume', 'volumes', len(names))} {join_quote(names)}")
    return ALLOWED


def _go_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def host_ports_1_0(meta: dict, spec: dict) -> CheckResult:
    """C{hostPorts}: no hostPort other than 0."""
    bad_containers = []
    ports: set[str] = set()
    for c in containers(spec):
        used = [str(_go_int(p.get("hostPort"))) for p in _list(c.get("ports"))
                if isinstance(p, dict) and _go_int(p.get("hostPort")) != 0]
        if used:
            ports.update(used)
            bad_containers.append(_name(c))
    if bad_containers:
        return CheckResult(
            False, "hostPort",
            f"{_containers_text(bad_containers)} "
            f"{pluralize('uses', 'use', len(bad_containers))} "
            f"{pluralize('hostPort', 'hostPorts', len(ports))} {', '.join(sorted(ports))}")
    return ALLOWED


def privileged_1_0(meta: dict, spec: dict) -> CheckResult:
    """C{privileged}: no container with C{securityContext.privileged=true}."""
    bad = [_name(c) for c in containers(spec) if _sc(c).get("privileged") is True]
    if bad:
        return CheckResult(False, "privileged",
                           f"{_containers_text(bad)} must not set securityContext.privileged=true")
    return ALLOWED


def proc_mount_1_0(meta: dict, spec: dict) -> CheckResult:
    """C{procMount}: C{Default} or unset."""
    bad_containers = []
    types: set[str] = set()
    for c in containers(spec):
        pm = _sc(c).get("procMount")
        if pm is not None and pm != "Default":
            bad_containers.append(_name(c))
            types.add(str(pm))
    if bad_containers:
        return CheckResult(
            False, "procMount",
            f"{_containers_text(bad_containers)} must not set securityContext.procMount to "
            f"{join_quote(sorted(types))}")
    return ALLOWED


SELINUX_ALLOWED_TYPES_1_0 = frozenset({"", "container_t", "container_init_t", "container_kvm_t"})
SELINUX_ALLOWED_TYPES_1_31 = SELINUX_ALLOWED_TYPES_1_0 | {"container_engine_t"}


def _selinux_options(spec: dict, allowed: frozenset) -> CheckResult:
    bad_setters: list[str] = []
    bad_types: set[str] = set()
    flags = {"user": False, "role": False}

    def valid(opts: dict) -> bool:
        ok = True
        t = opts.get("type") or ""
        if t not in allowed:
            ok = False
            bad_types.add(t)
        for key in ("user", "role"):
            if opts.get(key):
                ok = False
                flags[key] = True
        return ok

    pod_opts = _sc(spec).get("seLinuxOptions")
    if isinstance(pod_opts, dict) and not valid(pod_opts):
        bad_setters.append("pod")
    bad_containers = []
    for c in containers(spec):
        opts = _sc(c).get("seLinuxOptions")
        if isinstance(opts, dict) and not valid(opts):
            bad_containers.append(_name(c))
    if bad_containers:
        bad_setters.append(_containers_text(bad_containers))
    if bad_setters:
        data = []
        if bad_types:
            data.append(f"{pluralize('type', 'types', len(bad_types))} "
                        f"{join_quote(sorted(bad_types))}")
        if flags["user"]:
            data.append("user may not be set")
        if flags["role"]:
            data.append("role may not be set")
        return CheckResult(
            False, "seLinuxOptions",
            f"{' and '.join(bad_setters)} set forbidden securityContext.seLinuxOptions: "
            f"{'; '.join(data)}")
    return ALLOWED


def se_linux_options_1_0(meta: dict, spec: dict) -> CheckResult:
    """C{seLinuxOptions} up to v1.30: type among container_t, container_init_t,
    container_kvm_t or empty; no user, no role."""
    return _selinux_options(spec, SELINUX_ALLOWED_TYPES_1_0)


def se_linux_options_1_31(meta: dict, spec: dict) -> CheckResult:
    """C{seLinuxOptions} from v1.31: container_engine_t allowed too."""
    return _selinux_options(spec, SELINUX_ALLOWED_TYPES_1_31)


_SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_CONTAINER_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"
_SECCOMP_TYPES = ("Localhost", "RuntimeDefault")


def _valid_seccomp_annotation(value: str) -> bool:
    return value in ("runtime/default", "docker/default") or value.startswith("localhost/")


def seccomp_profile_baseline_1_0(meta: dict, spec: dict) -> CheckResult:
    """C{seccompProfile_baseline} up to v1.18: the alpha annotations."""
    annotations = _dict(meta.get("annotations"))
    forbidden: set[str] = set()
    keys = [_SECCOMP_POD_ANNOTATION] + [_SECCOMP_CONTAINER_PREFIX + _name(c)
                                        for c in containers(spec)]
    for key in keys:
        value = annotations.get(key)
        if isinstance(value, str) and not _valid_seccomp_annotation(value):
            forbidden.add(f"{key}={go_quote(value)}")
    if forbidden:
        return CheckResult(
            False, "seccompProfile",
            f"forbidden {pluralize('annotation', 'annotations', len(forbidden))} "
            f"{', '.join(sorted(forbidden))}")
    return ALLOWED


def _seccomp(spec: dict, require: bool) -> CheckResult:
    """C{seccompProfile} from v1.19 (baseline: explicit bad types; restricted: also unset)."""
    bad_setters: list[str] = []
    bad_values: set[str] = set()
    pod_set = False
    profile = _sc(spec).get("seccompProfile")
    if isinstance(profile, dict):
        if profile.get("type") not in _SECCOMP_TYPES:
            bad_setters.append("pod")
            bad_values.add(profile.get("type") or "")
        else:
            pod_set = True
    explicit, implicit = [], []
    for c in containers(spec):
        profile = _sc(c).get("seccompProfile")
        if isinstance(profile, dict):
            if profile.get("type") not in _SECCOMP_TYPES:
                explicit.append(_name(c))
                bad_values.add(profile.get("type") or "")
        elif not pod_set:
            implicit.append(_name(c))
    if explicit:
        bad_setters.append(_containers_text(explicit))
    if bad_setters:
        return CheckResult(
            False, "seccompProfile",
            f"{' and '.join(bad_setters)} must not set securityContext.seccompProfile.type to "
            f"{join_quote(sorted(bad_values))}")
    if require and implicit:
        return CheckResult(
            False, "seccompProfile",
            f"pod or {_containers_text(implicit)} must set securityContext.seccompProfile.type "
            'to "RuntimeDefault" or "Localhost"')
    return ALLOWED


def seccomp_profile_baseline_1_19(meta: dict, spec: dict) -> CheckResult:
    """C{seccompProfile_baseline} from v1.19: RuntimeDefault, Localhost or unset."""
    return _seccomp(spec, False)


SYSCTLS_ALLOWED_1_0 = frozenset({
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start",
})
SYSCTLS_ALLOWED_1_27 = SYSCTLS_ALLOWED_1_0 | {"net.ipv4.ip_local_reserved_ports"}
SYSCTLS_ALLOWED_1_29 = SYSCTLS_ALLOWED_1_27 | {
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}
SYSCTLS_ALLOWED_1_32 = SYSCTLS_ALLOWED_1_29 | {"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}


def _sysctls(spec: dict, allowed: frozenset) -> CheckResult:
    bad = [str(s.get("name") or "") for s in _list(_sc(spec).get("sysctls"))
           if isinstance(s, dict) and (s.get("name") or "") not in allowed]
    if bad:
        return CheckResult(False, "forbidden sysctls", ", ".join(bad))
    return ALLOWED


def sysctls_1_0(meta: dict, spec: dict) -> CheckResult:
    return _sysctls(spec, SYSCTLS_ALLOWED_1_0)


def sysctls_1_27(meta: dict, spec: dict) -> CheckResult:
    return _sysctls(spec, SYSCTLS_ALLOWED_1_27)


def sysctls_1_29(meta: dict, spec: dict) -> CheckResult:
    return _sysctls(spec, SYSCTLS_ALLOWED_1_29)


def sysctls_1_32(meta: dict, spec: dict) -> CheckResult:
    return _sysctls(spec, SYSCTLS_ALLOWED_1_32)


def windows_host_process_1_0(meta: dict, spec: dict) -> CheckResult:
    """C{windowsHostProcess}: no C{windowsOptions.hostProcess=true}."""
    def host_process(obj: dict) -> bool:
        return _dict(_sc(obj).get("windowsOptions")).get("hostProcess") is True

    setters = ["pod"] if host_process(spec) else []
    bad = [_name(c) for c in containers(spec) if host_process(c)]
    if bad:
        setters.append(_containers_text(bad))
    if setters:
        return CheckResult(
            False, "hostProcess",
            f"{' and '.join(setters)} must not set securityContext.windowsOptions.hostProcess=true")
    return ALLOWED


# -- restricted --------------------------------------------------------------------------------

def allow_privilege_escalation_1_8(meta: dict, spec: dict) -> CheckResult:
    """C{allowPrivilegeEscalation}: every container sets it to false."""
    bad = [_name(c) for c in containers(spec)
           if _sc(c).get("allowPrivilegeEscalation") is not False]
    if bad:
        return CheckResult(
            False, "allowPrivilegeEscalation != false",
            f"{_containers_text(bad)} must set securityContext.allowPrivilegeEscalation=false")
    return ALLOWED


def allow_privilege_escalation_1_25(meta: dict, spec: dict) -> CheckResult:
    """From v1.25 Windows pods (C{spec.os.name: windows}) pass."""
    return ALLOWED if _windows(spec) else allow_privilege_escalation_1_8(meta, spec)


def capabilities_restricted_1_22(meta: dict, spec: dict) -> CheckResult:
    """C{capabilities_restricted}: drop C{ALL}, add nothing but C{NET_BIND_SERVICE}."""
    missing_drop, adding = [], []
    forbidden: set[str] = set()
    for c in containers(spec):
        caps = _sc(c).get("capabilities")
        if not isinstance(caps, dict):
            missing_drop.append(_name(c))
            continue
        if "ALL" not in _strs(caps.get("drop")):
            missing_drop.append(_name(c))
        bad = [cap for cap in _strs(caps.get("add")) if cap != "NET_BIND_SERVICE"]
        if bad:
            forbidden.update(bad)
            adding.append(_name(c))
    details = []
    if missing_drop:
        details.append(f'{_containers_text(missing_drop)} must set '
                       'securityContext.capabilities.drop=["ALL"]')
    if adding:
        details.append(f"{_containers_text(adding)} must not include "
                       f"{join_quote(sorted(forbidden))} in securityContext.capabilities.add")
    if details:
        return CheckResult(False, "unrestricted capabilities", "; ".join(details))
    return ALLOWED


def capabilities_restricted_1_25(meta: dict, spec: dict) -> CheckResult:
    """From v1.25 Windows pods pass."""
    return ALLOWED if _windows(spec) else capabilities_restricted_1_22(meta, spec)


_ALLOWED_VOLUME_SOURCES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                           "persistentVolumeClaim", "projected", "secret")
#: the restricted sources in the order upstream's switch tests them
_RESTRICTED_VOLUME_SOURCES = (
    "hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi",
    "glusterfs", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile",
    "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO",
    "storageos",
)


def restricted_volumes_1_0(meta: dict, spec: dict) -> CheckResult:
    """C{restrictedVolumes}: only configMap, csi, downwardAPI, emptyDir, ephemeral,
    persistentVolumeClaim, projected and secret volumes (any other source: C{unknown})."""
    bad_volumes = []
    bad_types: set[str] = set()
    for v in _list(spec.get("volumes")):
        if not isinstance(v, dict):
            continue
        if any(v.get(k) is not None for k in _ALLOWED_VOLUME_SOURCES):
            continue
        bad_volumes.append(v.get("name") or "")
        bad_types.add(next((k for k in _RESTRICTED_VOLUME_SOURCES if v.get(k) is not None),
                           "unknown"))
    if bad_volumes:
        return CheckResult(
            False, "restricted volume types",
            f"{pluralize('volume', 'volumes', len(bad_volumes))} {join_quote(bad_volumes)} "
            f"{pluralize('uses', 'use', len(bad_volumes))} "
            f"{pluralize('restricted volume type', 'restricted volume types', len(bad_types))} "
            f"{join_quote(sorted(bad_types))}")
    return ALLOWED


def run_as_non_root_1_0(meta: dict, spec: dict) -> CheckResult:
    """C{runAsNonRoot}: true on the pod (containers may leave it unset) or on every
    container; never false."""
    bad_setters = []
    pod_non_root = False
    value = _sc(spec).get("runAsNonRoot")
    if value is not None:
        if value is False:
            bad_setters.append("pod")
        else:
            pod_non_root = True
    explicit, implicit = [], []
    for c in containers(spec):
        value = _sc(c).get("runAsNonRoot")
        if value is not None:
            if value is False:
                explicit.append(_name(c))
        elif not pod_non_root:
            implicit.append(_name(c))
    if explicit:
        bad_setters.append(_containers_text(explicit))
    if bad_setters:
        return CheckResult(False, "runAsNonRoot != true",
                           f"{' and '.join(bad_setters)} must not set "
                           "securityContext.runAsNonRoot=false")
    if implicit:
        return CheckResult(False, "runAsNonRoot != true",
                           f"pod or {_containers_text(implicit)} must set "
                           "securityContext.runAsNonRoot=true")
    return ALLOWED


def _is_zero(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value == 0


def run_as_user_1_23(meta: dict, spec: dict) -> CheckResult:
    """C{runAsUser}: never 0."""
    setters = ["pod"] if _is_zero(_sc(spec).get("runAsUser")) else []
    bad = [_name(c) for c in containers(spec) if _is_zero(_sc(c).get("runAsUser"))]
    if bad:
        setters.append(_containers_text(bad))
    if setters:
        return CheckResult(False, "runAsUser=0",
                           f"{' and '.join(setters)} must not set runAsUser=0")
    return ALLOWED


def seccomp_profile_restricted_1_19(meta: dict, spec: dict) -> CheckResult:
    """C{seccompProfile_restricted}: RuntimeDefault or Localhost on the pod or on every
    container."""
    return _seccomp(spec, True)


def seccomp_profile_restricted_1_25(meta: dict, spec: dict) -> CheckResult:
    """From v1.25 Windows pods pass."""
    return ALLOWED if _windows(spec) else seccomp_profile_restricted_1_19(meta, spec)


# -- the registry ------------------------------------------------------------------------------

@dataclass(frozen=True)
class VersionedCheck:
    """One implementation of a check, from C{minimum_version} on; C{overrides}: the baseline
    check ids it replaces in the restricted level (upstream C{OverrideCheckIDs})."""

    minimum_version: Version
    check: CheckFn
    overrides: tuple[str, ...] = ()


@dataclass(frozen=True)
class Check:
    """Upstream C{policy.Check}: an id, its level and its implementations by version."""

    id: str
    level: str
    versions: tuple[VersionedCheck, ...]


def _vc(minor: int, fn: CheckFn, *overrides: str) -> VersionedCheck:
    return VersionedCheck(v1(minor), fn, overrides)


#: Upstream C{DefaultChecks()} of v1.32.
DEFAULT_CHECKS: tuple[Check, ...] = (
    Check("allowPrivilegeEscalation", LEVEL_RESTRICTED, (
        _vc(8, allow_privilege_escalation_1_8), _vc(25, allow_privilege_escalation_1_25))),
    Check("appArmorProfile", LEVEL_BASELINE, (_vc(0, app_armor_profile_1_0),)),
    Check("capabilities_baseline", LEVEL_BASELINE, (_vc(0, capabilities_baseline_1_0),)),
    Check("capabilities_restricted", LEVEL_RESTRICTED, (
        _vc(22, capabilities_restricted_1_22, "capabilities_baseline"),
        _vc(25, capabilities_restricted_1_25, "capabilities_baseline"))),
    Check("hostNamespaces", LEVEL_BASELINE, (_vc(0, host_namespaces_1_0),)),
    Check("hostPathVolumes", LEVEL_BASELINE, (_vc(0, host_path_volumes_1_0),)),
    Check("hostPorts", LEVEL_BASELINE, (_vc(0, host_ports_1_0),)),
    Check("privileged", LEVEL_BASELINE, (_vc(0, privileged_1_0),)),
    Check("procMount", LEVEL_BASELINE, (_vc(0, proc_mount_1_0),)),
    Check("restrictedVolumes", LEVEL_RESTRICTED, (
        _vc(0, restricted_volumes_1_0, "hostPathVolumes"),)),
    Check("runAsNonRoot", LEVEL_RESTRICTED, (_vc(0, run_as_non_root_1_0),)),
    Check("runAsUser", LEVEL_RESTRICTED, (_vc(23, run_as_user_1_23),)),
    Check("seLinuxOptions", LEVEL_BASELINE, (
        _vc(0, se_linux_options_1_0), _vc(31, se_linux_options_1_31))),
    Check("seccompProfile_baseline", LEVEL_BASELINE, (
        _vc(0, seccomp_profile_baseline_1_0), _vc(19, seccomp_profile_baseline_1_19))),
    Check("seccompProfile_restricted", LEVEL_RESTRICTED, (
        _vc(19, seccomp_profile_restricted_1_19, "seccompProfile_baseline"),
        _vc(25, seccomp_profile_restricted_1_25, "seccompProfile_baseline"))),
    Check("sysctls", LEVEL_BASELINE, (
        _vc(0, sysctls_1_0), _vc(27, sysctls_1_27), _vc(29, sysctls_1_29),
        _vc(32, sysctls_1_32))),
    Check("windowsHostProcess", LEVEL_BASELINE, (_vc(0, windows_host_process_1_0),)),
)


class Evaluator:
    """
    Upstream C{checkRegistry} (C{NewEvaluator}, C{EvaluatePod}): the check functions of each
    level at each minor version, computed once.

    @ivar max_version: the newest version any check starts at (C{v1.32}).
    """

    def __init__(self, checks: Iterable[Check] = DEFAULT_CHECKS) -> None:
        checks = list(checks)
        self.max_version = max((c.versions[-1].minimum_version for c in checks),
                               key=lambda v: (v.major, v.minor))
        top = self.max_version.minor
        baseline_ids = sorted(c.id for c in checks if c.level == LEVEL_BASELINE)
        restricted_ids = sorted(c.id for c in checks if c.level == LEVEL_RESTRICTED)
        order = baseline_ids + restricted_ids
        by_level: dict[str, list[dict[str, VersionedCheck]]] = {
            LEVEL_BASELINE: [{} for _ in range(top + 1)],
            LEVEL_RESTRICTED: [{} for _ in range(top + 1)],
        }
        for c in checks:
            for i, vc in enumerate(c.versions):
                end = c.versions[i + 1].minimum_version.minor if i + 1 < len(c.versions) \
                    else top + 1
                for minor in range(vc.minimum_version.minor, end):
                    by_level[c.level][minor][c.id] = vc
        self._fns: dict[tuple[str, int], list[CheckFn]] = {}
        for minor in range(top + 1):
            restricted = by_level[LEVEL_RESTRICTED][minor]
            baseline = by_level[LEVEL_BASELINE][minor]
            overridden = {o for vc in restricted.values() for o in vc.overrides}
            merged = dict(restricted)
            merged.update({i: vc for i, vc in baseline.items() if i not in overridden})
            self._fns[(LEVEL_BASELINE, minor)] = [baseline[i].check for i in order
                                                  if i in baseline]
            self._fns[(LEVEL_RESTRICTED, minor)] = [merged[i].check for i in order
                                                    if i in merged]

    def checks_for(self, lv: LevelVersion) -> list[CheckFn]:
        """The functions C{lv} runs, in order (none for privileged)."""
        if lv.level == LEVEL_PRIVILEGED:
            return []
        version = lv.version
        if self.max_version.older(version):
            version = self.max_version
        return self._fns.get((lv.level, version.minor), [])

    def evaluate_pod(self, lv: LevelVersion, meta: Optional[dict],
                     spec: Optional[dict]) -> list[CheckResult]:
        """
        Upstream C{EvaluatePod}: every check of C{lv} on a pod's C{metadata} and C{spec}
        (v1 JSON dicts).
        """
        meta = meta if isinstance(meta, dict) else {}
        spec = spec if isinstance(spec, dict) else {}
        return [fn(meta, spec) for fn in self.checks_for(lv)]


#: The evaluator of L{DEFAULT_CHECKS}.
DEFAULT_EVALUATOR = Evaluator()
