"""Students of the interpolation ladder, each an ensemble with a leading model axis.

The names below are imported from their modules on first use, so importing a name table
(:mod:`.names`, what E3's config reads) imports no student and no torch.
"""

from __future__ import annotations

from ..lazy_exports import lazy_package

#: each (relative) module → the public names it defines, imported on first use
__getattr__, __all__ = lazy_package(
    __name__,
    {
        ".base": ("EnsembleStudent", "MemberSpec", "member_generator", "stack_padded"),
        ".block": ("TransformerBlockEnsemble",),
        ".chunking": ("chunk_members",),
        ".linear_operator": ("LinearOperatorEnsemble",),
        ".linear_qk": ("LinearQKEnsemble",),
        ".softmax_attention": ("SoftmaxAttentionEnsemble",),
    },
)
