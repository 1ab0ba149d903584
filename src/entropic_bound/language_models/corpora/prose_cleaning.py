"""The prose of a text file in one of the markup forms Debian's text packages ship (E7's natural corpora).

Each cleaner keeps what a person wrote in a natural language and drops what is markup or code:

- ``fortune``: a fortune-cookie file; the ``%`` lines between cookies become blank lines,
  terminal colour codes are removed and so are the lines of tables drawn with box characters.
- ``roff``: a manual page (man macros): request lines dropped except the text-carrying font and
  heading macros (``.B``, ``.BR``, ``.SH`` …, their arguments kept), no-fill blocks (``.nf``/``.EX``:
  synopses and examples) and comments dropped, escapes (``\\fB``, ``\\-``, ``\\(em`` …) resolved.
- ``pod``: Perl's documentation format: verbatim (indented, code) paragraphs and ``=begin``/``=end``
  blocks dropped, headings and items kept as text, formatting codes (``C<…>``, ``L<text|link>``)
  replaced by their text.
- ``html``: ``head``, ``script``, ``style`` and ``pre`` elements dropped, tags removed, entities resolved.
- ``info``: a GNU Info manual: node headers and menus dropped, indentation stripped.
- ``plain``: the text as it is.

Every form ends with trailing blanks stripped and runs of blank lines collapsed to one.
"""

from __future__ import annotations

import html
import re

FORMS = ("fortune", "roff", "pod", "html", "info", "plain")

# -- roff ----------------------------------------------------------------------------------------

#: man macros whose arguments are text (fonts and headings); alternating ones join their arguments
_JOINED = {"BR", "BI", "IB", "IR", "RB", "RI"}
_TEXT_MACROS = {"B", "I", "SM", "SB", "SH", "SS", *_JOINED}
_NOFILL = {"nf": True, "EX": True, "fi": False, "EE": False}
_ROFF_ESCAPES = (
    (re.compile(r'\\".*'), ""),  # a comment to the end of the line
    (re.compile(r"\\f(\[[^\]]*\]|\(..|.)"), ""),  # font changes
    (re.compile(r"\\s[+-]?\d"), ""),  # size changes
    (re.compile(r"\\\*(\[[^\]]*\]|\(..|.)"), ""),  # strings
    (re.compile(r"\\\((em|\[em\])"), "—"),
    (re.compile(r"\\\(en"), "–"),
    (re.compile(r"\\\((aq|oq|cq)"), "'"),
    (re.compile(r"\\\((dq|lq|rq)"), '"'),
    (re.compile(r"\\\(bu"), "•"),
    (re.compile(r"\\\(..|\\\[[^\]]*\]"), ""),  # other special characters
    (re.compile(r"\\[-e]"), lambda m: "-" if m.group() == "\\-" else "\\"),
    (re.compile(r"\\[ ~0]"), " "),
    (re.compile(r"\\[&|^%:,/c]"), ""),
)


def _roff_args(rest: str) -> list[str]:
    """The arguments of a macro line: quoted ones keep their spaces."""
    return [a[1:-1] if a.startswith('"') else a for a in re.findall(r'"[^"]*"|\S+', rest)]


def _roff_line(line: str, state: dict) -> str | None:
    """The text of one roff line, or None where it carries none."""
    if line.startswith((".", "'")):
        name, _, rest = line[1:].strip().partition(" ")
        state["nofill"] = _NOFILL.get(name, state["nofill"])
        if name not in _TEXT_MACROS:
            return None
        args = _roff_args(rest)
        return ("" if name in _JOINED else " ").join(args)
    return None if state["nofill"] else line


def roff_prose(text: str) -> str:
    state, keep = {"nofill": False}, []
    for line in text.splitlines():
        out = _roff_line(line, state)
        if out is None:
            continue
        for pattern, repl in _ROFF_ESCAPES:
            out = pattern.sub(repl, out)
        keep.append(out)
    return "\n".join(keep)


# -- pod -----------------------------------------------------------------------------------------

_POD_CODE = re.compile(r"[A-Z]<<+\s+(.*?)\s+>>+|[A-Z]<([^<>]*)>")
_POD_ENTITIES = {"lt": "<", "gt": ">", "sol": "/", "verbar": "|"}


def _pod_codes(line: str) -> str:
    """Formatting codes replaced by their text, innermost first (``L<text|link>``: the text)."""
    line = re.sub(r"E<(\w+)>", lambda m: f"\x00{m.group(1)}\x01", line)  # entities last
    for _ in range(8):
        new = _POD_CODE.sub(lambda m: (m.group(1) or m.group(2) or "").split("|")[0], line)
        if new == line:
            break
        line = new
    return re.sub("\x00(\\w+)\x01", lambda m: _POD_ENTITIES.get(m.group(1), ""), line)


def pod_prose(text: str) -> str:
    keep, block = [], False
    for line in text.splitlines():
        if line.startswith("=begin"):
            block = True
        elif line.startswith("=end"):
            block = False
        elif block or line.startswith((" ", "\t")):
            continue
        elif line.startswith(("=head", "=item")):
            keep.append(_pod_codes(line.partition(" ")[2].lstrip("* ")))
        elif not line.startswith("="):
            keep.append(_pod_codes(line))
    return "\n".join(keep)


# -- html and info -------------------------------------------------------------------------------

_HTML_DROPPED = re.compile(r"<(head|script|style|pre)\b.*?</\1\s*>", re.S | re.I)
_HTML_BREAK = re.compile(r"<br\s*/?>|</(p|h\d|li|dt|dd|div|tr|table|blockquote|title)\s*>", re.I)


def html_prose(text: str) -> str:
    text = _HTML_DROPPED.sub("", text)
    text = _HTML_BREAK.sub("\n", text)
    text = re.sub(r"<[^>]*>", "", text)
    return "\n".join(html.unescape(line).strip() for line in text.splitlines())


def info_prose(text: str) -> str:
    keep, header = [], False
    for line in text.splitlines():
        if line.startswith("\x1f"):
            header = True  # the next line names the node
            continue
        if header or line.startswith("* "):
            header = False
            continue
        keep.append(line.strip())
    return "\n".join(keep)


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_BOX = re.compile("[\u2500-\u257f]")


def fortune_prose(text: str) -> str:
    lines = _ANSI.sub("", text).splitlines()
    return "\n".join("" if line.strip() == "%" else line for line in lines if not _BOX.search(line))


_CLEANERS = {
    "fortune": fortune_prose,
    "roff": roff_prose,
    "pod": pod_prose,
    "html": html_prose,
    "info": info_prose,
    "plain": lambda text: text,
}


def prose(text: str, form: str) -> str:
    """The prose of ``text`` written in ``form`` (one of :data:`FORMS`), blank runs collapsed."""
    out = "\n".join(line.rstrip() for line in _CLEANERS[form](text).splitlines())
    return re.sub(r"\n{3,}", "\n\n", out).strip()
