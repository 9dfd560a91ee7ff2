"""``CliError``: a problem with the user's input, printed as one line with exit code 2.

Kept apart from ``cli.main`` so that it is one class even when ``cli.main`` runs as ``__main__``.
"""

from __future__ import annotations


class CliError(Exception):
    """A problem with the user's input, reported as one line with exit code 2."""
