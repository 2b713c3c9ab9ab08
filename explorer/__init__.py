"""BPE Explorer's engine: an exact, incremental, steppable byte-pair-encoding trainer and tokenizer.

Pure Python + ``regex``; the UI in ``explorer.ui`` is the only part that imports streamlit,
pandas or altair.

>>> from explorer import make_config, train
>>> trainer = train("low low low lower newest newest widest", make_config("sennrich", num_merges=3))
>>> [(r.left, r.right, r.count) for r in trainer.records]
[('l', 'o', 4), ('lo', 'w', 4), ('low', '</w>', 3)]

The names below are the public API: training, the tokenizer, the bundled tokenizers, files in
and out, evaluation, and the errors. Everything else (each pipeline stage, the step log's
internals, the analysis helpers) stays importable from its own module, e.g.
``explorer.stages.pretokenizers.pre_tokenize_str`` or ``explorer.analysis.lineage.lineage``.
"""

from .analysis.evaluate import Evaluation, curve, evaluate, piece_counts, replay
from .bpe.config import (
    PRESETS,
    SEED_REPLAYS,
    EncodeOptions,
    Preset,
    TrainerConfig,
    corpus_config,
    make_config,
)
from .bpe.parity import Balance, ParityTrainer
from .bpe.records import PairStat, StepLog, StepRecord
from .bpe.tokenizer import Tokenizer
from .bpe.trainer import Trainer, train
from .bpe.vocab import Vocab
from .errors import ConfigError, CorpusError, DecodeError, ExplorerError, FormatError
from .formats.exporters import EXPORT_FORMATS, export_files
from .formats.importers import IMPORT_FORMATS, import_files
from .formats.pretrained import PRETRAINED, load_pretrained
from .stages.pipeline import Pipeline

__all__ = [
    # training
    "train",
    "Trainer",
    "TrainerConfig",
    "make_config",
    "corpus_config",
    "PRESETS",
    "Preset",
    "SEED_REPLAYS",
    "StepRecord",
    "StepLog",
    "PairStat",
    # training on several languages at once (parity-aware BPE)
    "ParityTrainer",
    "Balance",
    # the model: a tokenizer is a pipeline, a vocabulary and its encoding options
    "Tokenizer",
    "Pipeline",
    "Vocab",
    "EncodeOptions",
    "load_pretrained",
    "PRETRAINED",
    # files
    "export_files",
    "import_files",
    "EXPORT_FORMATS",
    "IMPORT_FORMATS",
    # evaluation
    "evaluate",
    "replay",
    "curve",
    "piece_counts",
    "Evaluation",
    # errors
    "ExplorerError",
    "ConfigError",
    "CorpusError",
    "DecodeError",
    "FormatError",
]
