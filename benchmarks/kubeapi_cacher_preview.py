"""
C{twistd} with kubetwist's L{Cacher} put in front of the storage that C{twistd kubeapi} builds,
for measuring the watch cache before the server wires it itself.  Used by the benchmarks when
C{KUBETWIST_BENCH_CACHER=preview} is set; the results then say C{"cacher": "preview"}.

    python benchmarks/kubeapi_cacher_preview.py -n --pidfile= kubeapi [kubeapi flags]
"""

from __future__ import annotations

import sys

from twisted.scripts.twistd import run

from kubetwist.server.run import KubeAPIService
from kubetwist.storage.cacher import Cacher

_build_storage = KubeAPIService.build_storage


def build_storage(self):
    return Cacher(_build_storage(self), self.reactor)


if __name__ == "__main__":
    KubeAPIService.build_storage = build_storage
    sys.argv[0] = "twistd"
    run()
