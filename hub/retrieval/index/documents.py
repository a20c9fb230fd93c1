"""What the indexes see of a memory blob: its document and the text of its vector.

The lexical index gets a :class:`~ctx.hub.retrieval.index.lexical.LexicalDoc` per blob;
the vector index gets one vector, made from :func:`embed_text`, and keyed in
the embedding cache by :func:`text_hash` of that text.
"""

from __future__ import annotations

import blake3
import msgspec

from ctx.engine import Memory, Snapshot
from ctx.hub.retrieval.index.coverage import passage_index
from ctx.hub.retrieval.index.language import asks, detect, preload
from ctx.hub.retrieval.index.schema import LexicalDoc

__all__ = [
    "REPLY_TO",
    "UNTOLD",
    "embed_text",
    "lexical_doc",
    "memory_embed_text",
    "text_hash",
    "told",
]

REPLY_TO = "reply_to"
"""The ``meta`` key of what a memory answers or follows (a conversation's
previous message): its vector is made from that text and its own, so a
question about what was asked finds the answer. Search and recall show it
nowhere."""


def text_hash(text: str) -> str:
    """Returns the embedding cache's key for a text: 128 bits of its blake3."""
    return blake3.blake3(text.encode()).hexdigest(length=16)


UNTOLD = "?"
"""The language of a document whose text needs the detector, made ``later``."""


def lexical_doc(
    snap: Snapshot, path: str, blob: str, *, later: bool = False, load: bool = True
) -> LexicalDoc:
    """Returns the document of the memory in ``blob`` at ``path`` of ``snap``.

    With ``later``, a text that needs the language detector
    (:func:`~ctx.hub.retrieval.index.language.asks`) gets the language :data:`UNTOLD`,
    to be told by :func:`told`, and the detector starts loading meanwhile
    (unless not ``load``: the hub tells it, after the answer).
    """
    record = snap.record(path, blob)
    memory = record.memory
    text = f"{memory.title or ''}\n{memory.body}"
    if not asks(text):
        language = ""
    elif later:
        if load:
            preload()
        language = UNTOLD
    else:
        language = detect(text) or ""
    doc = LexicalDoc(
        blob=blob,
        memory_id=memory.id,
        kind=memory.kind,
        context=record.context,
        title=memory.title,
        body=memory.body,
        tags=memory.tags,
        created_at=memory.created_at,
        reply_to=memory.meta.get(REPLY_TO, ""),
        language=language,
    )
    embedded = embed_text(doc)
    return msgspec.structs.replace(
        doc, text_hash=text_hash(embedded), passages=passage_index(embedded)
    )


def told(doc: LexicalDoc) -> LexicalDoc:
    """Returns ``doc`` with its language told if it was :data:`UNTOLD`."""
    if doc.language != UNTOLD:
        return doc
    language = detect(f"{doc.title or ''}\n{doc.body}") or ""
    return msgspec.structs.replace(doc, language=language)


def embed_text(doc: LexicalDoc) -> str:
    """Returns the text of a memory that its vector is made from.

    Its ``reply_to`` context (:data:`REPLY_TO`), title and body, each that
    is there on its own line.
    """
    return _joined(doc.reply_to, doc.title, doc.body)


def memory_embed_text(memory: Memory) -> str:
    """Returns the text a memory's vectors are made from, as :func:`embed_text`."""
    return _joined(memory.meta.get(REPLY_TO, ""), memory.title, memory.body)


def _joined(reply_to: str, title: str | None, body: str) -> str:
    return "\n".join(part for part in (reply_to, title, body) if part)
