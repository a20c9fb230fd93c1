"""What the lexical index stores: its documents, its schema, its dates.

:class:`LexicalDoc` is one blob's text as :mod:`ctx.hub.retrieval.index.lexical`
indexes it; :func:`build_schema` lists the fields the lexical module's
docstring describes; :func:`index_time` is how a memory's time is stored
(Tantivy's date field holds fewer years than a memory may carry).
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime

import msgspec
import tantivy

from ctx.hub.retrieval.index.language import LANGUAGES, field_of

__all__ = [
    "BLOB_PARTS",
    "CJK_FIELD",
    "FIRST_DATE",
    "HEX_ID",
    "LAST_DATE",
    "LONG_FIELD",
    "PASSAGES_FIELD",
    "LexicalDoc",
    "build_schema",
    "content_analyzer",
    "index_time",
    "stem_analyzer",
    "tokenizer_of",
]


class LexicalDoc(msgspec.Struct, frozen=True, kw_only=True):
    """The text of one blob, as the lexical index sees it.

    Attributes:
        blob: The blob id of the memory's content: the document's key.
        memory_id: The stable id of the memory the blob belongs to.
        kind: The memory's kind.
        context: Where the memory belongs (searched like the body).
        title: Optional one-line title (boosted by :data:`TITLE_BOOST`).
        body: The text.
        tags: ``namespace:value`` tags.
        created_at: When the remembered thing happened; a naive value is UTC.
        text_hash: A digest of the text the memory's vector is made from
            (empty for none): documents with equal digests can share a
            vector (:meth:`LexicalIndex.blobs_with_text`).
        reply_to: What the memory answers or follows (a conversation's
            previous message), embedded with it; not indexed here.
        language: The code of the memory's language when it is not English
            and Tantivy stems it (:mod:`ctx.hub.retrieval.index.language`), else empty.
        passages: For a long memory, the terms of each of its passages
            (:func:`~ctx.hub.retrieval.index.coverage.passage_index`); empty
            for a short one. Stored, not searched.
    """

    blob: str
    memory_id: str
    kind: str
    context: str
    title: str | None
    body: str
    tags: tuple[str, ...]
    created_at: datetime
    text_hash: str = ""
    reply_to: str = ""
    language: str = ""
    passages: str = ""


BLOB_PARTS = (("blob0", 0, 16), ("blob1", 16, 32), ("blob2", 32, 40))
"""A git blob id (40 hex digits) as three numeric fast fields: read by column
for a page of hits (about 0.15 µs each) instead of loading each hit's stored
document for its ``blob`` field (1-6 µs each, more for longer memories)."""

HEX_ID = re.compile(r"[0-9a-f]{40}")

CJK_FIELD = "text_cjk"
"""The field of the Chinese, Japanese and Korean in a memory's title, body
and context, as :func:`~ctx.hub.retrieval.index.terms.cjk_terms` cuts them (pairs of
characters and characters), joined by spaces; a memory without any has
none."""


PASSAGES_FIELD = "passages"
"""The stored field of a long memory's passage terms (:attr:`LexicalDoc.passages`)."""

LONG_FIELD = "long"
"""The fast field that is 1 for a long memory (none for a short one): its
:data:`PASSAGES_FIELD` is read only then."""


def build_schema() -> tantivy.Schema:
    """Returns the index's schema (the fields the module doc lists)."""
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("blob", stored=True, tokenizer_name="raw")
    for name, _, _ in BLOB_PARTS:
        builder.add_unsigned_field(name, fast=True)
    builder.add_text_field("memory_id", stored=True, tokenizer_name="raw")
    builder.add_text_field("kind", tokenizer_name="raw", index_option="basic")
    builder.add_text_field("title", tokenizer_name="en_stem")
    builder.add_text_field("body", tokenizer_name="en_stem")
    builder.add_text_field("context", tokenizer_name="en_stem")
    builder.add_text_field("tags", tokenizer_name="raw", index_option="freq")
    builder.add_text_field("tag_values", tokenizer_name="raw", index_option="basic")
    builder.add_text_field("words", tokenizer_name="whitespace", index_option="basic")
    builder.add_date_field("created_at", indexed=True, fast=True)
    builder.add_text_field(
        "text_hash", stored=True, tokenizer_name="raw", index_option="basic"
    )
    builder.add_text_field("language", tokenizer_name="raw", index_option="basic")
    for code in LANGUAGES:
        builder.add_text_field(field_of(code), tokenizer_name=tokenizer_of(code))
    builder.add_text_field(CJK_FIELD, tokenizer_name="whitespace", index_option="freq")
    builder.add_bytes_field(PASSAGES_FIELD, stored=True)
    builder.add_unsigned_field(LONG_FIELD, fast=True)
    return builder.build()


def tokenizer_of(code: str) -> str:
    """Returns the name the analyser of language ``code`` is registered by."""
    return f"ctx_{code}_stem"


def stem_analyzer() -> tantivy.TextAnalyzer:
    """Returns the analyser of the title, body and context fields."""
    # Tantivy's built-in "en_stem", rebuilt so query text is cut into exactly
    # the terms the title, body and context fields hold.
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


# English function words: what a question asks with, not what it asks about.
# (Tantivy's own English list, from Lucene, lacks "how", "we", "what", "did";
# "how many", "how much", "might" and "must" ask, they name no topic.) The
# tokenizer cuts "what's", "Sam's", "don't", "I'd", "I'll", "I'm", "you're"
# and "I've" at the apostrophe: the pieces after it are function words too
# ("s" had made "Sam's birthday" share a third of "What's my salary?"), and
# so are those before it of "isn't", "didn't" and their kin; not "don" of
# "don't", "won" of "won't", "haven" of "haven't" nor "aren" of "aren't",
# which are words (and names) of their own. A lone "d", "t" or "m" ("vitamin
# D", "T-shirt") is left out with them: BM25 still finds it.
_FUNCTION_WORDS = """
    s t d ll m re ve couldn didn doesn hadn hasn isn mightn mustn needn shan
    shouldn wasn weren wouldn
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if
    in into is it its itself just let many me might more most much must my myself no nor
    not now of off on once only or other ought our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they
    this those through to too under until up us very was we were what when where which
    while who whom whose why will with would you your yours yourself yourselves
"""


@functools.cache
def content_analyzer() -> tantivy.TextAnalyzer:
    """Returns :func:`stem_analyzer` without English function words.

    What a question is about, for its relevance: "how do we run the
    tests?" is about ``run`` and ``test``. Built once per process and shared,
    as each lexical index already shared its own between threads.
    """
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.custom_stopword(_FUNCTION_WORDS.split()))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


FIRST_DATE = datetime(1678, 1, 1, tzinfo=UTC)
LAST_DATE = datetime(2261, 12, 31, 23, 59, 59, tzinfo=UTC)
"""The times the ``created_at`` field holds. Tantivy counts nanoseconds in an
i64 (1677-09-21 to 2262-04-11) and raises ValueError past either end; memories
may carry times from 1000 to 9000 (:data:`~ctx.engine.EARLIEST_TIME`), and a
store written by another tool any time at all."""


def index_time(moment: datetime) -> datetime:
    """Returns ``moment`` in UTC, clamped to the times the date field holds.

    A memory from before 1678 is indexed as of 1678-01-01 and one after 2261
    as of its last second: the time channel cannot tell them apart, while
    gravity, which reads each memory's own time, still does. A time near the
    ends of what Python holds has no UTC value at all (9999-12-31T23:00-14:00
    would be in year 10000); comparing first never converts it.
    """
    if moment.utcoffset() is None:
        moment = moment.replace(tzinfo=UTC)
    if moment < FIRST_DATE:
        return FIRST_DATE
    if moment > LAST_DATE:
        return LAST_DATE
    return moment.astimezone(UTC)
