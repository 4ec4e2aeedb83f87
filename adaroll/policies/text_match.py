"""The text side of the small policy's features (:mod:`adaroll.policies.features`): hashed word
and character n-gram ids, the words, quoted spans and parts of a text, what the instruction
alone determines (its words, quoted spans, candidate strings), and :func:`text_match`, the
exact match features of a text against the instruction."""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_QUOTED = re.compile(r'"([^"]*)"|\u201c([^\u201d]*)\u201d')
_STRIP = ".,;:!?()[]{}<>'\"\u201c\u201d\u2018\u2019"
_PART_SPLIT = re.compile(r":\s+|\s{2,}|\s+[-\u2013\u2014|\u00b7]\s+")
MAX_PARTS = 12


# -- text -------------------------------------------------------------------------------------


@lru_cache(maxsize=1 << 16)
def normalise(text: str) -> str:
    """Case-folded text with whitespace collapsed."""
    return " ".join(text.casefold().split())


@lru_cache(maxsize=1 << 16)
def words(text: str) -> tuple[str, ...]:
    """Lower-cased alphanumeric words of ``text`` (punctuation separates words)."""
    return tuple(_WORD.findall(text.casefold()))


def stable_hash(token: str, buckets: int) -> int:
    """A process-independent hash of ``token`` into ``1 .. buckets - 1`` (0 is never used)."""
    return zlib.crc32(token.encode("utf-8")) % (buckets - 1) + 1


@lru_cache(maxsize=1 << 17)
def word_ids(word: str, buckets: int, n: int) -> tuple[int, ...]:
    """Hashed ids of one word: the whole word plus its character n-grams (with boundaries)."""
    ids = [stable_hash("w:" + word, buckets)]
    padded = f"<{word}>"
    if n > 0:
        for i in range(max(1, len(padded) - n + 1)):
            ids.append(stable_hash("c:" + padded[i : i + n], buckets))
    return tuple(ids)


@lru_cache(maxsize=1 << 16)
def text_ids(text: str, buckets: int, n: int, max_words: int = 24) -> np.ndarray:
    """The bag of hashed ids of a whole text (all its words); a marker id when it has none."""
    ws = words(text)[:max_words]
    if not ws:
        return np.array([stable_hash("<empty>", buckets)], dtype=np.int64)
    out: list[int] = []
    for w in ws:
        out.extend(word_ids(w, buckets, n))
    arr = np.array(out, dtype=np.int64)
    arr.setflags(write=False)
    return arr


@lru_cache(maxsize=4096)
def token_ids(token: str, buckets: int) -> np.ndarray:
    """A one-id bag for a symbolic token (role names, keys, markers)."""
    arr = np.array([stable_hash("t:" + token, buckets)], dtype=np.int64)
    arr.setflags(write=False)
    return arr


@lru_cache(maxsize=1 << 16)
def trigrams(text: str) -> frozenset[str]:
    padded = f" {normalise(text)} "
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def quoted_spans(instruction: str) -> list[str]:
    """Non-empty double-quoted spans of the instruction ("..." or curly quotes), in order."""
    out = []
    for m in _QUOTED.finditer(instruction):
        span = m.group(1) if m.group(1) is not None else m.group(2)
        if span.strip():
            out.append(span)
    return out


@lru_cache(maxsize=1 << 16)
def element_parts(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Sub-strings of an element text offered as answer candidates (source ``part``), each with
    its left context (up to two words before it): the segments between ``": "``, runs of
    spaces and dashes, and the single tokens of multi-token segments. ``"Phone: 555-1234"``
    gives ``("Phone", ()), ("555-1234", ("phone",))``; ``"Storage: 33 GB of 64 GB used"``
    gives the number ``"33"`` with left context ``("storage",)``."""
    text = text.strip()
    if not text or len(text) > 120:
        return ()
    segments = [seg.strip() for seg in _PART_SPLIT.split(text)]
    segments = [seg for seg in segments if seg]
    out: list[tuple[str, tuple[str, ...]]] = []
    seen = {text}
    left: list[str] = []
    for seg in segments:
        if len(segments) > 1 and seg not in seen:
            seen.add(seg)
            out.append((seg, tuple(left[-2:])))
        toks = [t.strip(",;!?()") for t in seg.split()]
        toks = [t for t in toks if t]
        for t in toks:
            if len(toks) > 1 and t not in seen:
                seen.add(t)
                out.append((t, tuple(left[-2:])))
            left.extend(words(t))
    return tuple(out[:MAX_PARTS])


def contains_sequence(haystack: str, needle: tuple[str, ...]) -> bool:
    """Whether the word sequence ``needle`` occurs contiguously in ``haystack`` (" w1 w2 ... ")."""
    return bool(needle) and (" " + " ".join(needle) + " ") in haystack


# -- per-instruction information ------------------------------------------------------------------


@dataclass
class _InstructionCandidate:
    text: str
    quoted: bool
    qidx: int
    rel_pos: float
    left: tuple[str, ...]


@dataclass(eq=False)  # hashed by identity (instances are cached per instruction string)
class InstructionInfo:
    """Everything derived from the instruction text alone (cached per instruction string)."""

    word_list: tuple[str, ...]
    word_in_quote: np.ndarray
    word_qidx: np.ndarray
    word_first: np.ndarray
    word_set: frozenset[str]
    seq: str
    tri: frozenset[str]
    quoted: tuple[str, ...]
    quoted_norm: tuple[str, ...]
    quoted_words: tuple[frozenset[str], ...]
    quoted_tri: tuple[frozenset[str], ...]
    candidates: tuple[_InstructionCandidate, ...]


@lru_cache(maxsize=4096)
def instruction_info(instruction: str, max_words: int, max_ngram: int) -> InstructionInfo:
    spans = quoted_spans(instruction)
    # Words with quote membership, by walking the instruction's quoted and unquoted segments.
    wl: list[str] = []
    inq: list[float] = []
    qid: list[float] = []
    first: list[float] = []
    cands: list[_InstructionCandidate] = []
    pos = 0
    q = 0
    segments: list[tuple[str, int, int]] = []  # (text, qidx or -1, start)
    for m in _QUOTED.finditer(instruction):
        segments.append((instruction[pos : m.start()], -1, pos))
        span = m.group(1) if m.group(1) is not None else m.group(2)
        segments.append((span, q if span.strip() else -1, m.start()))
        q += 1 if span.strip() else 0
        pos = m.end()
    segments.append((instruction[pos:], -1, pos))
    left: list[str] = []
    n_words = max(1, len(words(instruction)))
    for text, qidx, _start in segments:
        ws = words(text)
        for i, w in enumerate(ws):
            wl.append(w)
            inq.append(1.0 if qidx >= 0 else 0.0)
            qid.append(qidx if qidx >= 0 else -1)
            first.append(1.0 if qidx >= 0 and i == 0 else 0.0)
        if qidx >= 0:
            rel = min(1.0, len(left) / n_words)
            cands.append(_InstructionCandidate(text, True, qidx, rel, tuple(left[-2:])))
        else:
            raw = [t for t in text.split() if t.strip(_STRIP)]
            toks = [t.strip(_STRIP) for t in raw]
            before = list(left)
            for i in range(len(toks)):
                rel = min(1.0, len(before) / n_words)
                for n in range(1, max_ngram + 1):
                    if i + n > len(toks):
                        break
                    joined = " ".join(toks[i : i + n])
                    cands.append(_InstructionCandidate(joined, False, -1, rel, tuple(before[-2:])))
                    # the span as written, inner punctuation kept ("Marion, IL")
                    spelled = " ".join(raw[i : i + n]).strip(_STRIP)
                    if spelled != joined:
                        cands.append(
                            _InstructionCandidate(spelled, False, -1, rel, tuple(before[-2:]))
                        )
                before.extend(words(toks[i]))
        left.extend(ws)
    wl = wl[:max_words] or ["<empty>"]
    n_w = len(wl)
    pad = [0.0] * max(0, n_w - len(inq))
    quoted_norm = tuple(normalise(s) for s in spans)
    all_words = words(instruction)
    return InstructionInfo(
        word_list=tuple(wl),
        word_in_quote=np.array((inq + pad)[:n_w], dtype=np.float32),
        word_qidx=np.array((qid + pad)[:n_w], dtype=np.float32),
        word_first=np.array((first + pad)[:n_w], dtype=np.float32),
        word_set=frozenset(all_words),
        seq=" " + " ".join(all_words) + " ",
        tri=trigrams(instruction),
        quoted=tuple(spans),
        quoted_norm=quoted_norm,
        quoted_words=tuple(frozenset(words(s)) for s in spans),
        quoted_tri=tuple(trigrams(s) for s in spans),
        candidates=tuple(cands),
    )


@lru_cache(maxsize=1 << 16)
def text_match(text: str, info: InstructionInfo) -> tuple[float, ...]:
    """Match features of an element text against an instruction (10 numbers)."""
    norm = normalise(text)
    ws = words(text)
    wset = frozenset(ws)
    tri = trigrams(text)
    if not norm:
        return (0.0,) * 10
    eq_q = any(norm == q for q in info.quoted_norm)
    q_in_t = any(q and q in norm for q in info.quoted_norm)
    t_in_q = any(norm in q for q in info.quoted_norm)
    in_seq = contains_sequence(info.seq, ws)
    frac_w = len(wset & info.word_set) / len(wset) if wset else 0.0
    frac_q = max((len(qw & wset) / len(qw) for qw in info.quoted_words if qw), default=0.0)
    jac_q = max((jaccard(tri, qt) for qt in info.quoted_tri), default=0.0)
    frac_tri = len(tri & info.tri) / len(tri) if tri else 0.0
    return (
        1.0,
        float(eq_q),
        float(q_in_t),
        float(t_in_q),
        float(in_seq),
        frac_w,
        frac_q,
        jac_q,
        frac_tri,
        float(np.log1p(len(ws)) / 3),
    )
