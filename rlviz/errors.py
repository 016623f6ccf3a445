"""The library's one exception for a user's mistake.

Anything a person can get wrong through a page — a layout with no goal, a table with an empty
cell, a setting combination that makes no sense — raises :class:`InputError`, with a message
that names the problem in the user's terms ("the layout has no goal cell G"), never in the
code's ("index 3 is out of bounds"). Pages show exactly these as a message. Every other
exception, ``ValueError`` included, is a bug: the page logs it with its traceback on the server
and shows a short note.

It subclasses ``ValueError`` so that callers who treat bad input generically keep working.
"""

from __future__ import annotations

__all__ = ["InputError"]


class InputError(ValueError):
    """Bad input from a user, explained in the user's terms."""
