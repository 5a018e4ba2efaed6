# -*- test-case-name: tests.extension.test_wardle -*-
"""
C{BanFlunder}: upstream sample-apiserver's C{pkg/admission/plugin/banflunder}.

A mutating plugin on C{CREATE}: a C{Flunder} whose name one of the C{Fischer}s lists in
C{disallowedFlunders} is refused, 403 C{flunders.wardle.example.com "<name>" is forbidden:
this name may not be used, please change the resource name}.  The Fischers are read from the
server's own store (upstream: its informer's lister).
"""

from __future__ import annotations

from typing import Any

from zope.interface import implementer

from examples.wardle.apis import GROUP
from kubetwist.extension import IMutationInterface, PluginContext
from kubetwist.runtime import errors

#: The plugin's registered name.
NAME = "BanFlunder"


@implementer(IMutationInterface)
class DisallowFlunder:
    """Upstream C{DisallowFlunder}; see the module docstring."""

    name = NAME

    def __init__(self, list_fischers: Any) -> None:
        """@param list_fischers: C{() -> coroutine of [Fischer]}."""
        self.list_fischers = list_fischers

    def handles(self, operation: str) -> bool:
        return operation == "CREATE"

    async def admit(self, a: Any) -> None:
        """@raise StatusError: 403 Forbidden for a disallowed name."""
        if (a.kind.group, a.kind.kind) != (GROUP, "Flunder"):
            return
        name = ((a.object or {}).get("metadata") or {}).get("name", "")
        for fischer in await self.list_fischers():
            if name in (fischer.get("disallowedFlunders") or []):
                raise errors.new_forbidden(
                    a.resource.group, a.resource.resource, a.name,
                    "this name may not be used, please change the resource name")


def new(context: PluginContext) -> DisallowFlunder:
    """The plugin over the server's C{fischers} (upstream C{Register}'s factory)."""
    return DisallowFlunder(context.lister(GROUP, "fischers"))
