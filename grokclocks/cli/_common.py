"""Shared pieces of the ``grokclocks`` command: the one-line error, warnings on stderr, number arguments."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

from .. import _validate as V
from .._validate import DomainError

FORMATTER = argparse.RawDescriptionHelpFormatter


class CLIError(Exception):
    """An error reported as one line with exit status 2."""


def _one_line_error(parser: argparse.ArgumentParser):
    def error(message: str):
        print(f"grokclocks {parser.prog.split()[-1]}: error: {message}", file=sys.stderr)
        raise SystemExit(2)

    return error


def _print_warnings(caught: Sequence[warnings.WarningMessage]) -> None:
    seen = []
    for w in caught:
        msg = str(w.message)
        if msg not in seen:
            seen.append(msg)
            print(f"grokclocks: warning: {msg}", file=sys.stderr)



def _positive_float(name: str):
    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number (got {text!r})") from None
        try:
            return float(V.positive(x, name))  # the library's own validation and message
        except DomainError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse
