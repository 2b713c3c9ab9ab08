"""Training variants as strategies: the trainer finds a config's variant in one registry
(``explorer.bpe.variants.VARIANTS``) and calls its hooks (the texts counted, start, the stop
rule, a transition, after each merge); SuperBPE and PickyBPE are such variants. Their merges
are checked against slow references in test_superbpe.py and test_picky.py; here, that the hooks
are called where they say, and that a trainer keeps its variant across a copy or a pickle."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from conftest import read_sample
from test_cli import run

from explorer import Balance, ConfigError, ParityTrainer, Tokenizer, Trainer, TrainerConfig, make_config, train
from explorer.bpe.parity import BALANCE_RULES, BALANCES, BalanceRule
from explorer.bpe.variant import PAIR_SHIFT, MergeEvent, Variant, VariantConfig
from explorer.bpe.variants import VARIANTS, variant_of
from explorer.formats.trace import load_trace


class Recording(Variant):
    """Classical BPE that notes every hook call, reads the texts twice, makes one transition
    after two merges and stops after four with a reason of its own."""

    name = "recording"
    title = "Recording"
    description = "classical BPE that notes its hooks"
    option = "recording"

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def count(self, texts: str | Iterable[str], config: VariantConfig) -> tuple[dict[str, int], Any]:
        words, _ = super().count(texts, config)
        return words, len(words)

    def start(self, trainer: Any, extra: Any) -> None:
        self.calls.append(("start", extra, len(trainer.merges)))

    def stop(self, trainer: Any) -> str | None:
        return "four made" if len(trainer.merges) >= 4 else super().stop(trainer)

    def transition_at(self, config: VariantConfig) -> int | None:
        return 2

    def transition(self, trainer: Any) -> None:
        self.calls.append(("transition", len(trainer.merges)))

    def after_merge(self, trainer: Any, event: MergeEvent) -> None:  # type: ignore[override]
        self.calls.append(("merge", event.left, event.right, event.new_id, event.replaced))


def test_the_trainer_calls_a_registered_variants_hooks_where_they_say(monkeypatch):
    recording = Recording()
    monkeypatch.setitem(VARIANTS, "recording", recording)
    text = "low low low lower lower newest newest widest"
    trainer = train(text, make_config("sennrich", num_merges=10, recording=True))
    classical = train(text, make_config("sennrich", num_merges=4))
    assert trainer.stop_reason == "four made"
    assert trainer.merges == classical.merges  # its hooks change nothing else
    merged = [("merge", r.left_id, r.right_id, r.token_id, r.replaced) for r in trainer.records]
    assert recording.calls == [("start", len(trainer.words), 0), *merged[:2], ("transition", 2), *merged[2:]]


def test_a_config_finds_its_variant_and_each_variant_says_why_it_cannot_train_with_parity():
    assert [variant_of(make_config("gpt2", **s)).name for s in ({}, {"superbpe_transition": 5}, {"picky": 0.1})] == [
        "classical",
        "superbpe",
        "picky",
    ]
    with pytest.raises(ConfigError, match="PickyBPE and SuperBPE cannot be combined"):
        make_config("gpt2", superbpe_transition=5, picky=0.1)
    for setting, sentence in (({"superbpe_transition": 5}, "no SuperBPE stage"), ({"picky": 0.1}, "removes no tokens")):
        with pytest.raises(ConfigError, match=sentence):
            ParityTrainer(["a b"], ["a b"], make_config("gpt2", **setting))


class UntilShare(Variant):
    """A new variant, declared in one place as README's "Adding a variant" says: classical BPE
    that stops once merging has brought the corpus down to a share of its tokens."""

    name = "until-share"
    title = "Until a share"
    description = "classical BPE until the corpus is down to a share of its tokens"
    option = "until_share"
    flag = "--until-share"
    metavar = "S"
    help = "stop once the corpus is down to S (0 < S < 1) of the tokens it started with"

    def parse(self, text: str) -> float:
        return float(text)

    def check(self, config: VariantConfig) -> None:
        if not 0 < self.setting(config) < 1:
            raise ConfigError("the share must be between 0 and 1")

    def stop(self, trainer: Any) -> str | None:
        if trainer.tokens <= self.setting(trainer.config) * trainer.initial_tokens:
            return "share"
        return super().stop(trainer)

    def summary(self, trainer: Any) -> str:
        return f"down to {trainer.tokens / trainer.initial_tokens:.1%} of its tokens\n"


UNTIL_SHARE = UntilShare()  # the name a pickled trainer finds its variant by


def test_a_variant_registered_in_one_line_is_a_setting_of_the_config_the_command_line_and_trace_json(
    monkeypatch, tmp_path
):
    with pytest.raises(TypeError, match="until_share"):
        TrainerConfig(until_share=0.5)  # not a setting until its variant is registered
    monkeypatch.setitem(VARIANTS, UNTIL_SHARE.name, UNTIL_SHARE)

    text = read_sample("english_frankenstein.txt")[:20_000]
    config = make_config("sennrich", num_merges=2_000, until_share=0.6)
    assert (config.until_share, variant_of(config), variant_of(config.replace(until_share=None)).name) == (
        0.6,
        UNTIL_SHARE,
        "classical",
    )
    trainer = train(text, config)
    whole = train(text, config.replace(until_share=None))
    assert trainer.stop_reason == "share" and trainer.merges == whole.merges[: len(trainer.merges)]
    # the first merge that reaches the share, not one later
    assert trainer.tokens <= 0.6 * trainer.initial_tokens < whole.records[len(trainer.merges) - 2].tokens_after
    with pytest.raises(ConfigError, match="between 0 and 1"):
        make_config("sennrich", until_share=1.5)

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text, encoding="utf-8")
    code, out, err = run("train", str(corpus), "--preset", "sennrich", "--until-share", "0.6", "--out", str(tmp_path))
    assert code == 0, err
    assert out.splitlines()[1] == f"down to {trainer.tokens / trainer.initial_tokens:.1%} of its tokens"
    data = json.loads((tmp_path / "trace.json").read_text(encoding="utf-8"))
    assert (data["training"]["until_share"], data["stop_reason"]) == (0.6, "share")
    assert TrainerConfig.from_dict(data["config"]).until_share == 0.6
    tokenizer, _ = load_trace(tmp_path)
    assert tokenizer.encode(text[:2_000]) == trainer.tokenizer().encode(text[:2_000])
    code, out, err = run("train", str(corpus), "--preset", "sennrich", "--until-share", "x", "--out", str(tmp_path))
    assert (code, out, err.count("\n")) == (2, "", 1) and "argument --until-share: invalid S value: 'x'" in err
    code, out, err = run("train", str(corpus), "--preset", "sennrich", "--until-share", "2", "--out", str(tmp_path))
    assert (code, out) == (2, "") and "the share must be between 0 and 1" in err


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_superbpe_trainer_copied_before_its_transition_trains_on_as_the_original(how):
    text = read_sample("english_frankenstein.txt")[:20_000]
    cfg = make_config("gpt2", vocab_size=None, num_merges=120, superbpe_transition=60, sequences="lines")
    whole = train(text, cfg)
    t = Trainer.from_texts(text, cfg)
    t.advance(30)
    twin = copy.deepcopy(t) if how == "deepcopy" else pickle.loads(pickle.dumps(t))
    t.advance(40)  # the original passes its transition: the copy must not see it
    twin.run()
    assert twin.transitioned_at == whole.transitioned_at == 60
    assert twin.merges == whole.merges
    assert twin.tokenizer().pipeline.pretokenizer == "gpt2-superwords"


def test_a_tokenizer_made_from_a_trainers_merges_encodes_as_the_trainers_own():
    text = read_sample("english_frankenstein.txt")[:20_000]
    cfg = make_config("gpt2", vocab_size=None, num_merges=200, special_tokens=("<|endoftext|>",))
    trainer = train(text, cfg)
    tok = Tokenizer.from_merges(cfg, trainer.alphabet, trainer.merges)
    held_out = read_sample("english_frankenstein.txt")[20_000:24_000] + "<|endoftext|>"
    assert tok.encode(held_out, allow_special=True) == trainer.tokenizer().encode(held_out, allow_special=True)
    assert tok.vocab.tokens[0] == "<|endoftext|>" and tok.encode(held_out, allow_special=True)[-1] == 0


class Unmerged:
    """A piece merger that merges nothing (a variant's own encoder, for the test below)."""

    no_dropout = "this variant keeps pieces whole"

    def merge(self, ids: list[int]) -> tuple[int, ...]:
        return tuple(ids)

    def steps(self, links: Any) -> Iterator[tuple[int, int, tuple[int, ...], bool]]:
        return iter(())


class Raw(Variant):
    name = "raw"
    title = "Raw"
    description = "encodes every piece unmerged"

    def piece_merger(self, tokenizer: Any) -> Unmerged | None:
        return Unmerged() if "<raw>" in tokenizer.vocab.special_tokens else None


def test_a_tokenizer_encodes_with_the_piece_merger_its_variant_gives(monkeypatch):
    monkeypatch.setitem(VARIANTS, "raw", Raw())
    text = "low low lower lowest"
    plain = train(text, make_config("sennrich", num_merges=5)).tokenizer()
    raw = train(text, make_config("sennrich", num_merges=5, special_tokens=("<raw>",))).tokenizer()
    assert len(plain.encode("lowest")) < 7  # merged: the classical encoder
    assert raw.tokens(raw.encode("lowest")) == ["l", "o", "w", "e", "s", "t", "</w>"]
    assert raw.encode_trace("lowest") == []
    with pytest.raises(ConfigError, match="keeps pieces whole"):
        raw.encode("lowest", dropout=0.5, seed=1)


class RoundRobin(BalanceRule):
    """Serves the languages in turn, each with its own most frequent pair."""

    description = "each language in turn"

    def choose(self, trainer: Any, balance: Balance) -> Any:
        lang = len(trainer.merges) % len(trainer.languages)
        best = trainer.language_trainer(lang).best_pair()
        if best is None:
            return "no pairs left"
        return best[0] << PAIR_SHIFT | best[1], best[2], lang, "worst"


def test_a_balance_registered_beside_parity_chooses_the_merges_of_parity_aware_training(monkeypatch):
    monkeypatch.setitem(BALANCE_RULES, "round-robin", RoundRobin())
    assert BALANCES["round-robin"] == "each language in turn"  # what the command line offers
    cfg = make_config("gpt2", vocab_size=None, num_merges=6)
    texts = ["the cat sat on the mat " * 20, "der Hund und der Mann " * 2]  # parity would serve the first
    t = ParityTrainer(texts, texts, cfg, balance=Balance("round-robin")).run()
    assert [r.served for r in t.records] == [0, 1, 0, 1, 0, 1]
    assert all(r.token.replace("Ġ", " ") in texts[r.served] for r in t.records)  # each its own language's pair
