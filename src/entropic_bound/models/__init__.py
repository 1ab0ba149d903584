"""Students of the interpolation ladder, each an ensemble with a leading model axis."""
from .base import EnsembleStudent, MemberSpec, member_generator, stack_padded
from .linear_operator import LinearOperatorEnsemble

__all__ = ["EnsembleStudent", "LinearOperatorEnsemble", "MemberSpec", "member_generator", "stack_padded"]
