"""Tests for L{kubetwist.apis.core.secrets} and L{kubetwist.apis.core.configmaps}."""

from __future__ import annotations

import base64
import copy

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core.configmaps import CONFIGMAP_STRATEGY
from kubetwist.apis.core.secrets import SECRET_STRATEGY


def messages(errs) -> list[str]:
    return [e.error() for e in errs]


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def secret(**fields) -> dict:
    obj = {"metadata": {"name": "s", "namespace": "ns"}, **fields}
    SECRET_STRATEGY.default(obj)
    return obj


class SecretTests(SynchronousTestCase):
    def test_defaults(self) -> None:
        """type defaults to Opaque and stringData is folded into data (base64)."""
        obj = secret(data={"a": b64("1")}, stringData={"a": "2", "b": "x"})
        self.assertEqual(
            obj,
            {
                "metadata": {"name": "s", "namespace": "ns"},
                "type": "Opaque",
                "data": {"a": b64("2"), "b": b64("x")},
            },
        )
        self.assertEqual(SECRET_STRATEGY.validate(obj), [])

    def test_type_requirements(self) -> None:
        """Built-in types require their keys, with upstream's paths."""
        self.assertEqual(
            messages(SECRET_STRATEGY.validate(secret(type="kubernetes.io/tls"))),
            ["data[tls.crt]: Required value", "data[tls.key]: Required value"],
        )
        self.assertEqual(
            messages(SECRET_STRATEGY.validate(secret(type="kubernetes.io/basic-auth"))),
            ["data[username]: Required value", "data[password]: Required value"],
        )
        self.assertEqual(
            messages(SECRET_STRATEGY.validate(secret(type="kubernetes.io/service-account-token"))),
            ["metadata.annotations[kubernetes.io/service-account.name]: Required value"],
        )
        self.assertEqual(
            messages(
                SECRET_STRATEGY.validate(
                    secret(type="kubernetes.io/ssh-auth", data={"ssh-privatekey": ""})
                )
            ),
            ["data[ssh-privatekey]: Required value"],
        )
        self.assertEqual(SECRET_STRATEGY.validate(secret(type="example.com/custom")), [])

    def test_docker_config_json(self) -> None:
        """dockerconfigjson must hold a JSON object; the contents are redacted in the message."""
        bad = secret(type="kubernetes.io/dockerconfigjson", data={".dockerconfigjson": b64("[1]")})
        self.assertEqual(
            messages(SECRET_STRATEGY.validate(bad)),
            [
                'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": json: '
                "cannot unmarshal array into Go value of type map[string]interface {}"
            ],
        )
        bad = secret(type="kubernetes.io/dockerconfigjson", data={".dockerconfigjson": b64("x")})
        self.assertEqual(
            messages(SECRET_STRATEGY.validate(bad))[0],
            'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": '
            "invalid character 'x' looking for beginning of value",
        )
        good = secret(
            type="kubernetes.io/dockerconfigjson", data={".dockerconfigjson": b64('{"auths": {}}')}
        )
        self.assertEqual(SECRET_STRATEGY.validate(good), [])

    def test_keys_and_size(self) -> None:
        """Keys are config keys; more than 1 MiB of decoded data is too long."""
        obj = secret(data={"a b": b64("x"), "big": b64("x" * (1024 * 1024))})
        self.assertEqual(
            messages(SECRET_STRATEGY.validate(obj)),
            [
                'data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric '
                "characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', "
                "regex used for validation is '[-._a-zA-Z0-9]+')",
                "data: Too long: may not be more than 1048576 bytes",
            ],
        )

    def test_update_rules(self) -> None:
        """type is immutable; immutable secrets keep their data."""
        old = secret(data={"a": b64("1")}, immutable=True)
        old["metadata"]["resourceVersion"] = "2"
        new = copy.deepcopy(old)
        new["type"] = "kubernetes.io/tls"
        new["data"] = {"tls.crt": "", "tls.key": ""}
        new["immutable"] = False
        SECRET_STRATEGY.prepare_for_update(new, old)
        self.assertEqual(
            messages(SECRET_STRATEGY.validate_update(new, old)),
            [
                'type: Invalid value: "kubernetes.io/tls": field is immutable',
                "immutable: Forbidden: field is immutable when `immutable` is set",
                "data: Forbidden: field is immutable when `immutable` is set",
            ],
        )

    def test_field_attrs(self) -> None:
        """Secrets can be selected by type."""
        self.assertEqual(
            SECRET_STRATEGY.attrs(secret()),
            {"metadata.name": "s", "metadata.namespace": "ns", "type": "Opaque"},
        )


class ConfigMapTests(SynchronousTestCase):
    def test_valid_and_duplicate(self) -> None:
        """A key in both data and binaryData is refused at data[key]."""
        cm = {
            "metadata": {"name": "c", "namespace": "ns"},
            "data": {"k": "v"},
            "binaryData": {"k": b64("v")},
        }
        self.assertEqual(
            messages(CONFIGMAP_STRATEGY.validate(cm)),
            ['data[k]: Invalid value: "k": duplicate of key present in binaryData'],
        )

    def test_too_big(self) -> None:
        """More than 1 MiB in total is too long at the empty path (printed C{[]}, as upstream)."""
        cm = {"metadata": {"name": "c", "namespace": "ns"}, "data": {"k": "x" * (1024 * 1024 + 1)}}
        self.assertEqual(
            messages(CONFIGMAP_STRATEGY.validate(cm)),
            ["[]: Too long: may not be more than 1048576 bytes"],
        )

    def test_immutable(self) -> None:
        """An immutable ConfigMap refuses data and binaryData changes."""
        old = {
            "metadata": {"name": "c", "namespace": "ns", "resourceVersion": "1"},
            "data": {"k": "v"},
            "immutable": True,
        }
        new = copy.deepcopy(old)
        new["data"] = {"k": "w"}
        new["binaryData"] = {"b": ""}
        self.assertEqual(
            messages(CONFIGMAP_STRATEGY.validate_update(new, old)),
            [
                "data: Forbidden: field is immutable when `immutable` is set",
                "binaryData: Forbidden: field is immutable when `immutable` is set",
            ],
        )
