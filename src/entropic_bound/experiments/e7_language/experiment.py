"""E7 — natural language (the paper's Appendix B): small causal LMs on corpora of different complexity.

One run is one (corpus, seed) language model; runs of one shape train together as an ensemble
(:mod:`.execute`). Every corpus has a role (:class:`~entropic_bound.language_models.corpora.catalogue.CorpusRole`):
natural language (tinyshakespeare shipped in the package, the prose of ``pydoc_data.topics``,
package docstrings, the texts of Debian packages in ten languages, the user's own text files), code (stdlib source), synthetic sources of known entropy rate and mixing
demand (associative recall, a k-gram ladder), and controls of known routing (MQAR, lag copy, Markov)
with the mixing their models must show. One more run per released model (``released_models``,
default: MiniLM, when its package is installed) measures a real model's heads on natural text for C13. Claims: C11 kernel rank anti-correlates with complexity,
C12 it tracks optimisation progress beyond a drifting control, C13 content-independent structure
dominates the realised mixers (see :mod:`.claims`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from ...language_models.corpora.catalogue import corpus_role, file_digest, text_name
from ...language_models.probes.checkpoint import resolve_checkpoint
from ...sweep.spec import RunResult, RunSpec
from ..framework.base import Experiment
from ..framework.params import to_params
from ..framework.parts import parts_of
from . import analysis, claims, config
from .analysis import prepare
from .config import DEFAULT_INIT_STD, VERSIONED
from .execute import execute_checkpoint, execute_lm_group

_WARNED: set[tuple[str, int]] = set()
MEMBER_STEP_S = 0.0115  # CPU s per member-step at d_model 32, probes included (quick E7, 2-core Xeon)


class E7Language(Experiment):
    config_class, scale_settings, declared_claims, analysis_function = parts_of(config, claims, analysis)
    # CPU s at quick scale: a checkpoint run (a language-model group's cost is in group_cost)
    run_cost, analysis_cost = 12.0, 9.5
    name = "E7"
    title = "Natural language: small causal LMs on corpora of known and estimated complexity"
    devices = ("cpu", "cuda")  # the language models train on a GPU with --device cuda

    @property
    def max_group(self) -> int:  # type: ignore[override]
        return self.cfg.ensemble_size

    def group_cost(self, group: list[RunSpec]) -> float:
        """Scheduling hint (CPU s, never changes a number): members × steps × the measured time of a
        member-step at the group's width, so the recall ensemble (2 members at d_model 64, 2.5×
        the steps) is not taken for the cheapest group and started last."""
        p = group[0].params
        if "probe.checkpoint" in p:
            return super().group_cost(group)
        width = (p["model.d_model"] / 32) ** 0.7  # 10.7 ms at d_model 32, 17 ms at 64 (bench_lm_step.py)
        return len(group) * p["train.steps"] * MEMBER_STEP_S * width + self.analysis_cost

    def _corpus_params(self) -> list[dict]:
        c, out = self.cfg, []
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        for name in c.task.corpora:
            extra = {"corpus.python": version} if name in VERSIONED else {}
            out.append({"corpus.name": name, "corpus.seed": c.task.seed, **extra})
        for p in c.task.corpus_paths:
            path, digest = Path(p).resolve(), file_digest(p)
            size = path.stat().st_size  # byte tokens
            if size < c.task.tokens and (str(path), c.task.tokens) not in _WARNED:
                _WARNED.add((str(path), c.task.tokens))  # once per process; the tables carry `tokens`
                print(
                    f"warning: corpus file {path} has {size} tokens, fewer than task.tokens = {c.task.tokens}; "
                    "it is used at its own length",
                    file=sys.stderr,
                )
            name = text_name(path)
            if any(o["corpus.name"] == name for o in out):  # two files with one stem stay two corpora
                name = f"{name}-{digest[:6]}"
            out.append({"corpus.name": name, "corpus.path": str(path), "corpus.digest": digest})
        return out

    def _checkpoint_specs(self) -> list[RunSpec]:
        c, out = self.cfg, []
        for name in c.released_models:
            resolved = resolve_checkpoint(name)
            if resolved is None:  # not installed here: the analysis says C13 ran without it
                continue
            params = {
                "probe.checkpoint": name,
                "probe.version": resolved[1],
                "probe.text": c.checkpoint_text,
                "probe.text_bytes": 64 * c.checkpoint_window_len * c.checkpoint_windows,
                "probe.windows": c.checkpoint_windows,
                "probe.window_len": c.checkpoint_window_len,
                "locality_window": c.locality_window,
            }
            out.append(RunSpec(self.name, params, 0))
        return out

    def specs(self) -> list[RunSpec]:
        c = self.cfg
        common = {
            "corpus.tokens": c.task.tokens,
            "val_fraction": c.task.val_fraction,
            "kgram_max_order": c.task.kgram_max_order,
            "probe_windows": c.probe_windows,
            "locality_window": c.locality_window,
        }
        lms = []
        for corpus in self._corpus_params():
            model, train = c.model_for(corpus["corpus.name"])
            shape = {**to_params(model, "model"), **to_params(train, "train")}
            for key in ("model.init_std", "model.emb_std"):  # named only off the default: ids stay
                if shape[key] == DEFAULT_INIT_STD:
                    del shape[key]
            if corpus_role(corpus["corpus.name"]).recall_control:  # at 100k tokens it memorises its episodes
                shape["corpus.tokens"] = c.recall_tokens
            lms += [RunSpec(self.name, {**corpus, **common, **shape}, s) for s in range(c.seeds)]
        return lms + self._checkpoint_specs()

    def group_key(self, spec: RunSpec):
        if "probe.checkpoint" in spec.params:
            return ("checkpoint", spec.run_id)
        # one ensemble per model shape and training (the recall control has its own), chunked
        shape = sorted((k, v) for k, v in spec.params.items() if k.startswith(("model.", "train.")))
        return ("lm", spec.draw, *shape)  # a group trains from one draw's seeds

    def execute(self, group: list[RunSpec]) -> list[RunResult]:
        seeds = self.seeds_of(group)
        if "probe.checkpoint" in group[0].params:
            return [execute_checkpoint(spec, seeds) for spec in group]
        return execute_lm_group(group, seeds, self.device)

    def prepare(self, table, ok, records, seeds):
        return prepare(self.cfg, table, records)
