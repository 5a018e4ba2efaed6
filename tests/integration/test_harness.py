# -*- test-case-name: tests.integration.test_harness -*-
"""
The harness's own plumbing, without servers: L{class_units} hands trial one unit per class,
and L{class_fixture} closes a class's shared value after its last test, or when another class
asks for its own (what a C{trial -j} worker that ran part of a class sees).
"""

from __future__ import annotations

import sys
import types

from twisted.trial.itrial import ITestCase
from twisted.trial.reporter import TestResult
from twisted.trial.unittest import SynchronousTestCase

from tests.integration import harness
from tests.integration.harness import class_fixture, class_units


def _module_with_classes() -> types.ModuleType:
    """A throwaway module with a two-test class, a one-test class and a class without tests."""
    module = types.ModuleType("tests.integration._units_example")

    class Two(SynchronousTestCase):
        def test_a(self) -> None:
            pass

        def test_b(self) -> None:
            self.fail("b fails")

    class One(SynchronousTestCase):
        def test_c(self) -> None:
            pass

    class Empty(SynchronousTestCase):
        pass

    for cls in (Two, One, Empty):
        cls.__module__ = module.__name__
        setattr(module, cls.__name__, cls)
    return module


class ClassUnitsTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.module = _module_with_classes()
        sys.modules[self.module.__name__] = self.module
        self.addCleanup(sys.modules.pop, self.module.__name__)

    def test_one_unit_per_class(self) -> None:
        """One unit per class with tests, the larger first, named by the class (what a
        trial -j worker loads), each counting its tests; running one reports every test."""
        units = list(class_units(self.module.__name__)())
        self.assertEqual([u.id() for u in units], [f"{self.module.__name__}.Two",
                                                   f"{self.module.__name__}.One"])
        self.assertEqual([u.countTestCases() for u in units], [2, 1])
        self.assertIs(ITestCase(units[0]), units[0])
        result = TestResult()
        units[0].run(result)
        self.assertEqual((result.successes, len(result.failures)), (1, 1))


class ClassFixtureTests(SynchronousTestCase):
    def setUp(self) -> None:
        saved = dict(harness._class_states)
        harness._class_states.clear()

        def restore() -> None:
            for state in harness._class_states.values():
                state.close()
            harness._class_states.clear()
            harness._class_states.update(saved)

        self.addCleanup(restore)
        self.closed: list[str] = []

    def use(self, case: SynchronousTestCase, name: str) -> str:
        return class_fixture(case, lambda: name, self.closed.append)

    def test_closed_after_the_last_test(self) -> None:
        """Both tests of a class share one value, closed once after the second."""
        module = _module_with_classes()
        first, second = module.Two("test_a"), module.Two("test_b")
        self.assertEqual(self.use(first, "two"), "two")
        first.doCleanups()
        self.assertEqual(self.closed, [])
        self.assertEqual(self.use(second, "other"), "two")
        second.doCleanups()
        self.assertEqual(self.closed, ["two"])

    def test_closed_when_another_class_asks(self) -> None:
        """A class that ran only in part here is closed when the next class starts; a later
        test of the first class gets a new value."""
        module = _module_with_classes()
        first = module.Two("test_a")
        self.use(first, "two")
        first.doCleanups()
        self.use(module.One("test_c"), "one")
        self.assertEqual(self.closed, ["two"])
        self.assertEqual(self.use(module.Two("test_b"), "two again"), "two again")
        self.assertEqual(self.closed, ["two", "one"])


class EveryModuleTests(SynchronousTestCase):
    def test_every_integration_module_runs_by_class(self) -> None:
        """Every integration module hands trial its classes as units (else trial -j starts a
        class's servers in every worker)."""
        from pathlib import Path

        folder = Path(__file__).resolve().parent
        missing = [p.name for p in sorted(folder.glob("test_*.py"))
                   if "testSuite = class_units(__name__)" not in p.read_text()]
        self.assertEqual(missing, [])


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
