"""Classroom load test: one app server, many sessions stepping on the Train page at once.

    python bench/load.py           # 30 sessions, 60 s of a step a second, 2,000 merges, 3 bursts, 3 browsers
    python bench/load.py --sessions 3 --seconds 4 --merges 60 --bursts 1 --browsers 1   # smoke test
    python bench/load.py --write   # also store the printed lines in bench/RESULTS.md
    python bench/load.py --servers 2 --server-option runner.postScriptGC=false   # other setups
    python bench/load.py --servers 2 --proxy   # through `python -m explorer serve --servers 2`

One server (``streamlit run app.py``) on a free loopback port; ``--servers K`` starts K of them
and gives them the sessions in turn (what a multi-process setup behind a sticky balancer would
do), ``--server-option`` passes options to ``streamlit run``. ``--proxy`` runs the real thing
instead: the launcher ``python -m explorer serve --servers K`` (K servers behind haproxy) on a
free loopback port, and every session and browser connects to the proxy. A protocol session
then first loads its Train link over HTTP as a browser does, keeps haproxy's cookie from the
answer and sends it on its websocket's upgrade; the page, the websocket and every browser's
answers must come from the server the cookie names (an error otherwise). The report adds how the
sessions were spread over the servers, and memory and CPU count the servers and haproxy
together. The run's phases (the engine alone's reference, opening, solo, steady, bursts, run to
end, every history against the engine's), the definitions of a click and of a step's latency, and
what counts as an error: ``bench/loadgen/sessions.py``.

The Class page (``--class``): one teacher and a room of students::

    python bench/load.py --class --store sqlite   # or --store redis; --write stores the lines
    python bench/load.py --class --students 3 --steps 3 --browsers 1 --idle-seconds 3   # smoke test

(the room, its phases and its targets: ``bench/loadgen/classroom.py``). The load generator's
parts, shared by both runs (the protocol client, the servers' monitor, Chromium alongside, the
report), are the modules of ``bench/loadgen/``; this script parses the command line and hands
over to one of the two runs.
"""

from __future__ import annotations

import argparse

from _common import CORPUS_NAME
from loadgen import classroom, sessions

__all__ = ["main", "parser"]


def parser() -> argparse.ArgumentParser:
    """The command line: the sessions run's options, then the Class page's (``--class``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--seconds", type=int, default=60, help="length of the steady phase")
    parser.add_argument("--merges", type=int, default=2000, help="each session's merge budget (merges=N in its link)")
    parser.add_argument("--bursts", type=int, default=3)
    parser.add_argument(
        "--corpus",
        default=CORPUS_NAME,
        help=f"the bundled sample every session's corpus starts from (default {CORPUS_NAME}; a smaller one "
        "makes a quicker smoke run)",
    )
    parser.add_argument(
        "--browsers",
        type=int,
        default=None,
        help="headless Chromium contexts alongside (0: none; default 3, with --class 2)",
    )
    parser.add_argument(
        "--deadline",
        type=float,
        default=None,
        help="stop after this many seconds whatever happens (default 600 + 3 x --seconds)",
    )
    parser.add_argument(
        "--servers",
        type=int,
        default=None,
        help="independent app servers, the sessions assigned in turn (a multi-process setup's numbers; "
        "default 1, with --class 2 behind the launcher's haproxy)",
    )
    parser.add_argument(
        "--proxy",
        action="store_true",
        help="serve through `python -m explorer serve --servers K` (haproxy, sticky sessions); every "
        "session and browser connects to the proxy and keeps its cookie",
    )
    parser.add_argument(
        "--server-option",
        action="append",
        default=[],
        metavar="SECTION.OPTION=VALUE",
        help="pass an option to `streamlit run` (repeatable), e.g. runner.postScriptGC=false",
    )
    parser.add_argument("--write", action="store_true", help="store the lines in bench/RESULTS.md")
    _class_options(parser)
    return parser


def _class_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``--class``, in a group of their own."""
    group = parser.add_argument_group("the Class page (--class)")
    group.add_argument(
        "--class",
        dest="class_room",
        action="store_true",
        help="one teacher and --students students in a room of the Class page, through "
        "`python -m explorer serve --servers 2`: following steps, a quiz round, an idle room",
    )
    group.add_argument(
        "--store",
        choices=("sqlite", "redis"),
        default="sqlite",
        help="where the rooms live: SQLite in a fresh data folder, or a redis-server started on loopback",
    )
    group.add_argument("--students", type=int, default=30, help="protocol students in the room")
    group.add_argument("--steps", type=int, default=10, help="steps the teacher makes, 2 s apart")
    group.add_argument("--idle-seconds", type=float, default=20.0, help="how long the room sits idle, polling")


def main() -> int:
    """Parse the command line and run the scenario it names: its exit status."""
    cli = parser()
    args = cli.parse_args()
    scenario = classroom if args.class_room else sessions
    scenario.check_args(args, cli.error)
    return scenario.main(args)


if __name__ == "__main__":
    raise SystemExit(main())
