"""The ``kzo`` command: argument parsing, subcommand dispatch and error presentation.

Every subcommand module exposes ``register(subparsers)`` which adds its parser and sets
``func=<callable(args) -> int>`` as a default. Errors the user can fix (bad flags, bad input
files, impossible parameters) are printed as one line ``kzo <cmd>: error: ...`` and exit with
code 2; no traceback ever reaches the user for those. Arguments a subcommand does not know are
reported by that subcommand (:class:`SubcommandParser`), in the same format.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from kafka_zk_operator import __version__
from kafka_zk_operator.cli.errors import CliError
from kafka_zk_operator.domain import errors

__all__ = ["CliError", "build_parser", "main"]

#: Subcommand modules, in ``kzo --help`` order. Each has ``register(subparsers)``.
SUBCOMMAND_MODULES = (
    "kafka_zk_operator.cli.assign_cmd",
    "kafka_zk_operator.cli.check_cmd",
    "kafka_zk_operator.cli.dev_cmd",
    "kafka_zk_operator.cli.plan_cmd",
    "kafka_zk_operator.cli.import_cmd",
    "kafka_zk_operator.cli.operator_cmd",
    "kafka_zk_operator.cli.snapshot_cmd",
)

EXIT_USAGE = 2


class OneLineArgumentParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are a single line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


class SubcommandParser(OneLineArgumentParser):
    """The parser of a subcommand (``kzo snapshot``, ``kzo dev up``): arguments it does not know are
    its own one-line error, ``kzo snapshot: error: unrecognized arguments: --bogus (see 'kzo
    snapshot --help')``. (argparse hands them back to the top-level parser, which would report them
    as ``kzo: error: ...``.)"""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineArgumentParser(
        prog="kzo",
        description="kafka-zk-operator: manage ZooKeeper-mode Kafka topics and reassignments.",
    )
    parser.add_argument("--version", action="version", version=f"kzo {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=SubcommandParser)
    sub.required = True
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.func(args)
    except (CliError, errors.InvalidSpec, errors.NotSupported) as exc:
        print(f"kzo {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except errors.KzoError as exc:
        print(f"kzo {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. piped into `head`: not an error worth a traceback
        sys.stderr.close()
        return 0
    except OSError as exc:  # e.g. stdout on a full disk: the system's words, one line
        print(f"kzo {args.command}: error: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except MemoryError:
        print(
            f"kzo {args.command}: error: out of memory (is the input far larger than intended?)",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        print(f"kzo {args.command}: interrupted", file=sys.stderr)
        return 130
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
