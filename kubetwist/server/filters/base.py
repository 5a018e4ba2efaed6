# -*- test-case-name: tests.server.test_filters -*-
"""
The shape of a filter: upstream's C{func(http.Handler) http.Handler}.

A L{Handler} is a callable C{request -> Deferred | None} that answers the request (or hands it
on); a filter is a function C{with_x(handler, ...) -> Handler}.  A filter refuses a request by
raising (or failing its Deferred with) a L{StatusError <kubetwist.runtime.errors.StatusError>};
the recovery filter at the front writes it.  The innermost handler renders a twisted.web
resource (L{resource_handler}); L{FrontResource} is the resource the Site serves.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from twisted.internet import defer
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET

#: C{request -> Deferred | None}: answers the request, or fails with a StatusError.
Handler = Callable[[Any], Optional[defer.Deferred]]


def resource_handler(resource: Resource) -> Handler:
    """
    The innermost handler: render C{resource} (a leaf rendering the whole path).  A body
    returned at once is written as twisted.web's C{Request.render} writes it (with its
    C{Content-Length}; none for C{HEAD}).
    """

    def handle(request: Any) -> None:
        body = resource.render(request)
        if body is NOT_DONE_YET or request.finished:
            return
        request.setHeader(b"content-length", b"%d" % len(body))
        request.write(b"" if request.method == b"HEAD" else body)
        request.finish()

    return handle


class FrontResource(Resource):
    """
    The resource the Site serves: runs the filter chain for every request.

    @ivar handler: the outermost L{Handler}.
    @ivar parts: the chain's stateful filters by name (C{"waitgroup"}, C{"inflight"}, ...), for
        shutdown and inspection.
    """

    isLeaf = True

    def __init__(self, handler: Handler, parts: Optional[dict[str, Any]] = None) -> None:
        super().__init__()
        self.handler = handler
        self.parts = dict(parts or {})

    def render(self, request: Any) -> Any:
        defer.maybeDeferred(self.handler, request)
        return NOT_DONE_YET
