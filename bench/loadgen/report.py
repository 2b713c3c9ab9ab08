"""The numbers' summaries (percentiles, megabytes, servers by cookie) and the closing lines every
run prints: its errors (the servers' log read for tracebacks and ERROR lines) and its verdicts."""

from __future__ import annotations

import collections
import re
from typing import IO

from _common import Printer, fmt_s

__all__ = ["mb", "pct", "per_server", "or_none", "report_errors", "spread", "verdict"]


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (the nearest rank; nan when there are none).

    >>> pct([3.0, 1.0, 2.0], 0.5), pct([1.0, 2.0, 3.0, 4.0], 0.95)
    (2.0, 4.0)
    """
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


def spread(values: list[float]) -> str:
    """p50, p95 and max of some latencies, as printed.

    >>> spread([0.2, 0.3, 0.4]), spread([])
    ('p50 0.30 s  p95 0.40 s  max 0.40 s', 'no samples')
    """
    if not values:
        return "no samples"
    return f"p50 {fmt_s(pct(values, 0.5))}  p95 {fmt_s(pct(values, 0.95))}  max {fmt_s(max(values))}"


def per_server(cookies) -> str:
    """How many pages each server was given, by the proxy's cookie.

    >>> per_server(["app2", "app1", None, "app2"])
    'app1 1, app2 2, no cookie 1'
    """
    counts = collections.Counter(c or "no cookie" for c in cookies)
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items())) or "none"


def mb(n: float) -> str:
    """Bytes as whole megabytes (MiB).

    >>> mb(3 * 1024**2 + 1)
    '3 MB'
    """
    return f"{n / 1024**2:,.0f} MB"


def verdict(ok: bool) -> str:
    """A target's verdict as printed."""
    return "met" if ok else "MISSED"


def or_none(seconds: float) -> str:
    """A measured time, or "none" when nothing was measured (infinity)."""
    return fmt_s(seconds) if seconds != float("inf") else "none"


def report_errors(out: Printer, errors: list[str], log: IO[str]) -> None:
    """Add the servers' log's tracebacks and ERROR or CRITICAL lines to ``errors``; print the
    errors (the first five) and how many warnings the log holds (the first one)."""
    log.seek(0)
    server_log = log.read()
    trouble = [ln for ln in server_log.splitlines() if re.search(r"\b(ERROR|CRITICAL)\b|Traceback", ln)]
    warnings = [ln for ln in server_log.splitlines() if re.search(r"\bWARNING\b", ln)]
    errors.extend(f"server log: {ln.strip()[:300]}" for ln in trouble)
    out(f"errors: {len(errors)}" + ("" if not errors else " - first: " + " | ".join(e[:240] for e in errors[:5])))
    if warnings:
        out(f"server log warnings: {len(warnings)} - first: {warnings[0].strip()[:240]}")
