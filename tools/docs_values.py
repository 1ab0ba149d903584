"""Numbers quoted in prose, filled from the verdicts JSON so that a republished JSON updates the text.

A value is marked inline, ``<!-- value: SOURCE CLAIM FIELD -->0.67 [0.47, 0.80]<!-- end value -->``,
and everything between the markers is rewritten by :func:`fill_values`. ``SOURCE`` names a verdicts
JSON (``paper``: docs/paper-scale-verdicts.json; ``fresh``: docs/quick-draws-verdicts.json; ``quick``:
the draw-0 quick evidence, one evidence dict per claim). ``FIELD`` is one of

- ``verdict`` — the claim's verdict (combined over its draws); ``statement`` — its statement as
  the claim declares it;
- ``draws`` — every draw's verdict, ``0: confirmed, 1: inconclusive``;
- ``draw N`` — draw N's decision, ``statistic [low, high]``; ``draw N verdict`` its verdict;
  ``draw N statistic``, ``low``, ``high``, ``units``, ``threshold`` — one number of its decision;
- ``evidence KEY.KEY…`` — a value of the stored evidence (a list of two numbers reads as an
  interval ``[low, high]``).

A field the JSON does not hold is an error naming the marker, never a silent blank.
"""

from __future__ import annotations

import re

VALUE = re.compile(r"<!-- value: (\w+) (\w+) ([^>]*?) -->(.*?)<!-- end value -->", re.S)


def number(x) -> str:
    """``x`` as prose writes it: three significant digits, a typographic minus; ints and words as they are."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    text = str(x) if isinstance(x, int) else f"{x:.3g}"
    return "−" + text[1:] if text.startswith("-") else text


def interval(decision: dict) -> str:
    lo, hi = decision["interval"]
    return f"{number(decision['statistic'])} [{number(lo)}, {number(hi)}]"


def _draw(record: dict, draw: int) -> tuple[str, dict | None]:
    """Draw ``draw``'s verdict and decision record (None when it has none)."""
    rep = record.get("replication") or {}
    draws = rep.get("draws") or []
    if draw not in draws:
        raise KeyError(f"no draw {draw} (draws: {draws})")
    i = draws.index(draw)
    decisions = rep.get("decisions") or [None] * len(draws)
    return rep["verdicts"][i], decisions[i]


def _evidence(evidence: dict, path: str) -> str:
    value = evidence
    for key in path.split("."):
        value = value[int(key)] if isinstance(value, list) else value[key]
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        return f"[{number(value[0])}, {number(value[1])}]"
    if isinstance(value, dict) and "interval" in value:
        return interval(value)
    return number(value)


def value(record: dict, field: str, evidence_only: bool = False) -> str:
    """The text of ``field`` (module docstring) for one claim's ``record`` of a verdicts JSON (its
    evidence dict itself when ``evidence_only``)."""
    words = field.split()
    if evidence_only:
        if words[0] != "evidence" or len(words) != 2:
            raise KeyError(f"the quick evidence holds 'evidence KEY' fields only, not '{field}'")
        return _evidence(record, words[1])
    if words in (["verdict"], ["statement"]):
        return record[words[0]]
    if words == ["draws"]:
        rep = record["replication"]
        return ", ".join(f"{d}: {w}" for d, w in zip(rep["draws"], rep["verdicts"], strict=True))
    if words[0] == "evidence" and len(words) == 2:
        return _evidence(record.get("evidence") or {}, words[1])
    if words[0] == "draw" and len(words) in (2, 3):
        verdict, decision = _draw(record, int(words[1]))
        part = words[2] if len(words) == 3 else "decision"
        if part == "verdict":
            return verdict
        if decision is None:
            raise KeyError(f"draw {words[1]} has no decision record")
        if part == "decision":
            return interval(decision)
        numbers = {**decision, "low": decision["interval"][0], "high": decision["interval"][1]}
        return number(numbers[part])
    raise KeyError(f"unknown field '{field}'")


def fill_values(text: str, sources: dict[str, dict]) -> str:
    """``text`` with every inline value rewritten from ``sources`` (``{name: verdicts JSON}``)."""

    def fill(match: re.Match) -> str:
        source, claim, field = match.group(1), match.group(2), match.group(3).strip()
        head = f"<!-- value: {source} {claim} {field} -->"
        try:
            if claim not in sources.get(source, {}):
                raise KeyError(f"the {source} verdicts hold no {claim}")
            text = value(sources[source][claim], field, evidence_only=source == "quick")
        except (KeyError, IndexError, ValueError, TypeError) as err:
            reason = err.args[0] if isinstance(err, KeyError) and err.args else err
            raise ValueError(f"{head}: {reason}") from None
        return f"{head}{text.replace('*', chr(92) + '*')}<!-- end value -->"  # r* stays literal

    return VALUE.sub(fill, text)
