# -*- test-case-name: tests.test_packaging -*-
"""
Packaging: the C{kubeapi} twistd plugin is found through Twisted's plugin scan, and the
distribution's layout keeps it findable under an editable install.

C{twistd} finds plugins only by scanning the directories of C{twisted.plugins.__path__}
(L{twisted.plugin.getPlugins}), which Twisted extends with C{<entry>/twisted/plugins} for each
C{sys.path} entry.  setuptools' editable install (PEP 660) puts either a plain C{.pth} of the
project root on C{sys.path} -- found by that scan -- or an import-hook finder that the scan cannot
see; it chooses the C{.pth} only when C{package_dir} maps the root package C{""} and every
package sits at its dotted path below it (C{setuptools.command.editable_wheel}).
"""

from __future__ import annotations

import configparser
from pathlib import Path

from twisted.application.service import IServiceMaker
from twisted.plugin import getPlugins
from twisted.trial.unittest import SynchronousTestCase

from tests.support import repository_root


class PluginTests(SynchronousTestCase):
    """The C{kubeapi} plugin as C{twistd} looks it up."""

    def test_found_by_twisted_plugin_scan(self) -> None:
        """
        L{getPlugins} yields exactly one C{kubeapi} service maker, defined in this tree's
        C{twisted/plugins/kubetwist_kubeapi.py} and making services from L{kubetwist.tap}.
        """
        import twisted.plugins

        makers = [p for p in getPlugins(IServiceMaker, twisted.plugins) if p.tapname == "kubeapi"]
        self.assertEqual(len(makers), 1, makers)
        self.assertEqual(makers[0].module, "kubetwist.tap")
        here = repository_root() / "twisted" / "plugins"
        self.assertIn(str(here), [str(Path(p).resolve()) for p in twisted.plugins.__path__])

    def test_plugin_module_has_no_package_marker(self) -> None:
        """
        C{twisted/plugins} has no C{__init__.py} (it must stay a namespace portion: a regular
        package there would shadow Twisted's own C{twisted.plugins}).
        """
        root = repository_root()
        self.assertTrue((root / "twisted" / "plugins" / "kubetwist_kubeapi.py").is_file())
        self.assertFalse((root / "twisted" / "plugins" / "__init__.py").exists())
        self.assertFalse((root / "twisted" / "__init__.py").exists())


class LayoutTests(SynchronousTestCase):
    """setup.cfg declares the layout under which an editable install is a plain C{.pth}."""

    def setUp(self) -> None:
        self.config = configparser.ConfigParser()
        self.assertTrue(self.config.read(repository_root() / "setup.cfg"))

    def test_root_package_dir(self) -> None:
        """
        C{package_dir} maps exactly the root package to the project root (without it
        setuptools installs an import-hook finder and C{twistd kubeapi} is not found).
        """
        raw = self.config.get("options", "package_dir")
        entries = [line.strip() for line in raw.splitlines() if line.strip()]
        self.assertEqual(entries, ["=."])

    def test_packages_are_plain_directories(self) -> None:
        """
        Every package the distribution ships sits at its dotted path below the root: the
        other half of setuptools' "simple layout" rule.
        """
        raw = self.config.get("options.packages.find", "include")
        patterns = [line.strip() for line in raw.splitlines() if line.strip()]
        self.assertEqual(set(patterns), {"kubetwist", "kubetwist.*", "twisted.plugins"})
        root = repository_root()
        for package in ("kubetwist", "twisted.plugins"):
            self.assertTrue((root / Path(*package.split("."))).is_dir(), package)
