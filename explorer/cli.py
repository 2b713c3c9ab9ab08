"""Command line: ``python -m explorer train|encode|evaluate|scan|export|import|presets|settings|app|serve``.

    python -m explorer train FILE [FILE ...] --preset NAME [--vocab-size N | --merges N]
        [--tie-break first-seen|hf|subword-nmt] [--min-frequency N] [--full-byte-alphabet | --alphabet A]
        [--per-line] [--pretokenizer P] [--pattern REGEX] [--unit char|byte] [--marker M]
        [--normalizer N] [--special TOK ...] [--top-k K] [--superbpe-transition T | --picky TAU] --out DIR
        [--balance classical|parity|parity-window|parity-hybrid --dev DEV [DEV ...]
         [--global-merges N] [--window W] [--window-alpha A]]
        (with --dev or a parity balance, each FILE is one language's training text and each DEV,
        in the same order, its development text; trace.json then also holds, per merge, the
        language it served and every language's token counts)
        (a preset is the app's: sized for the corpus, 1,000 merges unless --merges or --vocab-size,
        byte level over all 256 bytes; ``--replay SEED [FILE ...]`` trains with a seed notebook's
        own settings instead, on its own corpus unless FILEs are given, as the app's replay)
    python -m explorer encode --tokenizer NAME|PATH|OWNER/REPO [--text TEXT] [--allow-special] [--dropout P --seed S]
    python -m explorer evaluate --tokenizer NAME|PATH|OWNER/REPO FILE [FILE ...] [--curve N] [--alpha A]
        (with two or more files a last line: {"files": N, "gini": G, "parity": {FILE: P, ...}})
    python -m explorer export DIR|NAME --format hf|gpt2|tiktoken|subword-nmt|minbpe|arrow|csv|trace --out PATH
    python -m explorer import FILE [FILE] --out DIR [--pretokenizer gpt2|cl100k|o200k|none|regex [--pattern REGEX]]
        [--normalizer none|nfc|nfkc|lowercase|collapse-whitespace] [--glossaries WORD|REGEX ...]
        (a FILE may be a .zip of a format's files; notes on what was assumed follow the summary line)
    python -m explorer scan --tokenizer NAME|PATH|OWNER/REPO [--reference FILE]
        (one JSON object: {"tokens": N, "unreachable": [ids], "partial_utf8": n, "unused": n|null, ...};
        a rank table's tokens that no merge makes: "not_one_merge": {"whole_piece_only": [ids], "never": [ids]})
        (--tokenizer PATH: a folder holding trace.json, a tokenizer file of any format ``import`` reads, or a
        folder of a model's tokenizer files, picked as from the Hub; --tokenizer OWNER/REPO: a Hugging Face Hub
        repository's tokenizer files, fetched into the Hub's cache, with [--revision REV]; both with
        [--pretokenizer P] [--normalizer N] for files that name none; HF_TOKEN, HF_ENDPOINT, HF_HUB_CACHE and
        HF_HUB_OFFLINE as huggingface_hub reads them)
    python -m explorer presets
    python -m explorer settings [--json]
        (every BPE_EXPLORER_* setting: its value in force and whether it came from the environment or is
        the default; --json: one object, {NAME: {"value": V, "source": S, "unit": U}, ...})
    python -m explorer serve --servers N [--port 8501] [--address 127.0.0.1 | --class] [--public-url URL]
        [--haproxy PROGRAM]
    python -m explorer app [--port 8501] [--address 127.0.0.1 | --class] [--public-url URL]
        (--class: listen on every interface, 0.0.0.0, so that students' devices reach it; both
        print the address students join at)

Every failure the user can fix exits with status 2 and one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from . import settings
from .analysis.evaluate import curve, evaluate
from .analysis.fairness import RENYI_ALPHA, check_alpha, gini, parity
from .analysis.health import scan
from .bpe.config import (
    ALPHABETS,
    PRESETS,
    SEED_REPLAYS,
    SPECIALS_IN_TEXT,
    TIE_BREAKS,
    EncodeOptions,
    TrainerConfig,
    char_level_choices,
    corpus_config,
)
from .bpe.parity import BALANCES, Balance, BalanceName, ParityTrainer
from .bpe.tokenizer import Tokenizer
from .bpe.trainer import Trainer
from .bpe.variant import Variant
from .bpe.variants import OPTIONS, VARIANTS, variant_of
from .errors import ConfigError, ExplorerError
from .formats.corpora import SAMPLE_DIR, read_text_file, require_text
from .formats.exporters import EXPORT_FORMATS, export_files
from .formats.hub import is_hub_id
from .formats.importers import IMPORT_FORMATS, import_report
from .formats.pretrained import PRETRAINED, load_pretrained, resolve_tokenizer
from .formats.trace import balanced_trace_dict, load_trace, save_trace, trace_from_tokenizer, write_trace
from .serving.serve import serve
from .stages.markers import MARKERS
from .stages.normalizers import NORMALIZERS
from .stages.pretokenizers import PRETOKENIZERS
from .stages.units import UNITS

__all__ = ["main"]


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, not argparse's usage block
        raise _UsageError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m explorer", description="Train and use byte-pair-encoding tokenizers.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    t = sub.add_parser("train", help="train on text files and write DIR/trace.json")
    # FILE and --preset are required but for --replay, which names both (_require_files_and_preset)
    t.add_argument("files", nargs="*", metavar="FILE")
    t.add_argument(
        "--preset",
        choices=list(PRESETS),
        help="the preset as the app trains it: sized for the corpus (1,000 merges unless --merges or --vocab-size), "
        "byte level over all 256 bytes",
    )
    t.add_argument(
        "--replay",
        choices=list(SEED_REPLAYS),
        metavar="SEED",
        help="replay a seed notebook (" + ", ".join(SEED_REPLAYS) + "): its preset with the notebook's own settings, "
        "on its own corpus unless FILEs are given",
    )
    size = t.add_mutually_exclusive_group()
    size.add_argument("--vocab-size", type=int, metavar="N")
    size.add_argument("--merges", type=int, metavar="N")
    t.add_argument("--tie-break", choices=list(TIE_BREAKS))
    t.add_argument("--min-frequency", type=int, metavar="N")
    t.add_argument(
        "--full-byte-alphabet",
        action="store_true",
        help="all 256 bytes in the alphabet (the byte-level presets have them already)",
    )
    t.add_argument(
        "--alphabet",
        choices=list(ALPHABETS),
        help="the alphabet: " + "; ".join(f"{k}: {v}" for k, v in ALPHABETS.items()),
    )
    t.add_argument("--per-line", action="store_true", help="each line is its own sequence (HF file training)")
    t.add_argument("--pretokenizer", choices=list(PRETOKENIZERS))
    t.add_argument("--pattern", metavar="REGEX", help="the custom regex for --pretokenizer regex")
    t.add_argument("--unit", choices=list(UNITS))
    t.add_argument("--marker", choices=list(MARKERS))
    t.add_argument("--normalizer", choices=list(NORMALIZERS))
    t.add_argument("--special", nargs="+", metavar="TOK", help="special tokens, given the first ids")
    t.add_argument(
        "--specials-in-text",
        choices=list(SPECIALS_IN_TEXT),
        help="a special token found in the corpus: cut it out of the text (split, default) or refuse the corpus",
    )
    t.add_argument("--top-k", type=int, metavar="K", help="rows of the pair table kept per step")
    for variant in VARIANTS.values():  # each variant's one setting, as the variant declares it
        if variant.flag is not None:
            t.add_argument(
                variant.flag,
                dest=variant.option,
                type=_option_reader(variant),
                metavar=variant.metavar,
                help=variant.help,
            )
    t.add_argument("--out", required=True, metavar="DIR")
    t.add_argument(
        "--balance",
        choices=list(BALANCES),
        help="how merges are shared among languages (one FILE per language): "
        + "; ".join(f"{name}: {text}" for name, text in BALANCES.items()),
    )
    t.add_argument(
        "--dev",
        nargs="+",
        metavar="DEV",
        help="one development text per language, in the order of the FILEs (required by the parity balances)",
    )
    t.add_argument(
        "--global-merges", type=int, metavar="N", help="parity-hybrid: merges chosen over all languages first"
    )
    t.add_argument("--window", type=int, metavar="W", help="parity-window: the recent merges remembered (default 100)")
    t.add_argument(
        "--window-alpha",
        type=float,
        metavar="A",
        help="parity-window: a language may serve at most A/L of the window (default 2)",
    )

    e = sub.add_parser("encode", help="encode text with a bundled or trained tokenizer; prints JSON")
    _tokenizer_options(e)
    e.add_argument("--text", help="the text (read from stdin when omitted)")
    e.add_argument(
        "--allow-special",
        action="store_true",
        help="encode special tokens in the text (e.g. <|endoftext|>) as their ids, not as plain text",
    )
    e.add_argument("--dropout", type=float, default=0.0, metavar="P")
    e.add_argument("--seed", type=int, metavar="S")

    v = sub.add_parser(
        "evaluate",
        help="count bytes, characters, words and tokens of each file; one JSON line per file, then "
        "(for two or more files) the Gini coefficient of their token counts and each one's parity",
    )
    v.add_argument("files", nargs="+", metavar="FILE")
    _tokenizer_options(v)
    v.add_argument(
        "--curve",
        type=int,
        metavar="N",
        help="add the token count at about N evenly spaced merge counts (the tokenizer truncated)",
    )
    v.add_argument(
        "--alpha",
        type=float,
        default=RENYI_ALPHA,
        metavar="A",
        help=f"the order of the Rényi efficiency (default {RENYI_ALPHA}; 1 is Shannon's entropy)",
    )

    x = sub.add_parser("export", help="write a trained or bundled tokenizer in another tool's format")
    x.add_argument(
        "source",
        metavar="DIR|NAME",
        help=f"a folder holding trace.json, or a bundled tokenizer ({', '.join(PRETRAINED)})",
    )
    x.add_argument("--format", required=True, choices=list(EXPORT_FORMATS))
    x.add_argument(
        "--out",
        required=True,
        metavar="PATH",
        help="the file to write (a folder for formats of several files, or to keep the usual file name)",
    )

    i = sub.add_parser("import", help="read another tool's tokenizer files and write DIR/trace.json")
    i.add_argument(
        "files", nargs="+", metavar="FILE", help="; ".join(f"{f.name}: {f.files}" for f in IMPORT_FORMATS.values())
    )
    i.add_argument("--out", required=True, metavar="DIR")
    i.add_argument(
        "--pretokenizer",
        choices=list(PRETOKENIZERS),
        help="how text is split, for files that do not say (vocab.json + merges.txt: gpt2 by default; "
        ".tiktoken without its JSON, unless it is a bundled table; arrow merges and the merges CSV: "
        "gpt2 for byte level, whitespace for character level by default)",
    )
    i.add_argument("--pattern", metavar="REGEX", help="the regex for --pretokenizer regex")
    i.add_argument(
        "--normalizer",
        choices=list(NORMALIZERS),
        help="the normalizer, for files that name none (all but tokenizer.json and trace.json; default none)",
    )
    i.add_argument(
        "--glossaries",
        nargs="+",
        metavar="WORD|REGEX",
        help="subword-nmt codes: words (or regexes) never split, as apply_bpe --glossaries",
    )

    h = sub.add_parser(
        "scan",
        help="token health: tokens that encoding their own text never gives, parts of a UTF-8 character, "
        "tokens a reference text never uses; prints one JSON object",
    )
    _tokenizer_options(h)
    h.add_argument("--reference", metavar="FILE", help="a text file: count the tokens its encoding never uses")

    sub.add_parser("presets", help="list the presets")
    st = sub.add_parser("settings", help="the BPE_EXPLORER_* settings in force, and where each came from")
    st.add_argument("--json", action="store_true", help="one JSON object instead of a line each")

    a = sub.add_parser("app", help="start the app (one server) on the bundled sample corpora")
    a.add_argument("--port", type=int, default=8501, help="the port browsers connect to (default 8501)")
    _listen_options(a)

    s = sub.add_parser("serve", help="serve the app for a class: N app processes behind haproxy (sticky sessions)")
    s.add_argument(
        "--servers",
        type=int,
        required=True,
        metavar="N",
        help="app processes (each uses about one core); 1 runs one server without a proxy",
    )
    s.add_argument("--port", type=int, default=8501, help="the port browsers connect to (default 8501)")
    _listen_options(s)
    s.add_argument(
        "--haproxy", metavar="PROGRAM", help="the haproxy executable (default: haproxy on PATH or in /usr/sbin)"
    )
    return p


def _tokenizer_options(p: argparse.ArgumentParser) -> None:
    """``--tokenizer`` of encode, evaluate and scan, and the options of a Hub repository's files."""
    p.add_argument(
        "--tokenizer",
        required=True,
        metavar="NAME|PATH|OWNER/REPO",
        help=f"a bundled tokenizer ({', '.join(PRETRAINED)}), a folder holding trace.json, a tokenizer file "
        "(tekken.json, tokenizer.json, a .tiktoken or tokenizer.model, subword-nmt codes, ...) or a folder of them, or a Hugging "
        "Face Hub repository id such as Qwen/Qwen2.5-7B (fetched once into the Hub's cache; HF_TOKEN for a gated one); "
        "any of them followed by @K: as of its merge K (cl100k_base@1000)",
    )
    p.add_argument("--revision", metavar="REV", help="a Hub repository's branch, tag or commit (default main)")
    p.add_argument(
        "--pretokenizer",
        choices=list(PRETOKENIZERS),
        help="the pre-tokenizer of tokenizer files (on disk or a Hub repository's) that name none (vocab.json + "
        "merges.txt: gpt2 by default; a rank file: required)",
    )
    p.add_argument(
        "--normalizer",
        choices=list(NORMALIZERS),
        help="the normalizer of tokenizer files (on disk or a Hub repository's) that name none (default none)",
    )


def _resolve(args: argparse.Namespace) -> Tokenizer:
    """The tokenizer ``--tokenizer`` names; the Hub's options only with a repository id."""
    on_disk = args.tokenizer not in PRETRAINED and Path(args.tokenizer).exists()
    hub = args.tokenizer not in PRETRAINED and not on_disk and is_hub_id(args.tokenizer)
    if args.revision is not None and not hub:
        raise ExplorerError("--revision is used only with a Hugging Face Hub repository id as --tokenizer")
    for option in ("pretokenizer", "normalizer"):
        if getattr(args, option) is not None and not (hub or on_disk):
            raise ExplorerError(
                f"--{option} is used only with tokenizer files or a Hugging Face Hub repository id as --tokenizer"
            )
    return resolve_tokenizer(
        args.tokenizer, revision=args.revision, pretokenizer=args.pretokenizer, normalizer=args.normalizer
    )


def _listen_options(p: argparse.ArgumentParser) -> None:
    """Where ``app`` and ``serve`` listen, and the address students are given."""
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--address",
        default=None,
        help="the address to listen on (default 127.0.0.1: this machine alone; 0.0.0.0: every interface)",
    )
    where.add_argument(
        "--class",
        dest="for_class",
        action="store_true",
        help="serve a class: listen on every interface (0.0.0.0), so that students' devices on the same "
        "network reach it, and print the address they join at",
    )
    p.add_argument(
        "--public-url",
        metavar="URL",
        help="the address students open when a proxy or a domain stands in front (the join links and QR "
        "codes name it; as BPE_EXPLORER_PUBLIC_URL)",
    )


def _listen_address(args: argparse.Namespace) -> str:
    """``--address``, or every interface for ``--class``, or this machine alone."""
    if args.for_class:
        return "0.0.0.0"
    return args.address or "127.0.0.1"


def _overrides(args: argparse.Namespace) -> dict:
    """The settings the options override, by TrainerConfig's names (a size flag sets the one stop
    rule it names and clears the other, as the app's size box and links do)."""
    o: dict = {}
    if args.vocab_size is not None:
        o.update(vocab_size=args.vocab_size, num_merges=None)
    if args.merges is not None:
        o.update(num_merges=args.merges, vocab_size=None)
    for name in (
        "tie_break",
        "min_frequency",
        "pretokenizer",
        "pattern",
        "unit",
        "marker",
        "normalizer",
        "specials_in_text",
        *OPTIONS.values(),  # a variant without a flag has no attribute here
    ):
        if getattr(args, name, None) is not None:
            o[name] = getattr(args, name)
    if args.special is not None:
        o["special_tokens"] = tuple(args.special)
    if args.full_byte_alphabet:
        if args.alphabet not in (None, "full-bytes"):
            raise ExplorerError(f"--full-byte-alphabet and --alphabet {args.alphabet} disagree: give one")
        o["alphabet"] = "full-bytes"
    elif args.alphabet is not None:
        o["alphabet"] = args.alphabet
    if args.per_line:
        o["sequences"] = "lines"
    return o


def _require_files_and_preset(args: argparse.Namespace) -> None:
    """FILE and --preset, in argparse's own words had it checked them: --replay names both."""
    missing = [name for name, given in (("FILE", args.files), ("--preset", args.preset)) if not given]
    if missing and args.replay is None:
        raise _UsageError(f"the following arguments are required: {', '.join(missing)}")


def _train_setup(args: argparse.Namespace) -> tuple[list[str], TrainerConfig, EncodeOptions]:
    """(the files, the config, the encoding options) a ``train`` command asks for, as the app
    makes them: a preset sized for the corpus (``corpus_config``) or, with ``--replay``, the
    seed notebook's own settings (``SEED_REPLAYS``) and, without FILEs, its own corpus; then the
    options. So one preset name, or one replay, is one tokenizer in the CLI and the app."""
    replay = SEED_REPLAYS[args.replay] if args.replay is not None else None
    if replay is None:
        preset, base = args.preset, corpus_config(args.preset)
    else:
        if args.preset not in (None, replay.preset):
            raise ExplorerError(
                f"--replay {replay.seed} trains the {replay.preset} preset with its notebook's settings: "
                f"drop --preset {args.preset}"
            )
        preset, base = replay.preset, replay.config()
    overrides = _overrides(args)
    if overrides.get("unit") == "char" and base.unit == "byte":
        # byte-only choices cannot follow a switch to characters (as in the app's advanced settings)
        base = base.replace(**char_level_choices({"alphabet": base.alphabet, "alphabet_order": base.alphabet_order}))
    files = list(args.files)
    if not files and replay is not None:
        files = [str(SAMPLE_DIR / replay.corpus)]
    return files, base.replace(**overrides), PRESETS[preset].encoding


class _Progress:
    """A plain progress bar on stderr, redrawn at most ~100 times."""

    def __init__(self, total: int | None, stream: TextIO):
        self.total, self.stream, self.last = total, stream, -1

    def update(self, done: int, *, final: bool = False) -> None:
        if self.total:
            frac = min(1.0, done / self.total)
            tick = int(frac * 100)
            if tick == self.last and not final:
                return
            self.last = tick
            bar = "#" * int(frac * 30)
            self.stream.write(f"\rtraining [{bar:<30}] {done:,}/{self.total:,} merges")
        elif final or done % 100 == 0:
            self.stream.write(f"\rtraining: {done:,} merges")
        if final:
            self.stream.write("\n")
        self.stream.flush()


def _writable_folder(path: str) -> Path:
    """The output folder, made now: a bad --out is reported before training, not after."""
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ExplorerError(f"--out {path}: a file of that name exists (give a folder)") from None
    except OSError as e:
        raise ExplorerError(f"--out {path}: cannot create the folder ({e.strerror or e})") from None
    if not os.access(folder, os.W_OK):
        raise ExplorerError(f"--out {path}: the folder is not writable")
    return folder


def _balance(args: argparse.Namespace, files: list[str]) -> Balance | None:
    """The balance asked for, or None for classical training on the files joined (no --dev)."""
    mode: BalanceName | None = args.balance or ("classical" if args.dev else None)
    for flag, value, needs in (
        ("--global-merges", args.global_merges, "parity-hybrid"),
        ("--window", args.window, "parity-window"),
        ("--window-alpha", args.window_alpha, "parity-window"),
    ):
        if value is not None and mode != needs:
            raise ExplorerError(f"{flag} is used only with --balance {needs}")
    if mode is None or (mode == "classical" and not args.dev):
        return None
    if not args.dev:
        raise ExplorerError(f"--balance {mode} needs --dev: one development text per training file")
    if len(args.dev) != len(files):
        raise ExplorerError(
            f"{len(files)} training file{'s' * (len(files) != 1)} but {len(args.dev)} development "
            f"file{'s' * (len(args.dev) != 1)}: give one --dev file per training file, in the same order"
        )
    options = {
        k: v
        for k, v in (
            ("global_merges", args.global_merges),
            ("window", args.window),
            ("window_alpha", args.window_alpha),
        )
        if v is not None
    }
    return Balance(mode, **options)


def _train_balanced(
    args: argparse.Namespace,
    balance: Balance,
    setup: tuple[list[str], TrainerConfig, EncodeOptions],
    out: TextIO,
    err: TextIO,
) -> int:
    files, config, encoding = setup
    texts = [read_text_file(f) for f in files]
    dev = [read_text_file(f) for f in args.dev]
    _writable_folder(args.out)
    trainer = ParityTrainer(
        texts,
        dev,
        config,
        balance=balance,
        names=files,
        encoding=encoding,
        **({} if args.top_k is None else {"top_k": args.top_k}),
    )
    trainer.require_room()
    bar = _Progress(trainer.planned_merges, err)
    bar.update(0)
    for record in trainer:
        bar.update(record.step)
    bar.update(len(trainer.records), final=True)
    path = save_trace(balanced_trace_dict(trainer), args.out)
    served = Counter(r.served for r in trainer.records if r.served is not None)
    out.write(
        f"{len(trainer.records)} merges ({balance.mode}), vocab {len(trainer.vocab)}, stopped: {trainer.stop_reason}; "
        + ", ".join(
            f"{name}: {served[i]} served, dev tokens {a:,} -> {b:,}"
            for i, (name, a, b) in enumerate(zip(trainer.languages, trainer.initial_dev_tokens, trainer.dev_tokens))
        )
        + f"; wrote {path}\n"
    )
    return 0


def _option_reader(variant: Variant) -> Callable[[str], Any]:
    """argparse's ``type`` for a variant's flag: the variant's ``parse``, its ConfigError's
    sentence (or, for a ValueError, the value) as argparse's one-line error.

    >>> _option_reader(VARIANTS["picky"])("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: τ is from 0 (classical BPE) to 1,000, not -1
    """

    def read(text: str) -> Any:
        try:
            return variant.parse(text)
        except ConfigError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {variant.metavar} value: {text!r}") from None

    return read


def _variant_alone(args: argparse.Namespace) -> None:
    """One variant a run (``check_variants`` says so too, in the config's words: this names the
    flags), and a variant that trains one text takes no --balance or --dev."""
    given = [VARIANTS[name] for name, option in OPTIONS.items() if getattr(args, option, None) is not None]
    if len(given) > 1:
        flags, titles = sorted(str(v.flag) for v in given), sorted(v.title for v in given)
        raise ExplorerError(f"{' and '.join(flags)} cannot be combined: train {' or '.join(titles)}")
    for variant in given:
        if variant.one_text and (args.balance is not None or args.dev):
            raise ExplorerError(
                f"{variant.flag} cannot be combined with --balance or --dev: {variant.title} trains one text"
            )


def _train(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _require_files_and_preset(args)
    _variant_alone(args)
    setup = _train_setup(args)
    balance = _balance(args, setup[0])
    if balance is not None:
        return _train_balanced(args, balance, setup, out, err)
    files, config, encoding = setup
    texts = [read_text_file(f) for f in files]
    require_text(texts)
    _writable_folder(args.out)
    trainer = Trainer.from_texts(
        texts, config, encoding=encoding, **({} if args.top_k is None else {"top_k": args.top_k})
    ).require_room()
    bar = _Progress(trainer.planned_merges, err)
    bar.update(0)
    for record in trainer:
        bar.update(record.step)
    bar.update(len(trainer.records), final=True)
    path = write_trace(trainer, args.out)
    out.write(
        f"{len(trainer.records)} merges, vocab {len(trainer.vocab)}, stopped: {trainer.stop_reason}; "
        f"tokens {trainer.initial_tokens:,} -> {trainer.tokens:,}; wrote {path}\n"
    )
    out.write(variant_of(trainer.config).summary(trainer))
    return 0


def _input_text(given: str | None) -> str:
    r"""``--text``, else standard input read as strict UTF-8: invalid bytes (on stdin) or a lone
    surrogate (what Python makes of them in an argument) are refused with a sentence, not
    replaced behind the user's back (tiktoken and HF take only valid text).

    >>> _input_text("caf\udce9")
    Traceback (most recent call last):
    ...
    explorer.errors.ExplorerError: --text is not valid UTF-8: character 3 is a lone surrogate (U+DCE9, an undecodable byte 0xe9 from the command line)
    """
    if given is None:
        raw = getattr(sys.stdin, "buffer", None)
        if raw is None:  # a text stream already (a test's, an embedding program's)
            given, where = sys.stdin.read(), "standard input"
        else:
            data = raw.read()
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError as err:
                raise ExplorerError(
                    f"standard input is not valid UTF-8: byte 0x{data[err.start]:02x} at offset {err.start:,} cannot "
                    "be decoded (convert the text to UTF-8 first, e.g. with iconv)"
                ) from None
    else:
        where = "--text"
    for k, ch in enumerate(given):
        if "\ud800" <= ch <= "\udfff":
            origin = f", an undecodable byte 0x{ord(ch) - 0xDC00:02x} from the command line" if ch >= "\udc80" else ""
            raise ExplorerError(
                f"{where} is not valid UTF-8: character {k:,} is a lone surrogate (U+{ord(ch):04X}{origin})"
            )
    return given


def _encode(args: argparse.Namespace, out: TextIO) -> int:
    if not 0.0 <= args.dropout <= 1.0:
        raise ExplorerError("--dropout must be between 0 and 1")
    tok = _resolve(args)
    text = _input_text(args.text)
    ids = tok.encode(text, allow_special=args.allow_special, dropout=args.dropout, seed=args.seed)
    # the ids as the tokenizer's file numbers them (SentencePiece's order: Llama 2's file)
    out.write(json.dumps({"ids": tok.shown_ids(ids), "tokens": tok.tokens(ids)}, ensure_ascii=False) + "\n")
    return 0


def _evaluate(args: argparse.Namespace, out: TextIO) -> int:
    if args.curve is not None and args.curve < 2:
        raise ExplorerError("--curve needs at least 2 points")
    alpha = check_alpha(args.alpha, name="--alpha")
    tok = _resolve(args)
    texts = [(f, read_text_file(f)) for f in args.files]  # every file is read before any line is printed
    tokens: list[int] = []
    for name, text in texts:
        counts = evaluate(tok, text, alpha=alpha, shortest=True)
        tokens.append(counts.tokens)
        row: dict = {"file": name, **counts.as_dict()}
        if args.curve is not None:
            row["curve"] = [list(point) for point in curve(tok, text, args.curve)]
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
    if len(texts) > 1:  # the files as parallel texts: how evenly they pay, against the first
        shares = parity(dict(zip(args.files, tokens)), args.files[0])
        out.write(json.dumps({"files": len(texts), "gini": gini(tokens), "parity": shares}, ensure_ascii=False) + "\n")
    return 0


def _scan(args: argparse.Namespace, out: TextIO) -> int:
    tok = _resolve(args)
    reference = None if args.reference is None else read_text_file(args.reference)
    report = scan(tok, reference=reference).as_dict(shown=tok.shown_ids)  # a file's own ids (SentencePiece's order)
    out.write(json.dumps(report, ensure_ascii=False) + "\n")
    return 0


def _source(name_or_dir: str) -> tuple[Tokenizer, dict]:
    """(tokenizer, trace): a trace.json keeps its training history (counts for the CSV)."""
    if name_or_dir in PRETRAINED:
        tok = load_pretrained(name_or_dir)
        return tok, trace_from_tokenizer(tok)
    return load_trace(name_or_dir)


def _export(args: argparse.Namespace, out: TextIO) -> int:
    tok, trace = _source(args.source)
    files = export_files(tok, args.format, trace=trace)
    target = Path(args.out)
    if len(files) > 1 or target.is_dir():
        folder = _writable_folder(args.out)
        paths = {folder / name: data for name, data in files.items()}
    else:
        _writable_folder(str(target.parent))
        paths = {target: next(iter(files.values()))}
    for path, data in paths.items():
        path.write_bytes(data)
    out.write(
        f"{EXPORT_FORMATS[args.format].title}: {tok.num_merges:,} merges, vocab {len(tok.vocab):,}; wrote "
        + ", ".join(str(p) for p in paths)
        + "\n"
    )
    return 0


def _import(args: argparse.Namespace, out: TextIO) -> int:
    if args.pattern is not None and args.pretokenizer != "regex":
        raise ExplorerError("--pattern is used only with --pretokenizer regex")
    files = {}
    for f in args.files:
        name = Path(f).name
        if name in files:
            raise ExplorerError(f"two files named {name}: give each file once")
        files[name] = Path(f).read_bytes()
    report = import_report(
        files,
        pretokenizer=args.pretokenizer,
        pattern=args.pattern,
        glossaries=args.glossaries or (),
        normalizer=args.normalizer,
    )
    tok = report.tokenizer
    folder = _writable_folder(args.out)  # only now: a file that cannot be read leaves nothing behind
    path = save_trace(trace_from_tokenizer(tok), folder)
    out.write(
        f"{IMPORT_FORMATS[report.format].title}: {tok.num_merges:,} merges, vocab {len(tok.vocab):,}, "
        f"{tok.pipeline.unit} level, pre-tokenizer {tok.pipeline.pretokenizer}; wrote {path}\n"
    )
    for note in report.notes:  # what the files left open and was assumed, one line each
        out.write(f"note: {note}\n")
    return 0


def _settings(args: argparse.Namespace, out: TextIO) -> int:
    """Every setting in force: a line each (name, value, where it came from, what it is), or one
    JSON object. A bad number is also logged, as the app would when reading it."""
    shown = list(settings.in_force())
    if args.json:
        out.write(
            json.dumps({s.setting.name: {"value": s.value, "source": s.source, "unit": s.setting.unit} for s in shown})
            + "\n"
        )
        return 0
    width = max(len(s.setting.name) for s in shown)
    for s in shown:
        out.write(f"{s.setting.name:<{width}}  {settings.shown(s.setting, s.value)}  [{s.source}]  {s.setting.text}\n")
    return 0


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        args = _parser().parse_args(argv)
        if args.command == "train":
            return _train(args, out, err)
        if args.command == "encode":
            return _encode(args, out)
        if args.command == "evaluate":
            return _evaluate(args, out)
        if args.command == "export":
            return _export(args, out)
        if args.command == "import":
            return _import(args, out)
        if args.command == "scan":
            return _scan(args, out)
        if args.command == "settings":
            return _settings(args, out)
        if args.command in ("serve", "app"):
            return serve(
                args.servers if args.command == "serve" else 1,
                port=args.port,
                address=_listen_address(args),
                haproxy=args.haproxy if args.command == "serve" else None,
                public_url=args.public_url,
                out=out,
                err=err,
            )
        for p in PRESETS.values():
            out.write(f"{p.name:<14} {'seed ' + p.seed if p.seed else '':<9} {p.description}\n")
        return 0
    except _UsageError as e:
        err.write(f"python -m explorer: error: {e} (see --help)\n")
    except (ExplorerError, OSError) as e:
        err.write(f"python -m explorer: error: {e}\n")
    except KeyboardInterrupt:
        err.write("python -m explorer: interrupted\n")
        return 130
    return 2
