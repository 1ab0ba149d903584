"""The task names a config chooses among, in a module that imports no task (and so no torch): the
command line checks a ``--set`` against them before any experiment is imported."""

from __future__ import annotations

#: The named spectra of a teacher's operator (:func:`~entropic_bound.tasks.operators.make_spectrum`).
SPECTRA = ("flat", "geometric", "power")

# The two attention teachers by kind (E4–E6's ``teacher`` param) → their names in ``TASKS``.
ATTENTION_TEACHERS = {"linear": "linear_qk_teacher", "softmax": "softmax_teacher"}
