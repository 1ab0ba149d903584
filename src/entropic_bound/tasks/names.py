"""The task names and teacher definitions a config or the command line reads, in a module that imports
no task (and so no torch): the command line checks a ``--set`` against them before any experiment is
imported.

The two attention teachers are defined once here: the tasks compute exactly these
(``tasks/attention_teachers.py``), ``entropic-bound list`` shows them (the registry's summaries) and
``predict --help`` states them. ``predict`` estimates the kernel up to scale — ``K̂`` absorbs the
``1/√d`` (and the linear teacher's ``1/n``) — so its ``r*`` is ``rank K*``.
"""

from __future__ import annotations

#: The named spectra of a teacher's operator (:func:`~entropic_bound.tasks.operators.make_spectrum`).
SPECTRA = ("flat", "geometric", "power")

# The two attention teachers by kind (E4–E6's ``teacher`` param) → their names in ``TASKS``.
ATTENTION_TEACHERS = {"linear": "linear_qk_teacher", "softmax": "softmax_teacher"}

LINEAR_QK_TEACHER = "Y = (X K* Xᵀ / √d) X V* / n + E"
SOFTMAX_TEACHER = "Y = softmax(X K* Xᵀ / √d) X V* + E"

#: ``predict --teacher`` name → definition.
PREDICT_TEACHERS = {"linear-qk": LINEAR_QK_TEACHER, "softmax": SOFTMAX_TEACHER}
