"""Tasks (data generators) with an explicit ground truth.

``fixed_operator``, ``linear_qk_teacher`` and ``softmax_teacher`` are declared (lazily, by
``module:object``) in :data:`entropic_bound.registry.TASKS`. The names below are imported from their
modules on first use, so importing a name table (:mod:`.names`, what a config reads) imports no task
and no torch.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

#: each public name → the module that defines it
_HOMES = {
    "ATTENTION_TEACHERS": ".names",
    "SPECTRA": ".names",
    "LinearQKTeacher": ".attention_teachers",
    "LinearQKTeacherTask": ".attention_teachers",
    "SoftmaxTeacher": ".attention_teachers",
    "SoftmaxTeacherTask": ".attention_teachers",
    "Batch": ".base",
    "Teacher": ".base",
    "as_generator": ".base",
    "FixedOperatorTask": ".fixed_operator",
    "FixedOperatorTeacher": ".fixed_operator",
    "ar1_covariance": ".operators",
    "haar_orthonormal": ".operators",
    "low_rank_factors": ".operators",
    "low_rank_matrix": ".operators",
    "make_spectrum": ".operators",
    "sqrtm_psd": ".operators",
    "value_matrix": ".operators",
}

__getattr__ = lazy_exports(__name__, _HOMES)


__all__ = list(_HOMES)
