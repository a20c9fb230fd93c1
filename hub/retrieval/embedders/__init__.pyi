# The embedders' public names, each once: the lazy loader in __init__.py
# reads this file, and type checkers read it as the package's interface.

from .base import (
    Embedder as Embedder,
)
from .base import (
    EmbedderError as EmbedderError,
)
from .base import (
    QueryEmbedder as QueryEmbedder,
)
from .base import (
    ReadingEmbedder as ReadingEmbedder,
)
from .base import (
    VocabularyEmbedder as VocabularyEmbedder,
)
from .base import (
    embed_queries as embed_queries,
)
from .base import (
    knows_word as knows_word,
)
from .base import (
    reads as reads,
)
from .e5 import (
    MultilingualE5Embedder as MultilingualE5Embedder,
)
from .factory import (
    DEFAULT_KIND as DEFAULT_KIND,
)
from .factory import (
    EMBEDDER_KINDS as EMBEDDER_KINDS,
)
from .factory import (
    make_embedder as make_embedder,
)
from .hashing import (
    HashingEmbedder as HashingEmbedder,
)
from .minilm import (
    MiniLMEmbedder as MiniLMEmbedder,
)
from .remote import (
    OllamaEmbedder as OllamaEmbedder,
)
from .remote import (
    OpenAIEmbedder as OpenAIEmbedder,
)
from .wordpiece import (
    WordPieceTokenizer as WordPieceTokenizer,
)
from .wordpiece import (
    whole_words as whole_words,
)
