"""Realised mixers (attention matrices on real inputs) and their structural statistics.

A realised mixer ``M`` is one head's row-stochastic ``n × n`` attention matrix on one input window.
Statistics take ``mixers`` of shape ``(batch, ..., n, n)`` (batch = text windows first; usually
``(batch, layers, heads, n, n)``) and return one value per head ``(...)``:

- **sink score**, two definitions (:data:`SINK_DEFINITIONS`), both the share of attention on the
  first token, averaged over queries:

  - ``"ours"`` (default): mean over queries ``i ≥ 1`` of ``M[i, 0]``. Query 0 is left out because in
    a causal model it can only see token 0 (its row is ``[1, 0, …]`` whatever the head does).
  - ``"gu2025"``: mean over *all* queries ``i ≥ 0``, the metric of Gu et al., "When attention sink
    emerges in language models: an empirical view" (ICLR 2025), ``α_1 = (1/T) Σ_t A[t, 1]``. In a
    causal model it exceeds ours by ``(1 − ours) / n``, up to 0.016 at ``n = 64``: use it to compare
    with published tables.

  Either way a head whose score is above :data:`SINK_THRESHOLD` = ε = 0.3 (Gu et al.'s ε) is a
  *sink head*; Gu et al.'s model-level "sink ratio" is the share of sink heads.
- **locality mass**: mean over queries of ``Σ_{|i-j| ≤ w} M[i, j]``, attention within ±w tokens.
- **positional prior explained**: ``1 − Σ_b ||M_b − P_b||² / Σ_b ||M_b − U||²``, where ``U`` is uniform
  attention over the keys a query may see (all ``n``, or ``j ≤ i`` when causal) and ``P_b`` is the
  position-only prior: the mean mixer over the *other* windows (leave-one-out, so a head is not
  credited for fitting its own window; with one window the prior is that window and the share is 1).
  1 means attention depends on positions only; 0 means no better than uniform; negative means worse.
- **realised-mixer rank**: every rank estimator (``spectra/estimators.py``) on each mixer's singular values, averaged over
  windows (``mixer_<key>``), and on the mean mixer over windows (``mean_mixer_<key>``).
- **logit field** (:mod:`.logit_field`): one kernel fitted to the head's observed log-attention on the
  layer's normalised inputs, captured by :func:`realised_mixers_with_inputs` in the same forward pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UserInputError

SINK_THRESHOLD = 0.3
SINK_DEFINITIONS = ("ours", "gu2025")


def realised_mixers(model: Any, token_ids: Any) -> np.ndarray:
    """Attention matrices of a Hugging Face–style model on ``token_ids``, float64.

    ``model(input_ids=..., output_attentions=True).attentions`` must be a per-layer sequence of
    ``(batch, heads, n, n)`` tensors (load with ``attn_implementation="eager"``). ``token_ids`` of
    shape ``(n,)`` gives ``(layers, heads, n, n)``; ``(batch, n)`` gives ``(batch, layers, heads, n, n)``.
    """
    import torch

    ids = torch.as_tensor(np.asarray(token_ids), dtype=torch.long)
    single = ids.ndim == 1
    ids = ids[None] if single else ids  # (batch, n)
    body = getattr(model, "base_model", model)  # without a language-model head: no (batch, n, vocab) logits
    was_training = getattr(model, "training", False)
    model.eval()
    with torch.no_grad():
        out = body(input_ids=ids, output_attentions=True)
    if was_training:
        model.train()
    attentions = getattr(out, "attentions", None)
    if not attentions or any(a is None for a in attentions):
        raise UserInputError(
            "The model returned no attention weights: load it with attn_implementation='eager'."
        )
    mixers = np.empty((ids.shape[0], len(attentions), *attentions[0].shape[1:]))  # (batch, L, H, n, n)
    for layer, a in enumerate(attentions):
        mixers[:, layer] = a.cpu().numpy()  # float32 -> float64 exactly, one layer at a time
    return mixers[0] if single else mixers


def query_input_modules(model: Any, anchor: str, n_layers: int) -> list[Any]:
    """Each layer's query projection module (its input is the layer's normalised input ``x̃``), found
    from the adapter's ``anchor`` key (``…{i}…query.weight``) with or without the checkpoint prefix."""
    named = dict(model.named_modules())
    modules = []
    for layer in range(n_layers):
        target = anchor.format(i=layer).removesuffix(".weight")
        hits = [m for name, m in named.items() if name == target or name.endswith("." + target)]
        if len(hits) != 1:
            raise UserInputError(f"Cannot find the query projection '{target}' in the loaded model.")
        modules.append(hits[0])
    return modules


def realised_mixers_with_inputs(
    model: Any, token_ids: Any, modules: list[Any]
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`realised_mixers` and, from the same forward pass, the input of each module in ``modules``
    (one per layer, :func:`query_input_modules`): ``(mixers (batch, L, H, n, n), inputs (batch, L, n, d))``."""
    captured: list[np.ndarray] = []

    def keep(_module, args):
        captured.append(args[0].detach().double().cpu().numpy())  # (batch, n, d)

    handles = [m.register_forward_pre_hook(keep) for m in modules]
    try:
        mixers = realised_mixers(model, np.atleast_2d(np.asarray(token_ids)))
    finally:
        for handle in handles:
            handle.remove()
    return mixers, np.stack(captured, axis=1)


def check_sink_definition(definition: str) -> str:
    if definition not in SINK_DEFINITIONS:
        raise UserInputError(
            f"The sink definition must be one of {', '.join(SINK_DEFINITIONS)}. Got {definition!r} instead."
        )
    return definition


def sink_score(mixers: np.ndarray, definition: str = "ours") -> np.ndarray:
    """Share of attention on the first token: ``(..., n, n) → (...)``.

    ``definition="ours"`` averages over queries ``i ≥ 1``; ``"gu2025"`` over all queries (Gu et al.,
    ICLR 2025). See the module docstring.
    """
    check_sink_definition(definition)
    mixers = np.asarray(mixers, dtype=np.float64)
    if mixers.shape[-1] < 2:
        raise UserInputError(
            f"A sink score needs windows of at least 2 tokens. Got n={mixers.shape[-1]} instead."
        )
    first = 1 if definition == "ours" else 0
    return mixers[..., first:, 0].mean(axis=-1)


def locality_mass(mixers: np.ndarray, window: int = 2) -> np.ndarray:
    """Mean over queries of the attention within ``±window`` tokens: ``(..., n, n) → (...)``."""
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 0:
        raise UserInputError(f"The 'window' parameter must be an int >= 0. Got {window!r} instead.")
    mixers = np.asarray(mixers, dtype=np.float64)
    n = mixers.shape[-1]
    i, j = np.indices((n, n))
    band = np.abs(i - j) <= window  # (n, n)
    return (mixers * band).sum(axis=-1).mean(axis=-1)


def uniform_mixer(n: int, *, causal: bool) -> np.ndarray:
    """Uniform attention over the visible keys: ``(n, n)``, rows sum to 1."""
    mask = np.tril(np.ones((n, n))) if causal else np.ones((n, n))
    return mask / mask.sum(axis=-1, keepdims=True)


def positional_prior_explained(mixers: np.ndarray, *, causal: bool) -> np.ndarray:
    """Share of the mixers explained by a position-only prior: ``(batch, ..., n, n) → (...)``.

    ``1 − Σ_b ||M_b − P_b||² / Σ_b ||M_b − U||²`` with the leave-one-out mean ``P_b`` (see module doc).
    A head whose mixers are all exactly uniform has a zero denominator and gives NaN.
    """
    mixers = np.asarray(mixers, dtype=np.float64)
    B, n = mixers.shape[0], mixers.shape[-1]
    total = mixers.sum(axis=0)  # (..., n, n)
    prior = (total[None] - mixers) / (B - 1) if B > 1 else mixers  # (batch, ..., n, n)
    resid = ((mixers - prior) ** 2).sum(axis=(0, -2, -1))  # (...)
    spread = ((mixers - uniform_mixer(n, causal=causal)) ** 2).sum(axis=(0, -2, -1))  # (...)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(spread > 0, 1.0 - resid / np.where(spread > 0, spread, 1.0), np.nan)


def mixer_ranks(mixers: np.ndarray) -> dict[str, np.ndarray]:
    """Every panel estimator on the mixers ``(batch, ..., n, n)``: ``mixer_<key>`` (mean over batch)
    and ``mean_mixer_<key>`` (on the batch-mean mixer), each ``(...)``."""
    from ..spectra import estimate_all, singular_values

    mixers = np.asarray(mixers, dtype=np.float64)
    n = mixers.shape[-1]
    per_window = estimate_all(singular_values(mixers), shape=(n, n))  # {key: (batch, ...)}
    of_mean = estimate_all(singular_values(mixers.mean(axis=0)), shape=(n, n))  # {key: (...)}
    out = {f"mixer_{k}": v.mean(axis=0) for k, v in per_window.items()}
    out.update({f"mean_mixer_{k}": v for k, v in of_mean.items()})
    return out


def mixer_summary(
    mixers: np.ndarray, *, causal: bool, window: int = 2, sink_definition: str = "ours"
) -> dict[str, np.ndarray]:
    """All per-head statistics of ``mixers (batch, layers, heads, n, n)``: ``{name: (layers, heads)}``."""
    sink = sink_score(mixers, sink_definition).mean(axis=0)
    out = {
        "sink_score": sink,
        "sink_head": sink > SINK_THRESHOLD,
        "locality_mass": locality_mass(mixers, window).mean(axis=0),
        "positional_prior_explained": positional_prior_explained(mixers, causal=causal),
    }
    out.update(mixer_ranks(mixers))
    return out
