"""Answer-token accuracy of the recall control: what "learned" means for MQAR beyond its loss.

The loss of an MQAR model averages over keys (unpredictable by construction) and answers (fully
determined); a model that routes by content gets the answers right. :func:`episode_starts` gives the
SEP positions of a held-out split, :func:`answer_accuracy` the share of answer tokens each member
predicts correctly (arg-max) on windows that start at an episode, so every answer in them is
answerable from the window (its key–value pair comes earlier in the same episode).
"""

from __future__ import annotations

import numpy as np
import torch

from ..model.ensemble import EnsembleLM


def episode_starts(tokens: np.ndarray, episode_len: int, n_ctx: int, sep: int = 0) -> np.ndarray:
    """Positions of SEP tokens at which a whole window of ``n_ctx + 1`` tokens fits: ``(S,)``.

    A SEP can only appear at an episode start (keys and values are other symbols), so the split may
    begin at any phase."""
    tokens = np.asarray(tokens)
    pos = np.flatnonzero(tokens[: len(tokens) - n_ctx] == sep)
    assert len(pos) == 0 or np.all(np.diff(pos) % episode_len == 0), "SEP off the episode grid"
    return pos


@torch.no_grad()
def answer_accuracy(
    model: EnsembleLM, splits: list[np.ndarray], masks: list[np.ndarray], starts: list[np.ndarray]
) -> np.ndarray:
    """Arg-max accuracy on the answer targets of each member's windows: ``(E,)``.

    ``splits[e]`` tokens ``(N_e,)``, ``masks[e]`` bool ``(N_e,)`` True at answer tokens, ``starts[e]``
    the same number ``W`` of window starts per member."""
    n, device = model.n_ctx, next(model.parameters()).device
    offsets = np.arange(n + 1)
    idx = [s[:, None] + offsets for s in starts]  # each (W, n + 1)
    x = torch.as_tensor(np.stack([t[i] for t, i in zip(splits, idx)]), dtype=torch.long)  # (E, W, n+1)
    m = torch.as_tensor(np.stack([mk[i][:, 1:] for mk, i in zip(masks, idx)]))  # (E, W, n)
    was_training = model.training
    model.eval()
    hits = torch.zeros(x.shape[0], dtype=torch.float64)
    for i in range(0, x.shape[1], 32):
        xs = x[:, i : i + 32].to(device)
        pred = model(xs[..., :-1]).argmax(dim=-1)  # (E, w, n)
        ok = (pred == xs[..., 1:]) & m[:, i : i + 32].to(device)
        hits += ok.flatten(1).sum(dim=1).double().cpu()
    model.train(was_training)
    return (hits / m.flatten(1).sum(dim=1).clamp(min=1)).numpy()
