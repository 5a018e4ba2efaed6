# -*- test-case-name: tests.apimachinery.test_validation -*-
"""
Name, label, annotation and ObjectMeta validation.

Mirrors upstream C{k8s.io/apimachinery/pkg/util/validation} (the C{Is*} string checks, which
return a list of human messages), C{k8s.io/apimachinery/pkg/api/validation} (ObjectMeta,
names, owner references, finalizers) and C{k8s.io/apimachinery/pkg/apis/meta/v1/validation}
(labels, label selectors, managed fields, request options), at the v1.32 wording.

Strings are measured in UTF-8 bytes, as Go's C{len} does.  Where upstream walks a Go map
(labels, annotations) the order is random; here keys are visited in sorted order so that the
error list is deterministic.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Callable

from kubetwist.runtime.field import (
    FieldError,
    Path,
    forbidden,
    go_string_slice,
    invalid,
    not_supported,
    required,
    too_long,
)

__all__ = [
    "is_qualified_name",
    "is_valid_label_value",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_dns1123_subdomain_with_underscore",
    "is_dns1035_label",
    "is_wildcard_dns1123_subdomain",
    "is_c_identifier",
    "is_valid_port_num",
    "is_in_range",
    "is_valid_group_id",
    "is_valid_user_id",
    "is_valid_port_name",
    "is_valid_ip",
    "is_valid_ipv4_address",
    "is_valid_ipv6_address",
    "is_valid_cidr",
    "validate_ip",
    "validate_cidr",
    "is_valid_percent",
    "is_http_header_name",
    "is_env_var_name",
    "is_relaxed_env_var_name",
    "is_config_map_key",
    "is_fully_qualified_name",
    "is_fully_qualified_domain_name",
    "is_domain_prefixed_path",
    "max_len_error",
    "regex_error",
    "empty_error",
    "inclusive_range_error",
    "name_is_dns_subdomain",
    "name_is_dns_label",
    "name_is_dns1035_label",
    "validate_namespace_name",
    "validate_service_account_name",
    "validate_nonnegative",
    "validate_immutable_field",
    "validate_labels",
    "validate_label_name",
    "validate_annotations",
    "validate_owner_references",
    "validate_finalizers",
    "validate_finalizer_name",
    "validate_no_new_finalizers",
    "validate_managed_fields",
    "validate_field_manager",
    "validate_object_meta",
    "validate_object_meta_update",
    "validate_label_selector",
    "validate_label_selector_requirement",
    "validate_dry_run",
    "validate_field_validation",
    "validate_delete_options",
    "validate_create_options",
    "validate_update_options",
    "validate_patch_options",
    "validate_conditions",
    "FIELD_IMMUTABLE_ERROR_MSG",
    "IS_NEGATIVE_ERROR_MSG",
    "TOTAL_ANNOTATION_SIZE_LIMIT_B",
]

#: A C{ValidateNameFunc}: C{(name, prefix) -> list of messages}.
NameFunc = Callable[[str, bool], "list[str]"]

#: Upstream C{FieldImmutableErrorMsg}.
FIELD_IMMUTABLE_ERROR_MSG = "field is immutable"
#: Upstream C{IsNegativeErrorMsg}.
IS_NEGATIVE_ERROR_MSG = "must be greater than or equal to 0"
#: Upstream C{TotalAnnotationSizeLimitB} (256 KiB).
TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * (1 << 10)

LABEL_VALUE_MAX_LENGTH = 63
DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1035_LABEL_MAX_LENGTH = 63
QUALIFIED_NAME_MAX_LENGTH = 63
FIELD_MANAGER_MAX_LENGTH = 128
MAX_SUBRESOURCE_NAME_LENGTH = 256


def _blen(value: str) -> int:
    """Go's C{len(string)}: the UTF-8 byte length."""
    return len(value.encode("utf-8", "surrogatepass"))


# --------------------------------------------------------------------------------------------
# message helpers (upstream MaxLenError, RegexError, EmptyError, InclusiveRangeError)


def max_len_error(length: int) -> str:
    """C{must be no more than 63 characters}."""
    return f"must be no more than {length} characters"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """
    Upstream's regex error text: C{msg}, then the quoted examples after C{(e.g. } (joined by a
    comma, with two spaces before C{or}), then C{regex used for validation is '<fmt>')}.
    """
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    # Upstream writes each example as "'x', " and puts " or " between them, which yields
    # "(e.g. 'a',  or 'b', regex ...)" with a double space; clients see exactly that.
    ex = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {ex}regex used for validation is '{fmt}')"


def empty_error() -> str:
    """C{must be non-empty}."""
    return "must be non-empty"


def inclusive_range_error(lo: int, hi: int) -> str:
    """C{must be between 1 and 65535, inclusive}."""
    return f"must be between {lo} and {hi}, inclusive"


def _match(regex: re.Pattern, value: str) -> bool:
    return regex.fullmatch(value) is not None


# --------------------------------------------------------------------------------------------
# string checks (k8s.io/apimachinery/pkg/util/validation)

_QNAME_CHAR_FMT = "[A-Za-z0-9]"
_QNAME_EXT_CHAR_FMT = "[-A-Za-z0-9_.]"
_QUALIFIED_NAME_FMT = "(" + _QNAME_CHAR_FMT + _QNAME_EXT_CHAR_FMT + "*)?" + _QNAME_CHAR_FMT
_QUALIFIED_NAME_ERR_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_qualified_name_re = re.compile(_QUALIFIED_NAME_FMT)

_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"
_LABEL_VALUE_ERR_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character"
)
_label_value_re = re.compile(_LABEL_VALUE_FMT)

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_FMT_US = "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_ERR_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character"
)
_dns1123_label_re = re.compile(_DNS1123_LABEL_FMT)

_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_ERR_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT_US = _DNS1123_LABEL_FMT_US + "(\\." + _DNS1123_LABEL_FMT_US + ")*"
_DNS1123_SUBDOMAIN_ERR_MSG_FG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' "
    "or '.', and must start and end with an alphanumeric character"
)
_dns1123_subdomain_re = re.compile(_DNS1123_SUBDOMAIN_FMT)
_dns1123_subdomain_us_re = re.compile(_DNS1123_SUBDOMAIN_FMT_US)

_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_ERR_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)
_dns1035_label_re = re.compile(_DNS1035_LABEL_FMT)

_WILDCARD_FMT = "\\*\\." + _DNS1123_SUBDOMAIN_FMT
_WILDCARD_ERR_MSG = (
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which "
    "must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric "
    "character"
)
_wildcard_re = re.compile(_WILDCARD_FMT)

_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_IDENTIFIER_ERR_MSG = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_'"
)
_c_identifier_re = re.compile(_C_IDENTIFIER_FMT)

_PERCENT_FMT = "[0-9]+%"
_PERCENT_ERR_MSG = "a valid percent string must be a numeric string followed by an ending '%'"
_percent_re = re.compile(_PERCENT_FMT)

_HTTP_HEADER_NAME_FMT = "[-A-Za-z0-9]+"
_HTTP_HEADER_NAME_ERR_MSG = "a valid HTTP header must consist of alphanumeric characters or '-'"
_http_header_name_re = re.compile(_HTTP_HEADER_NAME_FMT)

_ENV_VAR_NAME_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"
_ENV_VAR_NAME_ERR_MSG = (
    "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', "
    "or '.', and must not start with a digit"
)
_RELAXED_ENV_VAR_NAME_ERR_MSG = (
    "a valid environment variable name must consist only of printable ASCII characters other "
    "than '='"
)
_env_var_name_re = re.compile(_ENV_VAR_NAME_FMT)

_CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_MAP_KEY_ERR_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' "
                           "or "
                           "'.'")
_config_map_key_re = re.compile(_CONFIG_MAP_KEY_FMT)

_HTTP_PATH_FMT = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_http_path_re = re.compile(_HTTP_PATH_FMT)

_port_name_charset_re = re.compile("[-a-z0-9]+")
_port_name_one_letter_re = re.compile("[a-z]")


def is_qualified_name(value: str) -> list[str]:
    """
    Upstream C{IsQualifiedName}: C{[prefix/]name}, prefix a DNS-1123 subdomain, name at most 63
    characters of C{[-A-Za-z0-9_.]} starting and ending alphanumeric.

    @return: messages; empty when valid.
    """
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return errs + [
            "a qualified name "
            + regex_error(_QUALIFIED_NAME_ERR_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name",
                          "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + empty_error())
    elif _blen(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _match(_qualified_name_re, name):
        errs.append(
            "name part "
            + regex_error(_QUALIFIED_NAME_ERR_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name",
                          "123-abc")
        )
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """Upstream C{IsValidLabelValue}: empty, or a qualified-name-shaped string of <= 63 chars."""
    errs: list[str] = []
    if _blen(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _match(_label_value_re, value):
        errs.append(regex_error(_LABEL_VALUE_ERR_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value",
                                "12345"))
    return errs


def is_dns1123_label(value: str) -> list[str]:
    """Upstream C{IsDNS1123Label}; a valid subdomain with dots gets C{must not contain dots}."""
    errs: list[str] = []
    if _blen(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _match(_dns1123_label_re, value):
        if _match(_dns1123_subdomain_re, value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_ERR_MSG, _DNS1123_LABEL_FMT, "my-name",
                                    "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """Upstream C{IsDNS1123Subdomain} (at most 253 characters)."""
    errs: list[str] = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _match(_dns1123_subdomain_re, value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_ERR_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1123_subdomain_with_underscore(value: str) -> list[str]:
    """Upstream C{IsDNS1123SubdomainWithUnderscore} (its message quotes the plain regex)."""
    errs: list[str] = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _match(_dns1123_subdomain_us_re, value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_ERR_MSG_FG, _DNS1123_SUBDOMAIN_FMT,
                                "example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    """Upstream C{IsDNS1035Label}."""
    errs: list[str] = []
    if _blen(value) > DNS1035_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if not _match(_dns1035_label_re, value):
        errs.append(regex_error(_DNS1035_LABEL_ERR_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    """Upstream C{IsWildcardDNS1123Subdomain} (C{*.example.com})."""
    errs: list[str] = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _match(_wildcard_re, value):
        errs.append(regex_error(_WILDCARD_ERR_MSG, _WILDCARD_FMT, "*.example.com"))
    return errs


def is_c_identifier(value: str) -> list[str]:
    """Upstream C{IsCIdentifier} (format only, no length limit)."""
    if not _match(_c_identifier_re, value):
        return [regex_error(_IDENTIFIER_ERR_MSG, _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName")]
    return []


def is_valid_port_num(port: int) -> list[str]:
    """Upstream C{IsValidPortNum}: 1..65535."""
    if 1 <= port <= 65535:
        return []
    return [inclusive_range_error(1, 65535)]


def is_in_range(value: int, lo: int, hi: int) -> list[str]:
    """Upstream C{IsInRange} (inclusive)."""
    if lo <= value <= hi:
        return []
    return [inclusive_range_error(lo, hi)]


def is_valid_group_id(gid: int) -> list[str]:
    """Upstream C{IsValidGroupID}: 0..2147483647."""
    return is_in_range(gid, 0, 2**31 - 1)


def is_valid_user_id(uid: int) -> list[str]:
    """Upstream C{IsValidUserID}: 0..2147483647."""
    return is_in_range(uid, 0, 2**31 - 1)


def is_valid_port_name(port: str) -> list[str]:
    """
    Upstream C{IsValidPortName} (IANA_SVC_NAME): at most 15 characters of C{[-a-z0-9]}, at
    least one letter, no C{--}, no leading or trailing C{-}.
    """
    errs: list[str] = []
    if _blen(port) > 15:
        errs.append(max_len_error(15))
    if not _match(_port_name_charset_re, port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _port_name_one_letter_re.search(port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


_sloppy_v4_re = re.compile(r"([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})")


def _parse_ip_sloppy(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """
    C{k8s.io/utils/net.ParseIPSloppy}: Go's C{net.ParseIP} that also accepts IPv4 octets with
    leading zeros (read as decimal).  No zones, no brackets.
    """
    m = _sloppy_v4_re.fullmatch(value)
    if m:
        octets = [int(g) for g in m.groups()]
        if all(o <= 255 for o in octets):
            return ipaddress.IPv4Address(".".join(str(o) for o in octets))
        return None
    if ":" not in value or "%" in value or not value.isascii():
        return None
    try:
        return ipaddress.IPv6Address(value)
    except ValueError:
        return None


def _is_v4(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Go's C{ip.To4() != nil}: IPv4, or IPv4-mapped IPv6."""
    if isinstance(ip, ipaddress.IPv4Address):
        return True
    return ip.ipv4_mapped is not None


def is_valid_ip(value: str) -> list[str]:
    """Message form of upstream C{IsValidIP} (see L{validate_ip} for the field-error form)."""
    if _parse_ip_sloppy(value) is None:
        return ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]
    return []


def is_valid_ipv4_address(value: str) -> list[str]:
    """Message form of upstream C{IsValidIPv4Address}."""
    ip = _parse_ip_sloppy(value)
    if ip is None or not _is_v4(ip):
        return ["must be a valid IPv4 address"]
    return []


def is_valid_ipv6_address(value: str) -> list[str]:
    """Message form of upstream C{IsValidIPv6Address}."""
    ip = _parse_ip_sloppy(value)
    if ip is None or _is_v4(ip):
        return ["must be a valid IPv6 address"]
    return []


def is_valid_cidr(value: str) -> list[str]:
    """Message form of upstream C{IsValidCIDR} (host bits may be set, as C{ParseCIDR} allows)."""
    msg = ["must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"]
    addr, sep, bits = value.partition("/")
    if not sep or not bits.isdigit() or not bits.isascii() or len(bits) > 3:
        return msg
    ip = _parse_ip_sloppy(addr)
    if ip is None:
        return msg
    limit = 32 if isinstance(ip, ipaddress.IPv4Address) else 128
    if int(bits) > limit:
        return msg
    return []


def validate_ip(path: Path | str, value: str) -> list[FieldError]:
    """Upstream C{IsValidIP(fldPath, value)}: one C{Invalid} error or none."""
    return [invalid(path, value, m) for m in is_valid_ip(value)]


def validate_cidr(path: Path | str, value: str) -> list[FieldError]:
    """Upstream C{IsValidCIDR(fldPath, value)}: one C{Invalid} error or none."""
    return [invalid(path, value, m) for m in is_valid_cidr(value)]


def is_valid_percent(percent: str) -> list[str]:
    """Upstream C{IsValidPercent} (C{93%})."""
    if not _match(_percent_re, percent):
        return [regex_error(_PERCENT_ERR_MSG, _PERCENT_FMT, "1%", "93%")]
    return []


def is_http_header_name(value: str) -> list[str]:
    """Upstream C{IsHTTPHeaderName}."""
    if not _match(_http_header_name_re, value):
        return [regex_error(_HTTP_HEADER_NAME_ERR_MSG, _HTTP_HEADER_NAME_FMT, "X-Header-Name")]
    return []


def _has_chdir_prefix(value: str) -> list[str]:
    if value == ".":
        return ["must not be '.'"]
    if value == "..":
        return ["must not be '..'"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []


def is_env_var_name(value: str) -> list[str]:
    """Upstream C{IsEnvVarName}."""
    errs: list[str] = []
    if not _match(_env_var_name_re, value):
        errs.append(
            regex_error(_ENV_VAR_NAME_ERR_MSG, _ENV_VAR_NAME_FMT, "my.env-name", "MY_ENV.NAME",
                        "MyEnvName1")
        )
    return errs + _has_chdir_prefix(value)


def is_relaxed_env_var_name(value: str) -> list[str]:
    """Upstream C{IsRelaxedEnvVarName}: printable ASCII other than C{=}."""
    errs: list[str] = []
    if not value:
        errs.append("environment variable name " + empty_error())
    for ch in value:
        if ord(ch) > 127 or not ch.isprintable() or ch == "=":
            errs.append(_RELAXED_ENV_VAR_NAME_ERR_MSG)
            break
    return errs


def is_config_map_key(value: str) -> list[str]:
    """Upstream C{IsConfigMapKey} (ConfigMap and Secret data keys)."""
    errs: list[str] = []
    if _blen(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _match(_config_map_key_re, value):
        errs.append(
            regex_error(_CONFIG_MAP_KEY_ERR_MSG, _CONFIG_MAP_KEY_FMT, "key.name", "KEY_NAME",
                        "key-name")
        )
    return errs + _has_chdir_prefix(value)


def is_fully_qualified_name(path: Path | str, name: str) -> list[FieldError]:
    """Upstream C{IsFullyQualifiedName}: a subdomain with at least three segments."""
    if not name:
        return [required(path)]
    errs = is_dns1123_subdomain(name)
    if errs:
        return [invalid(path, name, ",".join(errs))]
    if len(name.split(".")) < 3:
        return [invalid(path, name, "should be a domain with at least three segments separated by "
                                    "dots")]
    return []


def is_fully_qualified_domain_name(path: Path | str, name: str) -> list[FieldError]:
    """Upstream C{IsFullyQualifiedDomainName}: at least two segments, trailing C{.} allowed."""
    if not name:
        return [required(path)]
    if name.endswith("."):
        name = name[:-1]
    errs = is_dns1123_subdomain(name)
    if errs:
        return [invalid(path, name, ",".join(errs))]
    if len(name.split(".")) < 2:
        return [invalid(path, name, "should be a domain with at least two segments separated by "
                                    "dots")]
    for label in name.split("."):
        errs = is_dns1123_label(label)
        if errs:
            return [invalid(path, label, ",".join(errs))]
    return []


def is_domain_prefixed_path(path: Path | str, dp_path: str) -> list[FieldError]:
    """Upstream C{IsDomainPrefixedPath} (C{acme.io/foo})."""
    if not dp_path:
        return [required(path)]
    segments = dp_path.split("/", 1)
    if len(segments) != 2 or not segments[0] or not segments[1]:
        return [invalid(path, dp_path, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    host, rest = segments
    errs = [invalid(path, host, m) for m in is_dns1123_subdomain(host)]
    if not _match(_http_path_re, rest):
        return errs + [invalid(path, rest, regex_error("Invalid path", _HTTP_PATH_FMT))]
    return errs


# --------------------------------------------------------------------------------------------
# name functions (k8s.io/apimachinery/pkg/api/validation/generic.go)


def _mask_trailing_dash(name: str) -> str:
    """
    Upstream C{maskTrailingDash}.  Faithfully reproduces upstream: when the name is longer than
    one character and ends in C{-}, the last I{two} characters are replaced by C{a}.
    """
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """Upstream C{NameIsDNSSubdomain}; C{prefix} is true for C{generateName}."""
    if prefix:
        name = _mask_trailing_dash(name)
    return is_dns1123_subdomain(name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    """Upstream C{NameIsDNSLabel}."""
    if prefix:
        name = _mask_trailing_dash(name)
    return is_dns1123_label(name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    """Upstream C{NameIsDNS1035Label}."""
    if prefix:
        name = _mask_trailing_dash(name)
    return is_dns1035_label(name)


#: Upstream C{ValidateNamespaceName}.
validate_namespace_name = name_is_dns_label
#: Upstream C{ValidateServiceAccountName}.
validate_service_account_name = name_is_dns_subdomain


def validate_nonnegative(value: int, path: Path | str) -> list[FieldError]:
    """Upstream C{ValidateNonnegativeField}: C{Invalid value: -1: must be greater than or equal
    to 0}."""
    if value < 0:
        return [invalid(path, value, IS_NEGATIVE_ERROR_MSG)]
    return []


# --------------------------------------------------------------------------------------------
# immutability, with upstream's printing of metav1.Time values


class _StringerError(FieldError):
    """A field error whose bad value is a Go C{fmt.Stringer} (printed unquoted)."""

    def body(self) -> str:
        text = f"Invalid value: {self.bad_value}"
        if self.detail:
            text = f"{text}: {self.detail}"
        return text


_RFC3339_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
)


def _go_time_string(ts: str) -> str | None:
    """
    Go's C{time.Time.String()} of an RFC 3339 C{metav1.Time}, in UTC:
    C{2024-01-02 03:04:05 +0000 UTC}.  None if C{ts} does not parse.
    """
    import datetime

    m = _RFC3339_RE.fullmatch(ts)
    if not m:
        return None
    try:
        t = datetime.datetime.fromisoformat(
            ts.replace("z", "Z").replace("Z", "+00:00").replace("t", "T"))
    except ValueError:
        return None
    t = t.astimezone(datetime.timezone.utc)
    frac = ""
    if m.group(7):
        digits = m.group(7)[1:10].rstrip("0")
        if digits:
            frac = "." + digits
    return t.strftime("%Y-%m-%d %H:%M:%S") + frac + " +0000 UTC"


def validate_immutable_field(new: Any, old: Any, path: Path | str) -> list[FieldError]:
    """
    Upstream C{ValidateImmutableField}: C{Invalid value: <new>: field is immutable} when the
    values differ (C{None} and absent are the same).
    """
    if new == old:
        return []
    return [invalid(path, new, FIELD_IMMUTABLE_ERROR_MSG)]


def _immutable_time(new: str | None, old: str | None, path: Path) -> list[FieldError]:
    if new == old:
        return []
    if new is None:
        # upstream: a zero metav1.Time prints as "0001-01-01 00:00:00 +0000 UTC"
        return [_StringerError("Invalid", path, "0001-01-01 00:00:00 +0000 UTC",
                               FIELD_IMMUTABLE_ERROR_MSG)]
    printed = _go_time_string(new)
    if printed is None:
        return [invalid(path, new, FIELD_IMMUTABLE_ERROR_MSG)]
    return [_StringerError("Invalid", path, printed, FIELD_IMMUTABLE_ERROR_MSG)]


# --------------------------------------------------------------------------------------------
# labels, annotations, owner references, finalizers, managed fields


def validate_label_name(name: str, path: Path | str) -> list[FieldError]:
    """Upstream C{ValidateLabelName}: one C{Invalid} per qualified-name message."""
    return [invalid(path, name, m) for m in is_qualified_name(name)]


def validate_labels(labels: dict | None, path: Path | str) -> list[FieldError]:
    """
    Upstream C{v1validation.ValidateLabels}: keys are qualified names, values label values.
    Both kinds of error are reported at C{path} itself (C{metadata.labels}).
    """
    errs: list[FieldError] = []
    for k in sorted(labels or {}):
        v = labels[k]
        errs.extend(validate_label_name(k, path))
        if not isinstance(v, str):
            continue
        errs.extend(invalid(path, v, m) for m in is_valid_label_value(v))
    return errs


def validate_annotations(annotations: dict | None, path: Path | str) -> list[FieldError]:
    """
    Upstream C{ValidateAnnotations}: keys are qualified names (case-insensitively); the keys and
    values together may hold at most 256 KiB (C{Too long: may not be more than 262144 bytes}).
    """
    errs: list[FieldError] = []
    total = 0
    for k in sorted(annotations or {}):
        errs.extend(invalid(path, k, m) for m in is_qualified_name(k.lower()))
        v = annotations[k]
        total += _blen(k) + (_blen(v) if isinstance(v, str) else 0)
    if total > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        errs.append(too_long(path, "", TOTAL_ANNOTATION_SIZE_LIMIT_B))
    return errs


def _split_api_version(api_version: str) -> tuple[str, str]:
    """C{schema.ParseGroupVersion} as used by C{FromAPIVersionAndKind}: (group, version)."""
    if not api_version:
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", api_version
    if len(parts) == 2:
        return parts[0], parts[1]
    return "", ""


def _validate_owner_reference(ref: dict, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    api_version = ref.get("apiVersion") or ""
    group, version = _split_api_version(api_version)
    kind = ref.get("kind") or ""
    if not version:
        errs.append(invalid(path.child("apiVersion"), api_version, "version must not be empty"))
    if not kind:
        errs.append(invalid(path.child("kind"), kind, "kind must not be empty"))
    if not ref.get("name"):
        errs.append(invalid(path.child("name"), ref.get("name") or "", "name must not be empty"))
    if not ref.get("uid"):
        errs.append(invalid(path.child("uid"), ref.get("uid") or "", "uid must not be empty"))
    if group == "" and version == "v1" and kind == "Event":
        errs.append(invalid(path, ref, "/v1, Kind=Event is disallowed from being an owner"))
    return errs


def validate_owner_references(refs: list | None, path: Path) -> list[FieldError]:
    """
    Upstream C{ValidateOwnerReferences}: apiVersion/kind/name/uid present, core Events banned,
    at most one C{controller: true} (errors reported at C{path} itself, as upstream).
    """
    errs: list[FieldError] = []
    first_controller = ""
    for ref in refs or []:
        if not isinstance(ref, dict):
            continue
        errs.extend(_validate_owner_reference(ref, path))
        if ref.get("controller") is True:
            current = f"{ref.get('kind') or ''}/{ref.get('name') or ''}"
            if first_controller:
                errs.append(invalid(
                    path, refs,
                    "Only one reference can have Controller set to true. Found \"true\" in "
                    f"references for {first_controller} and {current}",
                ))
            else:
                first_controller = current
    return errs


def validate_finalizer_name(name: str, path: Path | str) -> list[FieldError]:
    """Upstream C{ValidateFinalizerName}: a qualified name."""
    return [invalid(path, name, m) for m in is_qualified_name(name)]


def validate_finalizers(finalizers: list | None, path: Path | str) -> list[FieldError]:
    """Upstream C{ValidateFinalizers}: names valid, not both C{orphan} and C{foregroundDeletion}."""
    errs: list[FieldError] = []
    finalizers = finalizers or []
    for f in finalizers:
        errs.extend(validate_finalizer_name(f, path))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(invalid(path, finalizers, "finalizer orphan and foregroundDeletion cannot be "
                                              "both set"))
    return errs


def validate_no_new_finalizers(new: list | None, old: list | None, path: Path
                               | str) -> list[FieldError]:
    """Upstream C{ValidateNoNewFinalizers} (object already being deleted)."""
    extra = sorted(set(new or []) - set(old or []))
    if extra:
        return [forbidden(
            path,
            "no new finalizers can be added if the object is being deleted, found new finalizers "
            + go_string_slice(extra),
        )]
    return []


def validate_field_manager(manager: str, path: Path | str) -> list[FieldError]:
    """Upstream C{ValidateFieldManager}: at most 128 bytes, printable characters only."""
    errs: list[FieldError] = []
    if _blen(manager) > FIELD_MANAGER_MAX_LENGTH:
        errs.append(too_long(path, "", FIELD_MANAGER_MAX_LENGTH))
    pos = 0
    for ch in manager:
        if not ch.isprintable() and ch != " ":
            errs.append(invalid(path, manager, f"invalid character U+{ord(ch):04X} (at position "
                                               f"{pos})"))
        pos += _blen(ch)
    return errs


def validate_managed_fields(entries: list | None, path: Path) -> list[FieldError]:
    """Upstream C{ValidateManagedFields}: operation, fieldsType, manager, subresource length."""
    errs: list[FieldError] = []
    for i, entry in enumerate(entries or []):
        if not isinstance(entry, dict):
            continue
        p = path.index(i)
        op = entry.get("operation") or ""
        if op not in ("Apply", "Update"):
            errs.append(invalid(p.child("operation"), op, "must be `Apply` or `Update`"))
        ft = entry.get("fieldsType") or ""
        if ft and ft != "FieldsV1":
            errs.append(invalid(p.child("fieldsType"), ft, "must be `FieldsV1`"))
        errs.extend(validate_field_manager(entry.get("manager") or "", p.child("manager")))
        if _blen(entry.get("subresource") or "") > MAX_SUBRESOURCE_NAME_LENGTH:
            errs.append(too_long(p.child("subresource"), "", MAX_SUBRESOURCE_NAME_LENGTH))
    return errs


# --------------------------------------------------------------------------------------------
# ObjectMeta


def validate_object_meta(
    meta: dict, namespaced: bool, name_fn: NameFunc, path: Path
) -> list[FieldError]:
    """
    Upstream C{ValidateObjectMetaAccessor}, on create (after name generation).

    @param meta: the C{metadata} dict of the object.
    @param namespaced: the resource is namespace-scoped (namespace required) or not
        (namespace forbidden: C{not allowed on this type}).
    @param name_fn: a C{ValidateNameFunc} such as L{name_is_dns_subdomain}.
    @param path: usually C{Path("metadata")}.
    @return: field errors in upstream order.
    """
    errs: list[FieldError] = []
    generate_name = meta.get("generateName") or ""
    name = meta.get("name") or ""
    namespace = meta.get("namespace") or ""
    if generate_name:
        errs.extend(invalid(path.child("generateName"), generate_name, m)
                    for m in name_fn(generate_name, True))
    if not name:
        errs.append(required(path.child("name"), "name or generateName is required"))
    else:
        errs.extend(invalid(path.child("name"), name, m) for m in name_fn(name, False))
    if namespaced:
        if not namespace:
            errs.append(required(path.child("namespace")))
        else:
            errs.extend(
                invalid(path.child("namespace"), namespace, m)
                for m in validate_namespace_name(namespace, False)
            )
    elif namespace:
        errs.append(forbidden(path.child("namespace"), "not allowed on this type"))
    errs.extend(validate_nonnegative(meta.get("generation") or 0, path.child("generation")))
    errs.extend(validate_labels(meta.get("labels"), path.child("labels")))
    errs.extend(validate_annotations(meta.get("annotations"), path.child("annotations")))
    errs.extend(validate_owner_references(meta.get("ownerReferences"),
                                          path.child("ownerReferences")))
    errs.extend(validate_finalizers(meta.get("finalizers"), path.child("finalizers")))
    errs.extend(validate_managed_fields(meta.get("managedFields"), path.child("managedFields")))
    return errs


def validate_object_meta_update(new_meta: dict, old_meta: dict, path: Path) -> list[FieldError]:
    """
    Upstream C{ValidateObjectMetaAccessorUpdate}: no new finalizers while deleting,
    resourceVersion present, generation not decremented, name/namespace/uid/creationTimestamp/
    deletionTimestamp/deletionGracePeriodSeconds immutable, then labels, annotations, owner
    references and managed fields as on create.
    """
    errs: list[FieldError] = []
    if old_meta.get("deletionTimestamp") is not None:
        errs.extend(validate_no_new_finalizers(
            new_meta.get("finalizers"), old_meta.get("finalizers"), path.child("finalizers")
        ))
    rv = new_meta.get("resourceVersion") or ""
    if not rv:
        errs.append(invalid(path.child("resourceVersion"), rv, "must be specified for an update"))
    new_gen = new_meta.get("generation") or 0
    if new_gen < (old_meta.get("generation") or 0):
        errs.append(invalid(path.child("generation"), new_gen, "must not be decremented"))
    for key in ("name", "namespace", "uid"):
        errs.extend(validate_immutable_field(
            new_meta.get(key) or "", old_meta.get(key) or "", path.child(key)
        ))
    errs.extend(_immutable_time(
        new_meta.get("creationTimestamp"), old_meta.get("creationTimestamp"),
        path.child("creationTimestamp"),
    ))
    new_dt, old_dt = new_meta.get("deletionTimestamp"), old_meta.get("deletionTimestamp")
    if new_dt != old_dt:
        if new_dt is None:
            errs.append(invalid(path.child("deletionTimestamp"), None, FIELD_IMMUTABLE_ERROR_MSG))
        else:
            errs.extend(_immutable_time(new_dt, old_dt, path.child("deletionTimestamp")))
    errs.extend(validate_immutable_field(
        new_meta.get("deletionGracePeriodSeconds"), old_meta.get("deletionGracePeriodSeconds"),
        path.child("deletionGracePeriodSeconds"),
    ))
    errs.extend(validate_labels(new_meta.get("labels"), path.child("labels")))
    errs.extend(validate_annotations(new_meta.get("annotations"), path.child("annotations")))
    errs.extend(validate_owner_references(new_meta.get("ownerReferences"),
                                          path.child("ownerReferences")))
    errs.extend(validate_managed_fields(new_meta.get("managedFields"), path.child("managedFields")))
    return errs


# --------------------------------------------------------------------------------------------
# metav1.LabelSelector


def validate_label_selector_requirement(
    req: dict,
    path: Path,
    allow_invalid_label_value: bool = False,
    allow_unknown_operator: bool = False,
) -> list[FieldError]:
    """
    Upstream C{ValidateLabelSelectorRequirement}.

    @param req: C{{"key": str, "operator": "In"|"NotIn"|"Exists"|"DoesNotExist", "values": [str]}}.
    """
    errs: list[FieldError] = []
    op = req.get("operator") or ""
    values = req.get("values") or []
    if op in ("In", "NotIn"):
        if not values:
            errs.append(required(path.child("values"),
                                 "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(forbidden(
                path.child("values"), "may not be specified when `operator` is 'Exists' or "
                                      "'DoesNotExist'"
            ))
    elif not allow_unknown_operator:
        errs.append(invalid(path.child("operator"), op, "not a valid selector operator"))
    errs.extend(validate_label_name(req.get("key") or "", path.child("key")))
    if not allow_invalid_label_value:
        for i, v in enumerate(values):
            errs.extend(invalid(path.child("values").index(i), v, m)
                        for m in is_valid_label_value(v))
    return errs


def validate_label_selector(
    selector: dict | None,
    path: Path,
    allow_invalid_label_value: bool = False,
    allow_unknown_operator: bool = False,
) -> list[FieldError]:
    """
    Upstream C{v1validation.ValidateLabelSelector}.

    @param selector: C{{"matchLabels": {str: str}, "matchExpressions": [requirement]}} or None
        (valid).
    """
    if selector is None:
        return []
    errs = validate_labels(selector.get("matchLabels"), path.child("matchLabels"))
    for i, expr in enumerate(selector.get("matchExpressions") or []):
        errs.extend(validate_label_selector_requirement(
            expr, path.child("matchExpressions").index(i),
            allow_invalid_label_value, allow_unknown_operator,
        ))
    return errs


# --------------------------------------------------------------------------------------------
# request options (meta/v1/validation)


def validate_dry_run(path: Path | str, dry_run: list | None) -> list[FieldError]:
    """Upstream C{ValidateDryRun}: only C{All} is allowed."""
    dry_run = dry_run or []
    if any(v != "All" for v in dry_run):
        return [not_supported(path, dry_run, ["All"])]
    return []


def validate_field_validation(path: Path | str, value: str) -> list[FieldError]:
    """Upstream C{ValidateFieldValidation}: C{"", Ignore, Strict, Warn}."""
    allowed = ["", "Ignore", "Strict", "Warn"]
    if value not in allowed:
        return [not_supported(path, value, allowed)]
    return []


def validate_delete_options(options: dict) -> list[FieldError]:
    """
    Upstream C{ValidateDeleteOptions} over a C{DeleteOptions} dict.

    The NotSupported error lists C{"Foreground", "Background", "Orphan", "nil"} as upstream.
    """
    errs: list[FieldError] = []
    policy = options.get("propagationPolicy")
    if options.get("orphanDependents") is not None and policy is not None:
        errs.append(invalid(Path("propagationPolicy"), policy,
                            "orphanDependents and deletionPropagation cannot be both set"))
    if policy is not None and policy not in ("Foreground", "Background", "Orphan"):
        errs.append(not_supported(Path("propagationPolicy"), policy,
                                  ["Foreground", "Background", "Orphan", "nil"]))
    errs.extend(validate_dry_run(Path("dryRun"), options.get("dryRun")))
    if options.get("ignoreStoreReadErrorWithClusterBreakingPotential"):
        p = Path("ignoreStoreReadErrorWithClusterBreakingPotential")
        for key, label in (
            ("dryRun", ".dryRun"),
            ("propagationPolicy", ".propagationPolicy"),
            ("orphanDependents", ".orphanDependents"),
            ("gracePeriodSeconds", ".gracePeriodSeconds"),
            ("preconditions", ".preconditions"),
        ):
            v = options.get(key)
            if (key == "dryRun" and v) or (key != "dryRun" and v is not None):
                errs.append(invalid(p, True, f"cannot be set together with {label}"))
    return errs


def validate_create_options(options: dict) -> list[FieldError]:
    """Upstream C{ValidateCreateOptions} over C{{fieldManager, dryRun, fieldValidation}}."""
    return (
        validate_field_manager(options.get("fieldManager") or "", Path("fieldManager"))
        + validate_dry_run(Path("dryRun"), options.get("dryRun"))
        + validate_field_validation(Path("fieldValidation"), options.get("fieldValidation") or "")
    )


#: Upstream C{ValidateUpdateOptions} (same checks as create).
validate_update_options = validate_create_options


def validate_patch_options(options: dict, patch_type: str) -> list[FieldError]:
    """
    Upstream C{ValidatePatchOptions}; C{patch_type} is the request content type
    (C{application/apply-patch+yaml} requires C{fieldManager}; others forbid C{force}).
    """
    errs: list[FieldError] = []
    if patch_type in ("application/apply-patch+yaml", "application/apply-patch+cbor"):
        if not options.get("fieldManager"):
            errs.append(required(Path("fieldManager"), "is required for apply patch"))
    elif options.get("force") is not None:
        errs.append(forbidden(Path("force"), "may not be specified for non-apply patch"))
    return errs + validate_create_options(options)


_CONDITION_REASON_FMT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_CONDITION_REASON_ERR_MSG = (
    "a condition reason must start with alphabetic character, optionally followed by a string of "
    "alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'"
)
_condition_reason_re = re.compile(_CONDITION_REASON_FMT)


def validate_conditions(conditions: list | None, path: Path) -> list[FieldError]:
    """Upstream C{v1validation.ValidateConditions} over C{metav1.Condition} dicts."""
    from kubetwist.runtime.field import duplicate

    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, c in enumerate(conditions or []):
        p = path.index(i)
        ctype = c.get("type") or ""
        if ctype in seen:
            errs.append(duplicate(p.child("type"), ctype))
        else:
            seen.add(ctype)
        errs.extend(validate_label_name(ctype, p.child("type")))
        status = c.get("status") or ""
        if status not in ("False", "True", "Unknown"):
            errs.append(not_supported(p.child("status"), status, ["False", "True", "Unknown"]))
        og = c.get("observedGeneration") or 0
        if og < 0:
            errs.append(invalid(p.child("observedGeneration"), og,
                                "must be greater than or equal to zero"))
        if not c.get("lastTransitionTime"):
            errs.append(required(p.child("lastTransitionTime"), "must be set"))
        reason = c.get("reason") or ""
        if not reason:
            errs.append(required(p.child("reason"), "must be set"))
        else:
            if not _match(_condition_reason_re, reason):
                errs.append(invalid(p.child("reason"), reason, regex_error(
                    _CONDITION_REASON_ERR_MSG, _CONDITION_REASON_FMT,
                    "my_name", "MY_NAME", "MyName", "ReasonA,ReasonB", "ReasonA:ReasonB",
                )))
            if _blen(reason) > 1024:
                errs.append(too_long(p.child("reason"), "", 1024))
        if _blen(c.get("message") or "") > 32 * 1024:
            errs.append(too_long(p.child("message"), "", 32 * 1024))
    return errs
