"""Bounds on the text the kernel sends to the host.

A cell controls its error messages, tracebacks, column labels and reprs; none
of them may make a message of unbounded size (the host reads every field, and
some reach the model). The host checks the same bounds, more generously, with
zod (src/sandbox/cell-result.ts, workspace-profile.ts).
"""

from __future__ import annotations

# An error's value and its traceback: far more than any real traceback, far
# less than a message the host could choke on.
MAX_ERROR_CHARS = 64 * 1024
# An echoed value (repr) of the last expression.
MAX_VALUE_CHARS = 64 * 1024
# A table cell or label, as shown in a capped table.
MAX_LABEL_CHARS = 200
# A column or table name in the workspace profile: code uses it, so it is kept
# whole far beyond a displayed label (survey questions make long headers).
MAX_NAME_CHARS = 1_000
# Anything else short: an exception's class name, a note.
MAX_NOTE_CHARS = 1_000


def clip_text(text: str, max_chars: int) -> str:
    """Keeps the start; says how much was left out."""
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + '\n… (%d more characters)' % (len(text) - max_chars)


def clip_middle(text: str, max_chars: int) -> str:
    """Keeps the start and the end (a traceback's last line says what happened)."""
    if len(text) <= max_chars:
        return text
    half = max_chars // 2
    return '%s\n… (%d characters left out) …\n%s' % (text[:half], len(text) - 2 * half, text[-half:])


def short_text(text: str, max_chars: int = MAX_LABEL_CHARS) -> str:
    """One short line's worth: cut with an ellipsis."""
    return text if len(text) <= max_chars else text[:max_chars - 1] + '…'
