"""Rebuilds Dream's labelled cases from LoCoMo (never committed: CC BY-NC 4.0).

Usage::

    .venv/bin/python benchmarks/dream_cases.py [--eval-dir ../shared/eval]

prints how many cases of each kind it makes; ``bench_dream.py`` imports
:func:`build_cases`. Every text is a real LoCoMo dialogue turn
("<speaker>: <text>"); the labels come from how each case is made, with a
fixed seed, so the set is the same on every run:

- duplicate (positive): a turn and the same turn re-typed: case changed,
  punctuation dropped or added, a filler word ("really", "so", "just", ...)
  removed, written again 0-3 days later.
- update (positive): a turn and the same turn with one value changed (a
  number, or a capitalised name swapped for another name of the same
  conversation), written 7-60 days later.
- contradiction (positive): a turn and the same turn negated at its first
  auxiliary verb ("is" -> "is not", "like" -> "don't like"), the same day.
- link (positive): two different turns that are evidence of the same
  question (categories 1-4): LoCoMo's authors marked both as needed to
  answer it.
- negatives for every pair kind: a turn and its nearest other turn of
  another conversation by MiniLM (hard negatives: about the same kind of
  thing, but other people's lives, so no shared entity and no relation a
  reviewer would keep), and two random turns of different sessions of one
  conversation that no question cites together.
- a turn and its nearest other turn of the same conversation that no
  question cites together: a negative for duplicate, update and
  contradiction (different turns), but *not* a known negative for links
  (``link_known`` false). Read by hand, most of these pairs that share a
  rare word are the two halves of one exchange about one thing (a trip to
  Italy, a dog called Luna, a tattoo): "not linked" would be a wrong label
  for them, so a link the rule makes there is counted apart, neither right
  nor wrong. (Until 2026-11-26 these pairs were link negatives, and pairs
  that a question of category 2-4 cites together could be negatives too.)
- one speaker on two days: a turn and a random turn of the same speaker in
  another session of the same conversation, that no question cites
  together: a known negative for every kind. The speaker's tag is the
  subject a LoCoMo store gives each turn, so this is where a rule of one
  shared subject tag is tested (added 2026-11-29, with a seed of its own:
  the cases above are unchanged). Random pairs of one speaker are not all
  unrelated, but no question needs them together, which is what the
  positives are.
- A pair whose texts are equal once normalised is dropped (LoCoMo repeats
  "Thanks!" and the like: those are true duplicates, not negatives).
- recurrence: a turn with a recurring phrase appended ("every Tuesday",
  "each month", "on weekends", ...; positive, with the period it names)
  or a one-off time phrase ("last Tuesday", "on 3 May", "next month", ...;
  negative).

Pair labels say what the pair is *made as*. Each case names the
conversations its turns come from (``store``): a store of those turns is
where a name's rarity is counted.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

SEED = 17
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
PER_KIND = 240
_FILLERS = ("really", "so", "just", "actually", "very", "totally", "definitely")
_AUX = re.compile(
    r"\b(is|was|are|were|am|have|has|had|can|will|would|could|should|do|does|did)\b"
)
_VERB = re.compile(r"\b(I|we|you|they) (like|love|want|need|think|know|enjoy)\b")
_NUMBER = re.compile(r"\b\d+\b")
_NAME = re.compile(r"(?<=[a-z,] )[A-Z][a-z]{2,}\b")
RECURRING = (
    ("every Tuesday", "weekly"),
    ("on weekends", "weekly"),
    ("every Monday morning", "weekly"),
    ("each month", "monthly"),
    ("on the 1st of every month", "monthly"),
    ("every year", "yearly"),
    ("every March", "yearly"),
    ("every summer", "yearly"),
    ("every morning", "daily"),
    ("every night", "daily"),
    ("daily", "daily"),
    ("weekly", "weekly"),
    ("every week", "weekly"),
    ("each quarter", "quarterly"),
)
ONE_OFF = (
    "last Tuesday",
    "on 3 May",
    "next month",
    "yesterday",
    "two weeks ago",
    "this morning",
    "in March 2023",
    "last summer",
    "on Friday",
    "tomorrow",
    "in 2022",
    "next week",
)


@dataclass(frozen=True)
class Turn:
    conversation: str
    dia_id: str
    session: int
    text: str
    when: datetime


@dataclass(frozen=True)
class PairCase:
    """Two memories and what the pair is made as (None: nothing)."""

    label: str | None
    a: str
    a_when: datetime
    b: str
    b_when: datetime
    how: str
    store: tuple[str, ...] = ()
    link_known: bool = True


@dataclass(frozen=True)
class SingleCase:
    """One memory and the ``recurs:`` period it names (None: none)."""

    period: str | None
    text: str
    when: datetime


def load_turns(eval_dir: Path) -> tuple[list[Turn], list[tuple[str, list[str]]]]:
    """Returns every turn, and the evidence ids of each question citing two or more."""
    data = json.loads((eval_dir / "locomo" / "locomo10.json").read_text())
    turns: list[Turn] = []
    multi: list[tuple[str, list[str]]] = []
    for sample in data:
        conv = sample["conversation"]
        for key, session in conv.items():
            match = re.fullmatch(r"session_(\d+)", key)
            if not match or not isinstance(session, list):
                continue
            stamp = datetime.strptime(conv[f"{key}_date_time"], DATE_FORMAT)
            for turn in session:
                turns.append(
                    Turn(
                        sample["sample_id"],
                        turn["dia_id"],
                        int(match.group(1)),
                        f"{turn['speaker']}: {turn['text']}",
                        stamp.replace(tzinfo=UTC),
                    )
                )
        for qa in sample["qa"]:
            ids = [e for e in qa.get("evidence", []) if re.fullmatch(r"D\d+:\d+", e)]
            if qa["category"] in (1, 2, 3, 4) and len(set(ids)) >= 2:
                multi.append((sample["sample_id"], sorted(set(ids))))
    return turns, multi


def _normal(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def _retype(text: str, rng: random.Random) -> str:
    speaker, _, said = text.partition(": ")
    words = said.split()
    fillers = [i for i, w in enumerate(words) if w.lower().strip(",.!?") in _FILLERS]
    if fillers and rng.random() < 0.5:
        del words[rng.choice(fillers)]
    said = " ".join(words)
    choice = rng.randrange(3)
    if choice == 0:
        said = said.lower()
    elif choice == 1:
        said = re.sub(r"[!?.,]", "", said)
    else:
        said = said.rstrip("!.?") + "!"
    return f"{speaker}: {said}"


def _changed(text: str, names: list[str], rng: random.Random) -> str | None:
    numbers = list(_NUMBER.finditer(text))
    if numbers:
        m = rng.choice(numbers)
        value = int(m.group()) + rng.randint(1, 9)
        return text[: m.start()] + str(value) + text[m.end() :]
    found = [m for m in _NAME.finditer(text) if m.group() in names]
    if found:
        m = rng.choice(found)
        other = rng.choice([n for n in names if n != m.group()])
        return text[: m.start()] + other + text[m.end() :]
    return None


def _negated(text: str) -> str | None:
    if m := _VERB.search(text):
        return text[: m.start()] + f"{m.group(1)} don't {m.group(2)}" + text[m.end() :]
    if m := _AUX.search(text.partition(": ")[2]):
        offset = len(text.partition(": ")[0]) + 2
        end = offset + m.end()
        return text[:end] + " not" + text[end:]
    return None


def build_cases(
    eval_dir: Path,
    neighbour: dict[str, str] | None = None,
    foreign: dict[str, str] | None = None,
) -> tuple[list[PairCase], list[SingleCase]]:
    """Returns the pair cases and the single-memory (recurrence) cases.

    Args:
        eval_dir: The folder holding ``locomo/locomo10.json``.
        neighbour: For hard negatives, each turn's nearest other turn of its
            conversation (``conversation/dia_id`` both); made by the caller,
            who has the embedder. Without it, hard negatives are left out.
        foreign: Each turn's nearest turn of another conversation (the same
            form), for the hard link negatives.
    """
    rng = random.Random(SEED)
    turns, multi = load_turns(eval_dir)
    by_key = {f"{t.conversation}/{t.dia_id}": t for t in turns}
    names_of: dict[str, list[str]] = {}
    for t in turns:
        names_of.setdefault(t.conversation, [])
        for name in _NAME.findall(t.text):
            if name not in names_of[t.conversation]:
                names_of[t.conversation].append(name)
    pool = [t for t in turns if len(t.text.split()) >= 6]
    rng.shuffle(pool)
    pairs: list[PairCase] = []
    made: Counter[str] = Counter()

    def add(case: PairCase, counted: str | None = None) -> None:
        if _normal(case.a) == _normal(case.b) and case.label != "duplicate":
            return
        pairs.append(case)
        made[counted or case.label or "none"] += 1

    for t in pool:
        own = (t.conversation,)
        if made["duplicate"] < PER_KIND:
            copy = _retype(t.text, rng)
            later = t.when + timedelta(days=rng.randint(0, 3))
            add(PairCase("duplicate", t.text, t.when, copy, later, "re-typed", own))
            continue
        new = _changed(t.text, names_of[t.conversation], rng)
        if made["update"] < PER_KIND and new is not None:
            later = t.when + timedelta(days=rng.randint(7, 60))
            add(PairCase("update", t.text, t.when, new, later, "value changed", own))
            continue
        if made["contradiction"] < PER_KIND and (neg := _negated(t.text)) is not None:
            add(PairCase("contradiction", t.text, t.when, neg, t.when, "negated", own))
    cited: set[tuple[str, str]] = set()
    for conv, ids in multi:
        for i, x in enumerate(ids):
            for y in ids[i + 1 :]:
                cited.add((f"{conv}/{x}", f"{conv}/{y}"))
                cited.add((f"{conv}/{y}", f"{conv}/{x}"))
    links = sorted((x, y) for x, y in cited if x < y)
    rng.shuffle(links)
    for x, y in links:
        if made["link"] >= PER_KIND:
            break
        a, b = by_key.get(x), by_key.get(y)
        if a is not None and b is not None:
            own = (a.conversation,)
            add(PairCase("link", a.text, a.when, b.text, b.when, "co-evidence", own))
    for found, how in ((neighbour, "nearest turn"), (foreign, "nearest foreign")):
        keys = sorted(found or {})
        rng.shuffle(keys)
        wanted = PER_KIND * 2 if how == "nearest turn" else PER_KIND
        for key in keys:
            if made[how] >= wanted:
                break
            if (key, (found or {})[key]) in cited:
                continue
            a, b = by_key[key], by_key[(found or {})[key]]
            store = tuple(sorted({a.conversation, b.conversation}))
            near = how == "nearest turn"
            case = PairCase(None, a.text, a.when, b.text, b.when, how, store, not near)
            add(case, how)
    while made["random turns"] < PER_KIND:
        a, b = rng.sample(pool, 2)
        pair = (f"{a.conversation}/{a.dia_id}", f"{b.conversation}/{b.dia_id}")
        if a.session == b.session or pair in cited:
            continue
        store = tuple(sorted({a.conversation, b.conversation}))
        case = PairCase(None, a.text, a.when, b.text, b.when, "random turns", store)
        add(case, "random turns")
    pairs += _same_speaker(turns, cited)
    singles: list[SingleCase] = []
    for n, t in enumerate(pool[: PER_KIND * 2]):
        said = t.text.rstrip(".!? ")
        if n % 2 == 0:
            phrase, period = RECURRING[n // 2 % len(RECURRING)]
            singles.append(SingleCase(period, f"{said} {phrase}.", t.when))
        else:
            phrase = ONE_OFF[n // 2 % len(ONE_OFF)]
            singles.append(SingleCase(None, f"{said} {phrase}.", t.when))
    return pairs, singles


SAME_SPEAKER = "same speaker, other day"


def _same_speaker(turns: list[Turn], cited: set[tuple[str, str]]) -> list[PairCase]:
    """Returns known negatives of one speaker on two days (see the docstring).

    A seed of their own, so that the cases made before stay as they were.
    """
    rng = random.Random(SEED + 1)
    pool = [t for t in turns if len(t.text.split()) >= 6]
    by_speaker: dict[tuple[str, str], list[Turn]] = {}
    for t in pool:
        by_speaker.setdefault((t.conversation, t.text.partition(": ")[0]), []).append(t)
    groups = sorted(by_speaker)
    out: list[PairCase] = []
    while len(out) < PER_KIND:
        a, b = rng.sample(by_speaker[rng.choice(groups)], 2)
        pair = (f"{a.conversation}/{a.dia_id}", f"{b.conversation}/{b.dia_id}")
        if (
            a.session == b.session
            or pair in cited
            or _normal(a.text) == _normal(b.text)
        ):
            continue
        own = (a.conversation,)
        out.append(PairCase(None, a.text, a.when, b.text, b.when, SAME_SPEAKER, own))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--eval-dir",
        type=Path,
        default=Path(__file__).resolve().parent.parent.parent / "shared" / "eval",
    )
    args = parser.parse_args()
    pairs, singles = build_cases(args.eval_dir)
    print(Counter(c.label or f"none ({c.how})" for c in pairs))
    print(Counter(c.period or "none" for c in singles))


if __name__ == "__main__":
    main()
