"""BPE Explorer's engine: an exact, incremental, steppable byte-pair-encoding trainer and tokenizer.

Pure Python + ``regex``; the UI in ``explorer.ui`` is the only part that imports streamlit,
pandas or altair.

>>> from explorer import make_config, train
>>> trainer = train("low low low lower newest newest widest", make_config("sennrich", num_merges=3))
>>> [(r.left, r.right, r.count) for r in trainer.records]
[('l', 'o', 4), ('lo', 'w', 4), ('low', '</w>', 3)]
"""

from .analysis.evaluate import Evaluation, curve, evaluate, piece_counts, replay
from .analysis.lineage import KeywordInContext, Lineage, keyword_in_context, lineage
from .analysis.text import (
    RoundTrip,
    TextStats,
    round_trip,
    sample_segmentations,
    text_stats,
    twin_configs,
    unknown_symbols,
)
from .bpe.config import (
    DEFAULT_MERGES,
    PRESETS,
    SEED_REPLAYS,
    EncodeOptions,
    Preset,
    SeedReplay,
    TrainerConfig,
    corpus_config,
    make_config,
)
from .bpe.ranks import recover_merges, tokenizer_from_ranks
from .bpe.records import PairStat, StepLog, StepRecord
from .bpe.tokenizer import ENCODING_RULES, EncodedPiece, Tokenizer, TraceStep
from .bpe.trainer import Trainer, train
from .errors import ConfigError, CorpusError, DecodeError, ExplorerError, FormatError
from .formats.exporters import EXPORT_FORMATS, export_files
from .formats.importers import IMPORT_FORMATS, import_files
from .formats.pretrained import PRETRAINED, load_pretrained, resolve_tokenizer
from .stages.normalizers import NORMALIZERS, normalize_str
from .stages.pipeline import count_words, inspect_str
from .stages.pretokenizers import PATTERNS, PRETOKENIZERS, Piece, pre_tokenize_str, split_sequences
from .stages.units import BYTE_TO_UNICODE, bytes_to_display, display_to_bytes

__all__ = [
    "BYTE_TO_UNICODE",
    "ConfigError",
    "CorpusError",
    "DecodeError",
    "ENCODING_RULES",
    "EXPORT_FORMATS",
    "IMPORT_FORMATS",
    "EncodedPiece",
    "Evaluation",
    "ExplorerError",
    "FormatError",
    "KeywordInContext",
    "Lineage",
    "NORMALIZERS",
    "PATTERNS",
    "PRESETS",
    "PRETOKENIZERS",
    "PRETRAINED",
    "PairStat",
    "Piece",
    "Preset",
    "RoundTrip",
    "SEED_REPLAYS",
    "SeedReplay",
    "StepLog",
    "StepRecord",
    "TextStats",
    "Tokenizer",
    "TraceStep",
    "Trainer",
    "TrainerConfig",
    "bytes_to_display",
    "count_words",
    "curve",
    "display_to_bytes",
    "evaluate",
    "export_files",
    "import_files",
    "inspect_str",
    "keyword_in_context",
    "lineage",
    "load_pretrained",
    "make_config",
    "corpus_config",
    "DEFAULT_MERGES",
    "EncodeOptions",
    "normalize_str",
    "piece_counts",
    "pre_tokenize_str",
    "recover_merges",
    "replay",
    "resolve_tokenizer",
    "round_trip",
    "sample_segmentations",
    "split_sequences",
    "text_stats",
    "tokenizer_from_ranks",
    "train",
    "twin_configs",
    "unknown_symbols",
]
