"""Students of the interpolation ladder, each an ensemble with a leading model axis."""

from .base import EnsembleStudent, MemberSpec, member_generator, stack_padded
from .block import TransformerBlockEnsemble
from .chunking import chunk_members
from .linear_operator import LinearOperatorEnsemble
from .linear_qk import LinearQKEnsemble
from .softmax_attention import SoftmaxAttentionEnsemble

__all__ = [
    "EnsembleStudent",
    "LinearOperatorEnsemble",
    "LinearQKEnsemble",
    "MemberSpec",
    "SoftmaxAttentionEnsemble",
    "TransformerBlockEnsemble",
    "chunk_members",
    "member_generator",
    "stack_padded",
]
