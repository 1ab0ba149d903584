"""Tasks (data generators) with an explicit ground truth.

``fixed_operator``, ``linear_qk_teacher`` and ``softmax_teacher`` are declared (lazily, by
``module:object``) in :data:`entropic_bound.registry.TASKS`. The names below are imported from their
modules on first use, so importing a name table (:mod:`.names`, what a config reads) imports no task
and no torch.
"""

from __future__ import annotations

from ..lazy_exports import lazy_package

#: each (relative) module → the public names it defines, imported on first use
__getattr__, __all__ = lazy_package(
    __name__,
    {
        ".names": ("ATTENTION_TEACHERS", "SPECTRA"),
        ".attention_teachers": (
            "LinearQKTeacher",
            "LinearQKTeacherTask",
            "SoftmaxTeacher",
            "SoftmaxTeacherTask",
        ),
        ".base": ("Batch", "Teacher", "as_generator"),
        ".fixed_operator": ("FixedOperatorTask", "FixedOperatorTeacher"),
        ".operators": (
            "ar1_covariance",
            "haar_orthonormal",
            "low_rank_factors",
            "low_rank_matrix",
            "make_spectrum",
            "sqrtm_psd",
            "value_matrix",
        ),
    },
)
