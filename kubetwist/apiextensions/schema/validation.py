# -*- test-case-name: tests.apiextensions.test_schema_validation -*-
"""
OpenAPI v3 validation of custom resources, with upstream's messages and field paths.

Upstream: C{k8s.io/kube-openapi/pkg/validation/validate} (C{SchemaValidator} and its type,
schema-props (allOf/anyOf/oneOf/not), string, format, number, slice, common (enum) and object
validators, their C{Result} merging with C{MatchCount}, and the message texts of
C{.../validation/errors}), then
C{k8s.io/apiextensions-apiserver/pkg/apiserver/validation.kubeOpenAPIResultToFieldErrors}
which turns those into C{field.Error}s: C{spec.replicas: Invalid value: "string":
spec.replicas in body must be of type integer: "string"}.  Errors that are not kube-openapi
C{Validation}s (the allOf/anyOf/oneOf/not summaries) land at the request's root path, which
upstream prints as C{<nil>} when validating a whole object.

The v1.32 level is matched: numeric C{format}s are not range-checked, C{maxLength} reports
"bytes" while counting characters, and C{null} never matches an C{enum}.
"""

from __future__ import annotations

import math
from typing import Any

from kubetwist.apiextensions.schema.compiled import SchemaNode
from kubetwist.apiextensions.schema.formats import format_validator
from kubetwist.apiextensions.schema.gofmt import (
    deep_equal,
    enum_equal,
    go_float,
    go_json,
    go_v,
)
from kubetwist.runtime import field as fe
from kubetwist.runtime.field import FieldError

IN = "body"

# kube-openapi error codes (errors/schema.go) that the field-error conversion distinguishes
C_TYPE, C_REQUIRED, C_TOO_LONG, C_ENUM, C_MAX_ITEMS, C_TOO_MANY_PROPS = (
    "type", "required", "toolong", "enum", "maxitems", "toomanyprops")
C_OTHER = "other"
C_PLAIN = None  # not an errors.Validation: a composite/plain error


class OpenAPIError:
    """One kube-openapi error: C{code}, C{name} (dotted path), C{value}, C{valid}, message."""

    __slots__ = ("code", "message", "name", "valid", "value", "values")

    def __init__(self, code: str | None, name: str, message: str, value: Any = None,
                 valid: Any = None, values: list | None = None) -> None:
        self.code = code
        self.name = name
        self.message = message
        self.value = value
        self.valid = valid
        self.values = values


class Result:
    """kube-openapi's C{validate.Result}: errors deduplicated by message, and a match count."""

    __slots__ = ("_seen", "count", "errors")

    def __init__(self) -> None:
        self.errors: list[OpenAPIError] = []
        self._seen: set[str] = set()
        self.count = 0

    def add(self, err: OpenAPIError) -> None:
        if err.message not in self._seen:
            self._seen.add(err.message)
            self.errors.append(err)

    def merge(self, other: Result | None) -> None:
        if other is not None:
            for e in other.errors:
                self.add(e)
            self.count += other.count

    @property
    def valid(self) -> bool:
        return not self.errors


def _msg(name: str, text: str) -> str:
    """C{"<name> in body <text>"}, or C{"<name> <text>"} as upstream does when C{in} is empty."""
    return f"{name} in {IN} {text}"


def _type_error(name: str, type_name: str, value: Any) -> OpenAPIError:
    if isinstance(value, str):
        text = _msg(name, f"must be of type {type_name}: {go_json(value)}")
    else:
        text = _msg(name, f"must be of type {type_name}")
    return OpenAPIError(C_TYPE, name, text, value)


def _schema_info(data: Any) -> tuple[str, str]:
    if isinstance(data, bool):
        return "boolean", ""
    if isinstance(data, str):
        return "string", ""
    if isinstance(data, int):
        return "integer", "int64"
    if isinstance(data, float):
        return "number", "float64"
    if isinstance(data, list):
        return "array", ""
    if isinstance(data, dict):
        return "object", ""
    return "", ""


def _is_json_integer(f: float) -> bool:
    """C{swag.IsFloat64AJSONInteger}."""
    if math.isnan(f) or math.isinf(f) or f < -(2 ** 53) or f > 2 ** 53:
        return False
    if f == int(f):
        return True
    if f < 0:
        return False
    g = float(int(f))
    diff = abs(f - g)
    if g == 0:
        return False
    return diff / (abs(f) + abs(g)) < 1e-9


def _validate_type(node: SchemaNode, data: Any, path: str) -> Result | None:
    """C{typeValidator.Validate} for non-null data (returns an error result or C{None})."""
    sch_type, fmt = _schema_info(data)
    types = node.types
    is_float_int = (sch_type == "number" and "integer" in types and _is_json_integer(data))
    is_int_float = sch_type == "integer" and "number" in types
    is_str_or_slice = sch_type in ("string", "array")
    if (not is_str_or_slice and node.format
            and not (sch_type in types or fmt == node.format or is_float_int or is_int_float)):
        r = Result()
        r.add(_type_error(path, node.format, fmt))
        return r
    if ("number" not in types and "integer" not in types) and node.format and is_str_or_slice:
        return None
    if not (sch_type in types or is_float_int or is_int_float):
        r = Result()
        r.add(_type_error(path, ",".join(types), sch_type))
        return r
    return None


def _validate_schema_props(node: SchemaNode, data: Any, path: str) -> Result:
    """C{schemaPropsValidator.Validate}: allOf, anyOf, oneOf, not."""
    main = Result()
    if node.any_of:
        best: Result | None = None
        first_success: Result | None = None
        succeeded = False
        for sub in node.any_of:
            r = validate_node(sub, data, path)
            if r.valid:
                best = None
                succeeded = True
                first_success = r
                break
            if best is None or r.count > best.count:
                best = r
        if not succeeded:
            main.add(OpenAPIError(C_PLAIN, path,
                                  f"{go_json(path)} must validate at least one schema (anyOf)"))
        if best is not None:
            main.merge(best)
        elif first_success is not None:
            main.merge(first_success)
    if node.one_of:
        best = None
        first_success = None
        validated = 0
        for sub in node.one_of:
            r = validate_node(sub, data, path)
            if r.valid:
                validated += 1
                best = None
                if first_success is None:
                    first_success = r
                continue
            if validated == 0 and (best is None or r.count > best.count):
                best = r
        if validated != 1:
            extra = ("Found none valid" if validated == 0
                     else f"Found {validated} valid alternatives")
            main.add(OpenAPIError(
                C_PLAIN, path,
                f"{go_json(path)} must validate one and only one schema (oneOf). {extra}"))
            if best is not None:
                main.merge(best)
        elif first_success is not None:
            main.merge(first_success)
    if node.all_of:
        validated = 0
        for sub in node.all_of:
            r = validate_node(sub, data, path)
            if r.valid:
                validated += 1
            main.merge(r)
        if validated != len(node.all_of):
            extra = ". None validated" if validated == 0 else ""
            main.add(OpenAPIError(C_PLAIN, path,
                                  f"{go_json(path)} must validate all the schemas (allOf){extra}"))
    if node.not_ is not None:
        r = validate_node(node.not_, data, path)
        if r.valid:
            main.add(OpenAPIError(C_PLAIN, path,
                                  f"{go_json(path)} must not validate the schema (not)"))
    main.count += 1
    return main


def _validate_string(node: SchemaNode, data: str, path: str) -> OpenAPIError | None:
    """C{stringValidator.Validate}: the first failing of maxLength, minLength, pattern."""
    if node.max_length is not None and len(data) > node.max_length:
        return OpenAPIError(C_TOO_LONG, path,
                            _msg(path, f"should be at most {node.max_length} chars long"),
                            data, node.max_length)
    if node.min_length is not None and len(data) < node.min_length:
        return OpenAPIError(C_OTHER, path,
                            _msg(path, f"should be at least {node.min_length} chars long"),
                            data, node.min_length)
    if node.pattern:
        if node.pattern_re is None:
            return OpenAPIError(C_OTHER, path, _msg(
                path, f"should match '{node.pattern}, but pattern is invalid: "
                      f"{node.pattern_err}'"), data)
        if node.pattern_re.search(data) is None:
            return OpenAPIError(C_OTHER, path, _msg(path, f"should match '{node.pattern}'"), data)
    return None


def _num_text(v: Any) -> str:
    return go_float(v) if isinstance(v, float) else str(v)


def _validate_number(node: SchemaNode, data: Any, res: Result, path: str) -> None:
    """C{numberValidator.Validate} at v1.32 (no format range checks): multipleOf, max, min."""
    is_int = isinstance(data, int)
    mo = node.multiple_of
    if mo is not None:
        factor = int(mo) if is_int else float(mo)
        if factor <= 0:
            res.add(OpenAPIError(C_OTHER, path, f"factor MultipleOf declared for {path} must be "
                                                f"positive: {_num_text(factor)}", factor))
        elif is_int:
            if data % factor != 0:
                res.add(OpenAPIError(C_OTHER, path, _msg(
                    path, f"should be a multiple of {factor}"), data))
        else:
            f = float(data)
            mult = (1 / factor * f) if factor < 1 else f / factor
            if not _is_json_integer(mult):
                res.add(OpenAPIError(C_OTHER, path, _msg(
                    path, f"should be a multiple of {go_float(factor)}"), data))
    mx = node.maximum
    if mx is not None:
        bound: Any = int(mx) if is_int else float(mx)
        if (data >= bound) if node.excl_max else (data > bound):
            word = "less than" if node.excl_max else "less than or equal to"
            res.add(OpenAPIError(C_OTHER, path, _msg(path, f"should be {word} {_num_text(bound)}"),
                                 data))
    mn = node.minimum
    if mn is not None:
        bound = int(mn) if is_int else float(mn)
        if (data <= bound) if node.excl_min else (data < bound):
            word = "greater than" if node.excl_min else "greater than or equal to"
            res.add(OpenAPIError(C_OTHER, path, _msg(path, f"should be {word} {_num_text(bound)}"),
                                 data))


def _validate_slice(node: SchemaNode, data: list, path: str) -> Result:
    """C{schemaSliceValidator.Validate}: items, then minItems, maxItems, uniqueItems."""
    res = Result()
    items = node.items
    if items is not None:
        for i, v in enumerate(data):
            res.merge(validate_node(items, v, f"{path}[{i}]"))
    size = len(data)
    if node.min_items is not None and size < node.min_items:
        res.add(OpenAPIError(C_OTHER, path,
                             _msg(path, f"should have at least {node.min_items} items"), size))
    if node.max_items is not None and size > node.max_items:
        res.add(OpenAPIError(C_MAX_ITEMS, path,
                             _msg(path, f"should have at most {node.max_items} items"), size,
                             node.max_items))
    if node.unique_items:
        seen: list[Any] = []
        for v in data:
            if any(deep_equal(v, u) for u in seen):
                res.add(OpenAPIError(C_OTHER, path, _msg(path, "shouldn't contain duplicates")))
                break
            seen.append(v)
    res.count += 1
    return res


def _validate_enum(node: SchemaNode, data: Any, path: str) -> OpenAPIError | None:
    enum = node.enum
    if not enum:
        return None
    for e in enum:
        if enum_equal(data, e):
            return None
    return OpenAPIError(C_ENUM, path, _msg(path, f"should be one of {go_v(enum)}"), data,
                        values=enum)


def _validate_object(node: SchemaNode, data: dict, path: str) -> Result:
    """C{objectValidator.Validate}: min/maxProperties, additionalProperties, properties,
    required."""
    res = Result()
    n = len(data)
    if node.min_props is not None and n < node.min_props:
        res.add(OpenAPIError(C_OTHER, path,
                             _msg(path, f"should have at least {node.min_props} properties"), n))
    if node.max_props is not None and n > node.max_props:
        res.add(OpenAPIError(C_TOO_MANY_PROPS, path,
                             _msg(path, f"should have at most {node.max_props} properties"), n,
                             node.max_props))
    props = node.properties or {}
    if node.ap_present and not node.ap_allows:
        for k in data:
            if k not in props:
                res.add(OpenAPIError(C_OTHER, path,
                                     _msg(f"{path}.{k}", "is a forbidden property"), k))
    elif node.ap_node is not None:
        ap = node.ap_node
        for k, v in data.items():
            if k not in props:
                res.merge(validate_node(ap, v, f"{path}.{k}"))
    if props:
        for k, v in data.items():
            sub = props.get(k)
            if sub is not None:
                res.merge(validate_node(sub, v, f"{path}.{k}" if path else k))
    for k in node.required:
        if k not in data:
            name = f"{path}.{k}"
            res.add(OpenAPIError(C_REQUIRED, name, _msg(name, "is required")))
    return res


def validate_node(node: SchemaNode, data: Any, path: str) -> Result:
    """
    kube-openapi's C{SchemaValidator.Validate} of C{data} against one schema node.

    @param path: the dotted name kube-openapi tracks (C{""} at the root, C{spec.ports[0]}).
    @return: the L{Result} (errors and match count, which decides which anyOf/oneOf
        branch's errors are reported).
    """
    res = Result()
    if data is None:
        if node.types and "null" not in node.types and not node.nullable:
            res.add(_type_error(path, ",".join(node.types), "null"))
        else:
            res.count += 1
        if node.enum:
            res.add(OpenAPIError(C_ENUM, path, _msg(path, f"should be one of {go_v(node.enum)}"),
                                 None, values=node.enum))
        return res
    if node.type_applies:
        r = _validate_type(node, data, path)
        if r is None:
            res.count += 2
        else:
            res.merge(r)
            res.count += 1
    # schemaPropsValidator always applies
    if node.junctors:
        res.merge(_validate_schema_props(node, data, path))
    else:
        res.count += 1
    res.count += 1
    if isinstance(data, str):
        if node.string_checks:
            err = _validate_string(node, data, path)
            if err is not None:
                res.add(err)
        res.count += 1
        if node.format:
            check = format_validator(node.format)
            if check is not None:
                if not check(data):
                    res.add(OpenAPIError(C_TYPE, path, _msg(
                        path, f"must be of type {node.format}: {go_json(data)}"), data))
                res.count += 1
    elif isinstance(data, (int, float)) and not isinstance(data, bool):
        if node.number_checks:
            _validate_number(node, data, res, path)
        res.count += 2
    elif isinstance(data, list):
        res.merge(_validate_slice(node, data, path))
        res.count += 1
    if node.enum:
        err = _validate_enum(node, data, path)
        if err is not None:
            res.add(err)
    res.count += 1
    if isinstance(data, dict):
        res.merge(_validate_object(node, data, path))
        res.count += 1
    res.count += 1
    return res


def _enum_values(values: list) -> list[str]:
    return [v if isinstance(v, str) else go_json(v) for v in values]


def result_to_field_errors(result: Result, prefix: str = "") -> list[FieldError]:
    """
    Upstream C{kubeOpenAPIResultToFieldErrors}: kube-openapi errors as C{field.Error}s.

    @param prefix: the field path the validated value sits at (C{""} for a whole object,
        C{"status"} for the status subresource).
    """
    out: list[FieldError] = []
    root = prefix or "<nil>"
    for e in result.errors:
        if e.code is C_PLAIN:
            out.append(fe.invalid(root, "", e.message))
            continue
        name = e.name
        if name and name != ".":
            name = name.removeprefix(".")
            path = f"{prefix}.{name}" if prefix else name
        else:
            path = root
        value = "" if e.value is None else e.value
        if e.code == C_REQUIRED:
            out.append(fe.required(path))
        elif e.code == C_ENUM:
            # v1.32 prints a nil bad value as the string "null"
            bad = "null" if e.value is None else e.value
            out.append(fe.not_supported(path, bad, _enum_values(e.values or [])))
        elif e.code == C_TOO_LONG:
            out.append(fe.too_long(path, "", e.valid))
        elif e.code in (C_MAX_ITEMS, C_TOO_MANY_PROPS):
            out.append(fe.too_many(path, e.value, e.valid))
        elif e.code == C_TYPE:
            out.append(FieldError("TypeInvalid", path, value, e.message))
        else:
            out.append(fe.invalid(path, value, e.message))
    return out


def openapi_errors(node: SchemaNode, value: Any, prefix: str = "") -> list[FieldError]:
    """Validate C{value} against C{node} (kube-openapi only) and convert the errors."""
    result = validate_node(node, value, "")
    if result.valid:
        return []
    return result_to_field_errors(result, prefix)
