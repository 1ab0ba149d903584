"""Students of the interpolation ladder, each an ensemble with a leading model axis.

The names below are imported from their modules on first use, so importing a name table
(:mod:`.names`, what E3's config reads) imports no student and no torch.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

#: each public name → the module that defines it
_HOMES = {
    "EnsembleStudent": ".base",
    "MemberSpec": ".base",
    "member_generator": ".base",
    "stack_padded": ".base",
    "TransformerBlockEnsemble": ".block",
    "chunk_members": ".chunking",
    "LinearOperatorEnsemble": ".linear_operator",
    "LinearQKEnsemble": ".linear_qk",
    "SoftmaxAttentionEnsemble": ".softmax_attention",
}

__getattr__ = lazy_exports(__name__, _HOMES)

__all__ = list(_HOMES)
