"""What decides an experiment's claims: from the store's rows of its grid to tables, figures and
verdicts.

:meth:`Decision.analyse` keeps this config's rows, sets aside the runs that diverged, prepares the
rest once, judges every declared claim (:class:`~entropic_bound.experiments.framework.claim.Claim`) and hands
the verdicts to the experiment's ``analysis.py`` for its tables, figures and notes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pandas as pd

from .draws import Seeds
from .verdict import Analysis, ClaimContext, Verdict


class Decision:
    """Claims and analysis of an experiment bound to its config ``cfg``; subclasses set
    ``declared_claims`` (their ``claims.py`` ``CLAIMS``; ``claims`` lists their ids) and
    ``analysis_function``, and may override :meth:`prepare`. The rows decided on are those of the
    grid's run specs (:meth:`~entropic_bound.experiments.framework.grid.Grid.specs`)."""

    cfg: Any
    claims: tuple[str, ...] = ()
    declared_claims: tuple = ()  # the experiment's claims.py CLAIMS: each a claim.Claim
    # analysis.py's analyse(cfg, table, rows, context, verdicts) -> Analysis: tables, figures, notes
    analysis_function: Callable[..., Analysis] | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.declared_claims and "claims" not in cls.__dict__:
            cls.claims = tuple(c.id for c in cls.declared_claims)

    def analyse(
        self,
        table: pd.DataFrame,
        records: list[dict],
        seeds: Seeds | None = None,
        draws: tuple[int, ...] = (),
    ) -> Analysis:
        """Tables, figures and verdicts from this config's rows of the store.

        Selects this grid's rows (:meth:`select`), sets aside the runs that diverged, prepares the rest
        (:meth:`prepare`), decides every declared claim with its robustness grid
        (:meth:`~entropic_bound.experiments.framework.claim.Claim.judge`), counts the diverged runs once into every
        verdict's evidence (``excluded_diverged``) and hands the verdicts to :attr:`analysis_function`.
        With ``draws``, the rows of all of them are decided together (pooled); ``seeds`` (the first
        draw's) seeds the bootstraps.
        """
        seeds = seeds or self.seeds  # the draw decided: default the config's
        table, records = self.select(table, records, seeds, tuple(draws))
        kept, n_diverged = split_status(table)
        rows, context = self.prepare(table, kept, records, seeds)
        context = replace(context, seeds=seeds)
        verdicts = [
            _count_excluded(claim.judge(self.cfg, rows, context), n_diverged)
            for claim in self.declared_claims
        ]
        analysis = type(self).analysis_function(self.cfg, table, rows, context, verdicts)
        if n_diverged:
            analysis.notes.append(f"{n_diverged} run(s) diverged and are excluded from every verdict.")
        return analysis

    def prepare(
        self, table: pd.DataFrame, kept: pd.DataFrame, records: list[dict], seeds: Seeds
    ) -> tuple[pd.DataFrame, ClaimContext]:
        """The rows every claim is decided on and their :class:`ClaimContext` (default: the runs that did
        not diverge, and the records); an experiment overrides it to derive columns or tables once."""
        return kept, ClaimContext(records)

    def select(
        self, table: pd.DataFrame, records: list[dict], seeds: Seeds, draws: tuple[int, ...] = ()
    ) -> tuple[pd.DataFrame, list[dict]]:
        """Keep the store's rows that belong to this config's grid in ``seeds``'s draw (or in each of
        ``draws``, pooled), each with its ``draw`` as a column."""
        draw_of = {
            s.run_id: d
            for d in (draws or (seeds.draw,))
            for s in self.drawn_specs(Seeds(seeds.experiment, d))
        }
        if not len(table):
            return table, []
        rows = table[table["run_id"].isin(draw_of)].reset_index(drop=True)
        rows = rows.assign(draw=rows["run_id"].map(draw_of).astype(int))
        return rows, [r for r in records if r["run_id"] in draw_of]


def _count_excluded(verdict: Verdict, n_diverged: int) -> Verdict:
    """``verdict`` with the number of runs that diverged (and that no criterion saw) in its evidence."""
    return replace(verdict, evidence={**verdict.evidence, "excluded_diverged": n_diverged})


def split_status(table: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``(the rows with status "ok", the number of diverged runs)`` of a store table."""
    if not len(table):
        return table, 0
    return table[table["status"] == "ok"], int((table["status"] == "diverged").sum())


def curves_by_run(records: list[dict]) -> dict[str, dict]:
    """``run_id → curves`` of the store's records (empty dict where a run stored none)."""
    return {r["run_id"]: r.get("curves") or {} for r in records}


def draw_figures(
    plots: dict[str, Callable[..., Any]], cfg: Any, rows: pd.DataFrame, records: list[dict]
) -> dict:
    """``name → plot(cfg, rows, records)`` for each of ``plots``; no figures when no run is kept."""
    return {name: plot(cfg, rows, records) for name, plot in plots.items()} if len(rows) else {}
