"""The composition root's builders take one typed value each (`Assembly`, `Overrides`),
built from their public function's own parameters: the two must name the same things, or a
parameter added to one would be lost (or fail) on the way in."""

import dataclasses
import inspect

from seam.wiring import assemble_runtime, create_runtime
from seam.wiring.assembly import Assembly
from seam.wiring.configure import Overrides


def test_assembly_fields_are_assemble_runtimes_parameters() -> None:
    fields = [f.name for f in dataclasses.fields(Assembly)]
    assert fields == list(inspect.signature(assemble_runtime).parameters)


def test_overrides_fields_are_create_runtimes_parameters() -> None:
    fields = [f.name for f in dataclasses.fields(Overrides)]
    assert fields == list(inspect.signature(create_runtime).parameters)
