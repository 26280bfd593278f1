"""The input options of ``fit`` and ``score``: which columns of a data file are features or labels,
how its CSV is read, reading it with them, and checking its columns against a model's."""

from __future__ import annotations

import argparse


def add_input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--label-column",
        default=None,
        help="name (or index for .npy / headerless CSV) of a 0/1 label column; "
        "it is never used as a feature",
    )
    parser.add_argument(
        "--columns",
        nargs="+",
        default=None,
        help="use exactly these feature columns "
        "(default: all numeric columns; timestamp columns are dropped)",
    )
    parser.add_argument("--drop-columns", nargs="+", default=None, help="columns to ignore")
    header = parser.add_mutually_exclusive_group()
    header.add_argument(
        "--no-header",
        dest="header",
        action="store_const",
        const=False,
        default=None,
        help="the CSV has no header row: every row is data, columns are named 0, 1, ... "
        "(default: detected; a first row of only numbers is read as data, with a warning)",
    )
    header.add_argument(
        "--header",
        dest="header",
        action="store_const",
        const=True,
        help="the CSV's first row is column names, even if they look like numbers",
    )
    parser.add_argument(
        "--sep",
        default=None,
        help="CSV field separator, e.g. ';' or tab (default: detected among , ; tab |)",
    )
    parser.add_argument(
        "--decimal",
        default=None,
        choices=(".", ","),
        help="CSV decimal mark (default: ',' when fields are not comma-separated and cells "
        "such as 3,14 occur, else '.')",
    )
    parser.add_argument(
        "--encoding",
        default=None,
        help="CSV text encoding, e.g. latin-1 or cp1252 (default: UTF-8; a file that is not "
        "UTF-8 is read as cp1252 with a warning)",
    )
    parser.add_argument(
        "--sort-by-time",
        action="store_true",
        help="sort the rows by the timestamp column (default: rows out of time order are an "
        "error; the scores CSV then follows the sorted order)",
    )


#: ``madcluster fit`` / ``score`` options passed on to :func:`madcluster.data.io.read_table`.
READ_OPTION_NAMES = (
    "label_column",
    "columns",
    "drop_columns",
    "header",
    "sep",
    "decimal",
    "encoding",
    "sort_by_time",
)


def read_options(args: argparse.Namespace) -> dict:
    """The input options given on the command line, as ``read_table`` keyword arguments."""
    return {k: getattr(args, k) for k in READ_OPTION_NAMES if getattr(args, k, None) is not None}


def read_input(path: str, args: argparse.Namespace):
    """The data file ``path``, read with the input options given on the command line."""
    from madcluster.data.io import read_table

    return read_table(path, **read_options(args))


def check_input_columns(table, args: argparse.Namespace, model) -> None:
    """The columns of ``args.data`` (read as ``table``) against those ``model`` was fitted on:
    refused naming the flag that fixes them; reordered or unnamed columns are a note."""
    from madcluster.cli.console import print_note
    from madcluster.data.columns import check_columns

    check_columns(
        table,
        args.data,
        model,
        label_column=args.label_column,
        note=lambda message: print_note(args, message),
    )
