"""What a room's questions came to: the wrong answer most chosen after a reveal, and every
answer as a table for the teacher to keep (CSV).

Pure functions over what :mod:`explorer.serving.rooms` keeps (members, questions, answers): who
was right is :func:`explorer.serving.rooms.winners`'s call, so the export and the most-missed
line score exactly as the leaderboard does.

>>> from explorer.serving.rooms import Answer, Member, Question
>>> q = Question(1, "merge", 3, options=(("e", "s"), ("l", "o"), ("s", "t")), counts=(9, 7, 8),
...              state="revealed", answer=0)
>>> most_missed(q, [Answer("a", 1, 2.0), Answer("b", 1, 3.5), Answer("c", 0, 1.0), Answer("d", 2, 4.0)])
Missed(value=1, chosen=2, wrong=3, answered=4)
>>> print(results_csv([Member("a", "Ana", 0.0)], [q], {1: [Answer("a", 1, 2.0)]}), end="")
question,kind,step,asked,options,right answer,student,answer,seconds,right
1,merge,3,which pair merges at step 4?,e + s (9) | l + o (7) | s + t (8),e + s,Ana,l + o,2.0,no

A pair as frequent as the merged one is right too (a tie): both are the right answer.

>>> t = Question(2, "merge", 0, options=(("a", "t"), ("e", "r"), ("o", "n")), counts=(7, 7, 5),
...              state="revealed", answer=1)
>>> print(results_csv([Member("a", "Ana", 0.0)], [t], {2: [Answer("a", 0, 1.5)]}).splitlines()[1])
2,merge,0,which pair merges at step 1?,a + t (7) | e + r (7) | o + n (5),e + r / a + t,Ana,a + t,1.5,yes
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from .rooms import Answer, Member, Question, right_options, winners

__all__ = ["HEADER", "Missed", "most_missed", "results_rows", "results_csv", "safe_cell"]

HEADER = ("question", "kind", "step", "asked", "options", "right answer", "student", "answer", "seconds", "right")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet would read as the start of a formula


class Missed(NamedTuple):
    """The wrong answer most chosen: an option's index (or a guessed count), how many chose it,
    how many answered wrong, how many answered."""

    value: int
    chosen: int
    wrong: int
    answered: int


def most_missed(question: Question, answers: Sequence[Answer]) -> Missed | None:
    """The wrong answer chosen most often in a revealed question (the first in option order, or
    the smallest guess, among equals); None before the reveal or when nobody was wrong.

    >>> from explorer.serving.rooms import Answer, Question
    >>> q = Question(2, "count", 0, sentence="low", merges=2, state="revealed", answer=5)
    >>> most_missed(q, [Answer("a", 9, 1.0), Answer("b", 9, 1.0), Answer("c", 5, 1.0), Answer("d", 2, 1.0)])
    Missed(value=9, chosen=2, wrong=3, answered=4)
    >>> import dataclasses
    >>> most_missed(dataclasses.replace(q, state="closed"), [Answer("a", 9, 1.0)]) is None
    True
    """
    won = winners(question, answers)
    wrong = [a.value for a in answers if a.member not in won]
    if question.state != "revealed" or not wrong:
        return None
    counts = Counter(wrong)
    value = min(counts, key=lambda v: (-counts[v], v))
    return Missed(value, counts[value], len(wrong), len(answers))


def safe_cell(text: str) -> str:
    """A name as a CSV cell that no spreadsheet runs as a formula (OWASP's CSV injection advice:
    a leading ``'`` before ``=``, ``+``, ``-``, ``@``, a tab or a carriage return).

    >>> safe_cell("=HYPERLINK(\\"x\\")"), safe_cell("Ana")
    ('\\'=HYPERLINK("x")', 'Ana')
    """
    return "'" + text if text.startswith(_FORMULA) else text


def _asked(question: Question) -> str:
    if question.kind == "merge":
        return f"which pair merges at step {question.step + 1}?"
    return f"how many tokens will “{question.sentence}” have after {question.merges} more merges?"


def results_rows(
    members: Sequence[Member],
    questions: Sequence[Question],
    answers: Mapping[int, Sequence[Answer]],
    *,
    token: Callable[[str], str] = str,
) -> list[tuple[str, ...]]:
    """One row per question and member (in the order they joined), :data:`HEADER`'s columns:
    the question, its options (a pair's tokens written by ``token``) and right answer (tied pairs
    too, the merged one first, separated by " / "), then the
    member's answer, the seconds it took and whether it won ("yes"/"no" once revealed, else
    empty). A member who did not answer has empty answer cells; a removed member's answers are
    gone with it."""

    def pair(p: Sequence[str]) -> str:
        return " + ".join(token(t) for t in p)

    rows: list[tuple[str, ...]] = []
    for q in questions:
        given = {a.member: a for a in answers.get(q.qid, ())}
        won = winners(q, list(given.values()))
        if q.kind == "merge":
            options = " | ".join(
                f"{pair(p)} ({q.counts[i]})" if i < len(q.counts) else pair(p) for i, p in enumerate(q.options)
            )
            # every option as frequent as the merged pair is right (a tie): all of them, merged one first
            tied = sorted(right_options(q), key=lambda i: (i != q.answer, i))
            right = " / ".join(pair(q.options[i]) for i in tied if 0 <= i < len(q.options))
        else:
            options, right = "", "" if q.answer is None else str(q.answer)
        for m in members:
            a = given.get(m.id)
            if a is None:
                shown, seconds, verdict = "", "", ""
            else:
                in_range = q.kind != "merge" or 0 <= a.value < len(q.options)
                shown = (pair(q.options[a.value]) if q.kind == "merge" else str(a.value)) if in_range else ""
                seconds = f"{a.at:.1f}"
                verdict = ("yes" if m.id in won else "no") if q.state == "revealed" else ""
            rows.append(
                (str(q.qid), q.kind, str(q.step), _asked(q), options, right, safe_cell(m.name), shown, seconds, verdict)
            )
    return rows


def results_csv(
    members: Sequence[Member],
    questions: Sequence[Question],
    answers: Mapping[int, Sequence[Answer]],
    *,
    token: Callable[[str], str] = str,
) -> str:
    """:func:`results_rows` under :data:`HEADER` as CSV text (for a spreadsheet or a gradebook)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows(results_rows(members, questions, answers, token=token))
    return out.getvalue()
