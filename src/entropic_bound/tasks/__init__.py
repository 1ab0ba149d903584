"""Tasks (data generators) with an explicit ground truth.

``fixed_operator``, ``linear_qk_teacher`` and ``softmax_teacher`` are declared (lazily, by
``module:object``) in :data:`entropic_bound.registry.TASKS`.
"""

from __future__ import annotations

from .attention_teachers import (
    ATTENTION_TEACHERS,
    LinearQKTeacher,
    LinearQKTeacherTask,
    SoftmaxTeacher,
    SoftmaxTeacherTask,
)
from .base import Batch, Teacher, as_generator
from .fixed_operator import FixedOperatorTask, FixedOperatorTeacher
from .operators import (
    SPECTRA,
    ar1_covariance,
    haar_orthonormal,
    low_rank_factors,
    low_rank_matrix,
    make_spectrum,
    sqrtm_psd,
    value_matrix,
)

__all__ = [
    "ATTENTION_TEACHERS",
    "Batch",
    "Teacher",
    "as_generator",
    "FixedOperatorTask",
    "FixedOperatorTeacher",
    "LinearQKTeacher",
    "LinearQKTeacherTask",
    "SoftmaxTeacher",
    "SoftmaxTeacherTask",
    "SPECTRA",
    "ar1_covariance",
    "haar_orthonormal",
    "low_rank_factors",
    "low_rank_matrix",
    "make_spectrum",
    "sqrtm_psd",
    "value_matrix",
]
