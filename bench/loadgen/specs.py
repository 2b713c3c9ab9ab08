"""What each Train session opens (its corpus and preset, as a link), and the engine alone's
answer for it: the merge history the session's page must show."""

from __future__ import annotations

import itertools
import multiprocessing
import os
from dataclasses import dataclass

from _common import CORPUS_NAME, SAMPLES

__all__ = ["PRESET_ORDER", "Spec", "corpus_bytes", "reference", "references", "session_specs"]

PRESET_ORDER = ("hf-course", "sennrich", "bytes", "gpt2", "suffix-marker", "gpt4")


@dataclass(frozen=True)
class Spec:
    """One session's Train link: its corpus (bundled sample names) and preset."""

    index: int
    corpus: tuple[str, ...]
    preset: str
    merges: int

    @property
    def query(self) -> str:
        return f"corpus={','.join(self.corpus)}&preset={self.preset}&merges={self.merges}"

    @property
    def label(self) -> str:
        return f"{'+'.join(n.removesuffix('.txt') for n in self.corpus)} / {self.preset}"


def session_specs(count: int, merges: int, base: str = CORPUS_NAME) -> list[Spec]:
    """``base`` (Tiny Shakespeare by default) plus one other bundled sample, then plus two: every
    corpus differs (136 of them); presets in turn. Tiny Shakespeare is never an "other": a
    smaller base keeps every corpus small (a smoke run's)."""
    others = sorted(p.name for p in SAMPLES.glob("*.txt") if p.name not in (base, CORPUS_NAME))
    extras = itertools.chain(((o,) for o in others), itertools.combinations(others, 2))
    return [
        Spec(i, (base, *extra), PRESET_ORDER[i % len(PRESET_ORDER)], merges)
        for i, extra in zip(range(count), itertools.cycle(list(extras)))
    ]


def corpus_bytes(spec: Spec) -> int:
    """The size of the session's corpus on disk, its samples added up."""
    return sum((SAMPLES / name).stat().st_size for name in spec.corpus)


# ---- the engine alone --------------------------------------------------------------------------
def reference(spec: Spec) -> dict:
    """Train the session's corpus and config with the engine alone, as the Train page builds its
    trainer (``explorer/ui/state.py``): the config the link gives (``links.parse_link``), the
    words ``count_words`` gives, ``Trainer(words, config, top_k=..., encoding=...)`` (how many
    steps keep their full records changes what a record holds, not the merges)."""
    from explorer import PRESETS, Trainer
    from explorer.formats.corpora import list_samples, read_sample
    from explorer.stages.pipeline import count_words
    from explorer.ui.links import parse_link
    from explorer.ui.render import style_of, token_text
    from explorer.ui.state import RECORDED_PAIRS

    link, problems = parse_link(
        {"corpus": ",".join(spec.corpus), "preset": spec.preset, "merges": str(spec.merges)},
        samples=[s.name for s in list_samples()],
    )
    if problems:
        raise ValueError(f"the session's link does not open as it is: {'; '.join(problems)}")
    words = count_words(tuple(read_sample(name) for name in link.corpus), link.config)
    trainer = Trainer(words, link.config, top_k=RECORDED_PAIRS, encoding=PRESETS[spec.preset].encoding).require_room()
    trainer.run()
    # the tokens as the page writes them (a byte-level token as the text its bytes spell)
    style = style_of(link.config.unit)
    rows = [
        (
            r.step,
            token_text(r.left, style),
            token_text(r.right, style),
            token_text(r.token, style),
            r.token_id,
            r.count,
            r.replaced,
            r.tokens_after,
        )
        for r in trainer.records
    ]
    return {"final": len(rows), "stop_reason": trainer.stop_reason, "rows": rows}


def _quiet_worker() -> None:
    """Importing the UI's cached functions outside a server makes Streamlit warn; not news here."""
    from streamlit.logger import set_log_level

    set_log_level("error")


def references(specs: list[Spec]) -> list[dict]:
    """Every spec's ``reference``, in two worker processes (forked: they start at once)."""
    with multiprocessing.get_context("fork").Pool(min(2, os.cpu_count() or 1), initializer=_quiet_worker) as pool:
        return pool.map(reference, specs, chunksize=1)
