# -*- test-case-name: tests.admission.test_podsecurity -*-
"""
Pod Security levels, versions and namespace policies: upstream
C{k8s.io/pod-security-admission/api} (C{constants.go}, C{helpers.go}) of v1.32.

A namespace's policy comes from its labels C{pod-security.kubernetes.io/<mode>} (a level:
C{privileged}, C{baseline}, C{restricted}) and C{pod-security.kubernetes.io/<mode>-version}
(C{latest} or C{v1.N}) for the three modes C{enforce}, C{audit} and C{warn}; an absent label
takes the configured default (L{policy_to_evaluate}).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Optional

from kubetwist.runtime import field

__all__ = [
    "LEVEL_PRIVILEGED", "LEVEL_BASELINE", "LEVEL_RESTRICTED", "LEVELS", "LABEL_PREFIX",
    "ENFORCE_LEVEL_LABEL", "ENFORCE_VERSION_LABEL", "AUDIT_LEVEL_LABEL", "AUDIT_VERSION_LABEL",
    "WARN_LEVEL_LABEL", "WARN_VERSION_LABEL", "AUDIT_ANNOTATION_PREFIX",
    "EXEMPTION_REASON_ANNOTATION_KEY", "AUDIT_VIOLATIONS_ANNOTATION_KEY",
    "ENFORCED_POLICY_ANNOTATION_KEY", "Version", "LATEST", "LevelVersion", "Policy",
    "parse_level", "parse_version", "compare_levels", "policy_to_evaluate", "LevelError",
]

LEVEL_PRIVILEGED = "privileged"
LEVEL_BASELINE = "baseline"
LEVEL_RESTRICTED = "restricted"
#: Upstream C{validLevels}, in its order (the order of its error message).
LEVELS = (LEVEL_PRIVILEGED, LEVEL_BASELINE, LEVEL_RESTRICTED)

LABEL_PREFIX = "pod-security.kubernetes.io/"
ENFORCE_LEVEL_LABEL = LABEL_PREFIX + "enforce"
ENFORCE_VERSION_LABEL = LABEL_PREFIX + "enforce-version"
AUDIT_LEVEL_LABEL = LABEL_PREFIX + "audit"
AUDIT_VERSION_LABEL = LABEL_PREFIX + "audit-version"
WARN_LEVEL_LABEL = LABEL_PREFIX + "warn"
WARN_VERSION_LABEL = LABEL_PREFIX + "warn-version"

#: The audit annotations the plugin adds are C{pod-security.kubernetes.io/<key>}.
AUDIT_ANNOTATION_PREFIX = LABEL_PREFIX
EXEMPTION_REASON_ANNOTATION_KEY = "exempt"
AUDIT_VIOLATIONS_ANNOTATION_KEY = "audit-violations"
ENFORCED_POLICY_ANNOTATION_KEY = "enforce-policy"

_LEVEL_ERROR = "must be one of " + ", ".join(LEVELS)
_VERSION_ERROR = 'must be "latest" or "v1.x"'
_VERSION_RE = re.compile(r"v1\.([0-9]|[1-9][0-9]*)")
#: Go's C{strconv.Atoi} fails beyond C{int64}
_MAX_INT = 2 ** 63 - 1


class LevelError(ValueError):
    """A level or version label value that does not parse (the text is upstream's)."""


@dataclass(frozen=True)
class Version:
    """
    A policy version (upstream C{api.Version}): C{v1.N}, or C{latest} (newer than every
    C{v1.N}).

    @ivar major: C{1} (C{0} for latest).
    @ivar minor: C{N} (C{0} for latest).
    @ivar latest: the version is C{latest}.
    """

    major: int = 0
    minor: int = 0
    latest: bool = False

    def __str__(self) -> str:
        return "latest" if self.latest else f"v{self.major}.{self.minor}"

    def older(self, other: "Version") -> bool:
        """Upstream C{Version.Older}: C{self} comes before C{other} (C{latest} never does)."""
        if self.latest:
            return False
        if other.latest:
            return True
        return (self.major, self.minor) < (other.major, other.minor)


#: The version C{latest}.
LATEST = Version(latest=True)


def v1(minor: int) -> Version:
    """C{v1.<minor>} (upstream C{MajorMinorVersion(1, minor)})."""
    return Version(1, minor)


@dataclass(frozen=True)
class LevelVersion:
    """A level at a version (upstream C{api.LevelVersion}), printed C{restricted:latest}."""

    level: str
    version: Version

    def __str__(self) -> str:
        return f"{self.level}:{self.version}"

    def equivalent(self, other: "LevelVersion") -> bool:
        """Both privileged, or the same level and version (upstream C{Equivalent})."""
        return (self.level == LEVEL_PRIVILEGED and other.level == LEVEL_PRIVILEGED) or \
            self == other


@dataclass(frozen=True)
class Policy:
    """The three modes of a namespace's policy (upstream C{api.Policy})."""

    enforce: LevelVersion
    audit: LevelVersion
    warn: LevelVersion

    def equivalent(self, other: "Policy") -> bool:
        """Every mode equivalent (upstream C{Policy.Equivalent})."""
        return self.enforce.equivalent(other.enforce) and \
            self.audit.equivalent(other.audit) and self.warn.equivalent(other.warn)

    def fully_privileged(self) -> bool:
        """All three modes privileged (upstream C{FullyPrivileged})."""
        return self.enforce.level == self.audit.level == self.warn.level == LEVEL_PRIVILEGED


#: The policy when nothing is configured: every mode C{privileged:latest}.
PRIVILEGED_POLICY = Policy(*(LevelVersion(LEVEL_PRIVILEGED, LATEST),) * 3)


def parse_level(level: str) -> str:
    """
    Upstream C{ParseLevel}.

    @raise LevelError: C{must be one of privileged, baseline, restricted}.
    """
    if level in LEVELS:
        return level
    raise LevelError(_LEVEL_ERROR)


def parse_version(version: str) -> Version:
    """
    Upstream C{ParseVersion}: C{latest} or C{v1.N} (no leading zeros).

    @raise LevelError: C{must be "latest" or "v1.x"}.
    """
    if version == "latest":
        return LATEST
    m = _VERSION_RE.fullmatch(version)
    if m is None or int(m.group(1)) > _MAX_INT:
        raise LevelError(_VERSION_ERROR)
    return v1(int(m.group(1)))


def compare_levels(a: str, b: str) -> int:
    """Upstream C{CompareLevels}: C{1} when C{a} is stricter than C{b}, C{-1} when looser,
    C{0} when equal."""
    if a == b:
        return 0
    if a == LEVEL_PRIVILEGED:
        return -1
    if a == LEVEL_RESTRICTED:
        return 1
    if b == LEVEL_PRIVILEGED:
        return 1
    if b == LEVEL_RESTRICTED:
        return -1
    return 0


_LABELS_PATH = field.Path("metadata", "labels")


def policy_to_evaluate(
    labels: Optional[Mapping[str, str]], defaults: Policy,
) -> tuple[Policy, list[field.FieldError]]:
    """
    Upstream C{PolicyToEvaluate}: the policy of a namespace with C{labels}, absent labels
    taking C{defaults}.  A policy is always returned: an enforce level or a version that does
    not parse counts as C{restricted} / C{latest}, an audit or warn level that does not parse
    as C{privileged} (fail open).  Warn follows an explicitly stricter enforce level when no
    warn level is set (and its version, when no warn version is set either).

    @return: the policy and one C{Invalid} field error per bad label
        (C{metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "x": must be one
        of privileged, baseline, restricted}), in upstream's order.
    """
    enforce, audit, warn = defaults.enforce, defaults.audit, defaults.warn
    errs: list[field.FieldError] = []
    if not labels:
        return defaults, errs

    def level_of(label: str, fallback: str) -> tuple[Optional[str], bool]:
        value = labels[label]
        try:
            return parse_level(value), True
        except LevelError as e:
            errs.append(field.invalid(_LABELS_PATH.key(label), value, str(e)))
            return fallback, False

    def version_of(label: str) -> Version:
        value = labels[label]
        try:
            return parse_version(value)
        except LevelError as e:
            errs.append(field.invalid(_LABELS_PATH.key(label), value, str(e)))
            return LATEST

    has_enforce_level = False
    if ENFORCE_LEVEL_LABEL in labels:
        level, has_enforce_level = level_of(ENFORCE_LEVEL_LABEL, LEVEL_RESTRICTED)
        enforce = LevelVersion(level, enforce.version)
    if ENFORCE_VERSION_LABEL in labels:
        enforce = LevelVersion(enforce.level, version_of(ENFORCE_VERSION_LABEL))
    if AUDIT_LEVEL_LABEL in labels:
        level, _ = level_of(AUDIT_LEVEL_LABEL, LEVEL_PRIVILEGED)
        audit = LevelVersion(level, audit.version)
    if AUDIT_VERSION_LABEL in labels:
        audit = LevelVersion(audit.level, version_of(AUDIT_VERSION_LABEL))
    has_warn_level = WARN_LEVEL_LABEL in labels
    if has_warn_level:
        level, _ = level_of(WARN_LEVEL_LABEL, LEVEL_PRIVILEGED)
        warn = LevelVersion(level, warn.version)
    has_warn_version = WARN_VERSION_LABEL in labels
    if has_warn_version:
        warn = LevelVersion(warn.level, version_of(WARN_VERSION_LABEL))
    if not has_warn_level and has_enforce_level and \
            compare_levels(enforce.level, warn.level) > 0:
        warn = LevelVersion(enforce.level,
                            warn.version if has_warn_version else enforce.version)
    return Policy(enforce, audit, warn), errs
