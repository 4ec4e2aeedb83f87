"""Featurisation of a :class:`~adaroll.policies.base.Context` for the small policy.

No pretrained model is involved: text becomes *bags of hashed ids* (one id per lower-cased word
plus one per character n-gram of the word, hashed with CRC32 into ``hash_buckets`` buckets; id 0
is never produced) that the network embeds with an ``EmbeddingBag``. Because hashing is
deterministic, a word never seen in training still gets the same vector wherever it occurs, so
the instruction word "bob" and the element text "Bob" embed identically - the attention from
elements to instruction words can learn to match them. Matching is the crux of GUI tasks, so
it is also given to the network explicitly, as exact symbolic features (token overlap, quoted
span equality/containment, character-trigram Jaccard) per element and per candidate string.

The text side (hashed ids, quoted spans, the instruction's candidates, match features) is
:mod:`adaroll.policies.text_match`. Per context this module computes (the part that depends
only on the instruction and the elements is cached per screen, since screens recur across
rollouts; whole contexts are cached by object identity, see :class:`FeatureCache`):

* **elements** (at most ``max_elements``, the first ones in the observation's order): text bag,
  role bag, numeric features (flags, bounds, match and history features), and the *pointer
  options* - see :func:`tap_target` for the rule that maps a point to an element;
* **instruction words** (at most ``max_words``): one bag per word, plus in-quote/position
  features;
* **candidate strings** for ``type`` / ``open_app`` / ``done(answer)``, deduplicated by exact
  string, with a flag per source: ``quoted`` (double-quoted spans of the instruction),
  ``ngram`` (its word n-grams outside quotes, punctuation stripped from each word, and also as
  written when that keeps inner punctuation: ``"Marion, IL"``), ``element`` (element texts), ``app`` (configured
  app names), ``part`` (pieces of element texts, see
  :func:`~adaroll.policies.text_match.element_parts`) and ``number`` (``"0"`` to ``"12"``);
  sources no head uses are not generated;
* **history**: the last ``history_len`` actions (kind, point, direction, text/key bag), plus
  per element whether recent taps hit it and per candidate whether it was already typed or is
  the next quoted span in order (``quote index == number of type actions so far``);
* a few global numbers.

Tap-point rule (used to map any point action, e.g. the expert's, onto the element pointer):
among the elements whose bounds contain the point (inclusive), the smallest-area *clickable*
one; when none of them is clickable, the smallest-area one; when no element contains the
point, the element with the nearest centre (Euclidean, normalised coordinates). Ties go to the
lowest index. An element is a *pointer option* only when it is not entirely off screen and the
rule maps its (clipped) centre back to itself; the policy taps an option at that centre, so a
sampled tap always maps back to the element it was drawn from.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from adaroll.actions import DIRECTIONS, POINT_KINDS, Action, ActionKind
from adaroll.envs.base import ELEMENT_FLAGS, UIElement
from adaroll.policies.base import Context
from adaroll.policies.text_match import (
    InstructionInfo,
    contains_sequence,
    element_parts,
    instruction_info,
    jaccard,
    normalise,
    text_ids,
    text_match,
    token_ids,
    trigrams,
    word_ids,
    words,
)

ACTION_KINDS: tuple[ActionKind, ...] = tuple(k for k in ActionKind if k is not ActionKind.HOVER)
"""Kinds with a one-hot slot in the history features. ``hover`` (web only, added later) has none:
a slot would widen the network's input and change every seeded initialisation; a hover in the
history still shows its point and its ``hover`` token."""
CANDIDATE_SOURCES = ("quoted", "ngram", "element", "app", "part", "number")
NUMBERS = tuple(str(i) for i in range(13))
"""Candidates of source ``number`` (answers to counting questions)."""

# Sizes of the numeric feature vectors (the network's input widths depend on them).
N_ELEMENT_FEATURES = len(ELEMENT_FLAGS) + 9 + 10 + 3 + 2
N_WORD_FEATURES = 4
N_CANDIDATE_FEATURES = len(CANDIDATE_SOURCES) + 16
N_HISTORY_FEATURES = len(ACTION_KINDS) + 3 + len(DIRECTIONS) + 1
N_GLOBAL_FEATURES = 6


@dataclass(frozen=True)
class FeatureSpec:
    """The part of the policy configuration that featurisation depends on."""

    hash_buckets: int = 1 << 15
    char_ngram: int = 3
    history_len: int = 4
    max_elements: int = 128
    max_words: int = 48
    max_ngram: int = 2
    app_names: tuple[str, ...] = ()
    type_sources: tuple[str, ...] = ("quoted",)
    app_sources: tuple[str, ...] = ("app", "element")
    answer_sources: tuple[str, ...] = ("element", "quoted", "part", "number")


# -- the tap rule -------------------------------------------------------------------------------


def _bounds(elements: Sequence[UIElement]) -> tuple[np.ndarray, np.ndarray]:
    b = np.array([e.bounds for e in elements], dtype=np.float64).reshape(-1, 4)
    clickable = np.array(["clickable" in e.flags for e in elements], dtype=bool)
    return b, clickable


def _targets(b: np.ndarray, clickable: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Vectorised tap rule: for each point [P, 2] the index of its target element [P]."""
    x, y = pts[:, 0:1], pts[:, 1:2]
    inside = (
        (b[None, :, 0] <= x) & (x <= b[None, :, 2]) & (b[None, :, 1] <= y) & (y <= b[None, :, 3])
    )
    area = np.clip(b[:, 2] - b[:, 0], 0, None) * np.clip(b[:, 3] - b[:, 1], 0, None)
    key = np.where(inside, area[None, :] + np.where(clickable, 0.0, 10.0)[None, :], np.inf)
    best = key.argmin(axis=1)  # argmin returns the lowest index among ties
    centres = np.stack([(b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2], axis=1)
    dist = ((centres[None, :, :] - pts[:, None, :]) ** 2).sum(-1)
    nearest = dist.argmin(axis=1)
    return np.where(inside.any(axis=1), best, nearest)


def tap_target(elements: Sequence[UIElement], x: float, y: float) -> int | None:
    """The element a tap at ``(x, y)`` addresses (module docstring rule); None without elements."""
    if not elements:
        return None
    b, clickable = _bounds(elements)
    return int(_targets(b, clickable, np.array([[x, y]], dtype=np.float64))[0])


def pointer_options(elements: Sequence[UIElement]) -> tuple[np.ndarray, np.ndarray]:
    """``(is_option [E] bool, tap point [E, 2])``: which elements the pointer may choose."""
    if not elements:
        return np.zeros(0, dtype=bool), np.zeros((0, 2))
    b, clickable = _bounds(elements)
    centres = np.clip(np.stack([(b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2], axis=1), 0, 1)
    on_screen = (b[:, 2] >= 0) & (b[:, 0] <= 1) & (b[:, 3] >= 0) & (b[:, 1] <= 1)
    back = _targets(b, clickable, centres)
    return on_screen & (back == np.arange(len(elements))), centres


# -- per-context features -------------------------------------------------------------------------


@dataclass
class Bags:
    """Ragged bags of hashed ids: ``ids`` concatenated, ``lens`` per bag."""

    ids: np.ndarray
    lens: np.ndarray

    @classmethod
    def of(cls, bags: Sequence[np.ndarray]) -> Bags:
        if not bags:
            return cls(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        return cls(np.concatenate(bags), np.array([len(b) for b in bags], dtype=np.int64))


@dataclass
class ContextFeatures:
    """The featurised context (numpy only; batched into tensors by the policy)."""

    elements: tuple[UIElement, ...]
    el_text: Bags
    el_role: Bags
    el_num: np.ndarray  # [E, N_ELEMENT_FEATURES]
    el_option: np.ndarray  # [E] bool: the pointer may choose it
    el_point: np.ndarray  # [E, 2] tap point of each element
    el_norm_text: tuple[str, ...]
    word_bags: Bags
    word_num: np.ndarray  # [W, N_WORD_FEATURES]
    cand_text: tuple[str, ...]
    cand_bags: Bags
    cand_left: Bags
    cand_num: np.ndarray  # [N, N_CANDIDATE_FEATURES]
    cand_sources: np.ndarray  # [N, len(CANDIDATE_SOURCES)] bool
    cand_elem: tuple[tuple[int, ...], ...]  # elements whose text equals each candidate
    hist_bags: Bags  # history_len bags (oldest first; missing slots hold the marker bag)
    hist_num: np.ndarray  # [history_len, N_HISTORY_FEATURES]
    glob: np.ndarray  # [N_GLOBAL_FEATURES]
    # context information needed to featurise extra candidates at scoring time
    info: InstructionInfo
    typed: frozenset[str]
    used_texts: frozenset[str]
    n_typed: int
    focused_norm: str
    focused_words: frozenset[str]
    editable_norm: frozenset[str]
    norm_counts: dict[str, int]

    @property
    def n_elements(self) -> int:
        return len(self.elements)

    @property
    def n_candidates(self) -> int:
        return len(self.cand_text)


def _history_rows(history: Sequence[Action], k: int, spec: FeatureSpec) -> tuple[Bags, np.ndarray]:
    recent = list(history)[-k:] if k > 0 else []
    rows = np.zeros((k, N_HISTORY_FEATURES), dtype=np.float32)
    bags: list[np.ndarray] = []
    missing = token_ids("<no-action>", spec.hash_buckets)
    offset = k - len(recent)
    for slot in range(k):
        if slot < offset:
            bags.append(missing)
            continue
        a = recent[slot - offset]
        row = rows[slot]
        if a.kind in ACTION_KINDS:
            row[ACTION_KINDS.index(a.kind)] = 1.0
        base = len(ACTION_KINDS)
        if a.x is not None and a.y is not None:
            row[base], row[base + 1], row[base + 2] = a.x, a.y, 1.0
        if a.kind is ActionKind.SWIPE:
            row[base + 3 + DIRECTIONS.index(a.swipe_direction)] = 1.0
        row[-1] = 1.0
        if a.kind is ActionKind.KEY and a.key is not None:
            bags.append(token_ids("key:" + a.key, spec.hash_buckets))
        elif a.text is not None:
            bags.append(text_ids(a.text, spec.hash_buckets, spec.char_ngram))
        elif a.app is not None:
            bags.append(text_ids(a.app, spec.hash_buckets, spec.char_ngram))
        else:
            bags.append(token_ids("kind:" + a.kind.value, spec.hash_buckets))
    return Bags.of(bags), rows


@lru_cache(maxsize=1 << 16)
def _candidate_static(
    text: str, info: InstructionInfo
) -> tuple[str, float, float, float, float, float]:
    """The context-independent candidate features of ``text`` under an instruction."""
    norm = normalise(text)
    ws = words(text)
    wset = frozenset(ws)
    tri = trigrams(text)
    return (
        norm,
        min(len(ws), 10) / 5,
        float(contains_sequence(info.seq, ws)),
        len(wset & info.word_set) / len(wset) if wset else 0.0,
        float(norm in info.quoted_norm),
        max((jaccard(tri, qt) for qt in info.quoted_tri), default=0.0),
    )


def _candidate_row(
    text: str,
    sources: Sequence[bool],
    qidx: int,
    rel_pos: float | None,
    extra: bool,
    info: InstructionInfo,
    used: frozenset[str],
    n_typed: int,
    focused_norm: str,
    editable: frozenset[str],
    counts: dict[str, int],
) -> list[float]:
    """Numeric features of one candidate string (N_CANDIDATE_FEATURES numbers); the two
    left-context features (``S + 9``, ``S + 15``) are left 0 for the caller to fill."""
    norm, n_words, in_seq, frac_w, in_quoted, jac_q = _candidate_static(text, info)
    row = [1.0 if x else 0.0 for x in sources]
    row += [
        float(extra),
        n_words,
        0.0 if rel_pos is None else rel_pos,
        0.0 if rel_pos is None else 1.0,
        float(qidx >= 0 and qidx == n_typed),
        min(qidx, 8) / 4 if qidx >= 0 else 0.0,
        float(text in used),
        float(bool(norm) and norm == focused_norm),
        float(norm in editable),
        0.0,
        in_seq,
        frac_w,
        min(counts.get(norm, 0), 5) / 5,
        in_quoted,
        jac_q,
        0.0,
    ]
    return row


def candidate_features(
    cf: ContextFeatures,
    text: str,
    sources: Sequence[bool],
    qidx: int,
    rel_pos: float | None,
    *,
    extra: bool = False,
) -> np.ndarray:
    """Numeric features of one candidate string under the context of ``cf``."""
    row = _candidate_row(
        text,
        sources,
        qidx,
        rel_pos,
        extra,
        cf.info,
        cf.used_texts | cf.typed,
        cf.n_typed,
        cf.focused_norm,
        cf.editable_norm,
        cf.norm_counts,
    )
    return np.array(row, dtype=np.float32)


@lru_cache(maxsize=1 << 16)
def _left_ids(left: tuple[str, ...], buckets: int, n: int) -> np.ndarray:
    if not left:
        return token_ids("<no-left>", buckets)
    arr = np.array([i for w in left for i in word_ids(w, buckets, n)], dtype=np.int64)
    arr.setflags(write=False)
    return arr


@dataclass(eq=False)
class _Static:
    """The part of a context's features that depends only on (instruction, elements)."""

    info: InstructionInfo
    elements: tuple[UIElement, ...]
    bounds: np.ndarray  # [E, 4]
    el_text: Bags
    el_role: Bags
    el_num: np.ndarray  # history columns left 0
    option: np.ndarray
    point: np.ndarray
    norm_texts: tuple[str, ...]
    focused: bool
    focused_norm: str
    focused_words: frozenset[str]
    editable_norm: frozenset[str]
    counts: dict[str, int]
    word_bags: Bags
    word_num: np.ndarray
    cand_text: tuple[str, ...]
    cand_src: list[list[bool]]
    cand_q: list[int]
    cand_bags: Bags
    cand_left: Bags
    cand_num: np.ndarray  # history columns left 0
    cand_sources: np.ndarray
    cand_elem: tuple[tuple[int, ...], ...]


_EL_HIST = len(ELEMENT_FLAGS) + 9 + 10  # first history column of the element features


STATIC_CACHE_SIZE = 1 << 14
"""Screens whose (instruction, elements) features :func:`_static` keeps. An evaluation of 80
tasks x 4 attempts shows a thousand or more screens, and the training between two evaluations
as many again: with 2,048 entries a Base->Hybrid run on the phone's h12 profile featurised
40,476 screens of which 9,019 were distinct; with this size it featurises each once (for about
15 KB a screen: some 100 MB more at that run's peak, 250 MB at most)."""


@lru_cache(maxsize=STATIC_CACHE_SIZE)
def _static(instruction: str, elements: tuple[UIElement, ...], spec: FeatureSpec) -> _Static:
    B, n = spec.hash_buckets, spec.char_ngram
    info = instruction_info(instruction, spec.max_words, spec.max_ngram)
    E = len(elements)
    el_num = np.zeros((E, N_ELEMENT_FEATURES), dtype=np.float32)
    norm_texts = tuple(normalise(e.text) for e in elements)
    b = np.array([e.bounds for e in elements], dtype=np.float32).reshape(-1, 4)
    if E:
        nf = len(ELEMENT_FLAGS)
        for i, e in enumerate(elements):
            for j, flag in enumerate(ELEMENT_FLAGS):
                if flag in e.flags:
                    el_num[i, j] = 1.0
        bc = np.clip(b, 0.0, 1.0)
        w, h = bc[:, 2] - bc[:, 0], bc[:, 3] - bc[:, 1]
        el_num[:, nf : nf + 4] = bc
        el_num[:, nf + 4] = (bc[:, 0] + bc[:, 2]) / 2
        el_num[:, nf + 5] = (bc[:, 1] + bc[:, 3]) / 2
        el_num[:, nf + 6], el_num[:, nf + 7] = w, h
        el_num[:, nf + 8] = np.sqrt(np.clip(w * h, 0, None))
        col = nf + 9
        for i, e in enumerate(elements):
            el_num[i, col : col + 10] = text_match(e.text, info)
        col = _EL_HIST + 3
        el_num[:, col] = np.arange(E) / max(E, 1)
        option, point = pointer_options(elements)
        el_num[:, col + 1] = option
    else:
        option, point = np.zeros(0, dtype=bool), np.zeros((0, 2))

    focused = [e for e in elements if "focused" in e.flags]
    focused_norm = normalise(focused[0].text) if focused else ""
    focused_words = frozenset(words(focused[0].text)) if focused else frozenset()
    editable_norm = frozenset(
        t for e, t in zip(elements, norm_texts, strict=True) if "editable" in e.flags and t
    )
    counts: dict[str, int] = {}
    for t in norm_texts:
        if t:
            counts[t] = counts.get(t, 0) + 1

    # instruction words
    W = len(info.word_list)
    word_bags = Bags.of([np.array(word_ids(w, B, n), dtype=np.int64) for w in info.word_list])
    word_num = np.zeros((W, N_WORD_FEATURES), dtype=np.float32)
    word_num[:, 0] = info.word_in_quote
    word_num[:, 1] = np.arange(W) / max(W, 1)
    word_num[:, 2] = info.word_first
    word_num[:, 3] = np.clip(info.word_qidx, -1, 8) / 4

    # candidates: quoted spans, instruction n-grams, element texts, parts, app names, numbers
    order: dict[str, int] = {}
    c_src: list[list[bool]] = []
    c_q: list[int] = []
    c_pos: list[float | None] = []
    c_left: list[tuple[str, ...]] = []

    def add(
        text: str, src: int, qidx: int = -1, pos: float | None = None, left: tuple[str, ...] = ()
    ) -> None:
        if not text.strip():
            return
        i = order.get(text)
        if i is None:
            order[text] = len(c_src)
            c_src.append([False] * len(CANDIDATE_SOURCES))
            c_q.append(qidx)
            c_pos.append(pos)
            c_left.append(left)
            i = len(c_src) - 1
        c_src[i][src] = True

    wanted = set(spec.type_sources) | set(spec.app_sources) | set(spec.answer_sources)
    links: dict[str, set[int]] = {}
    for c in info.candidates:
        if c.quoted or "ngram" in wanted:
            add(c.text, 0 if c.quoted else 1, c.qidx, c.rel_pos, c.left)
    for i, e in enumerate(elements):
        text = e.text.strip()
        if len(text) <= 80:
            add(text, 2)
            links.setdefault(text, set()).add(i)
        if "part" in wanted:
            for part, left in element_parts(text):
                add(part, 4, left=left)
                links.setdefault(part, set()).add(i)
    for app in spec.app_names:
        add(app, 3)
    if "number" in wanted:
        for num in NUMBERS:
            add(num, 5)
    cand_text = tuple(order)
    S = len(CANDIDATE_SOURCES)
    rows = []
    for i, t in enumerate(cand_text):
        row = _candidate_row(
            t,
            c_src[i],
            c_q[i],
            c_pos[i],
            False,
            info,
            frozenset(),
            -1,
            focused_norm,
            editable_norm,
            counts,
        )
        left_set = set(c_left[i])
        if left_set:
            if focused_words:
                row[S + 9] = len(focused_words & left_set) / len(focused_words)
            row[S + 15] = len(info.word_set & left_set) / len(left_set)
        rows.append(row)
    by_norm: dict[str, list[int]] = {}
    for i, t in enumerate(norm_texts):
        by_norm.setdefault(t, []).append(i)
    el_num.setflags(write=False)  # shared by every context with this screen
    return _Static(
        info=info,
        elements=elements,
        bounds=b,
        el_text=Bags.of([text_ids(e.text, B, n) for e in elements]),
        el_role=Bags.of([token_ids("role:" + e.role.casefold(), B) for e in elements]),
        el_num=el_num,
        option=option.astype(bool),
        point=point,
        norm_texts=norm_texts,
        focused=bool(focused) and "editable" in focused[0].flags,
        focused_norm=focused_norm,
        focused_words=focused_words,
        editable_norm=editable_norm,
        counts=counts,
        word_bags=word_bags,
        word_num=word_num,
        cand_text=cand_text,
        cand_src=c_src,
        cand_q=c_q,
        cand_bags=Bags.of([text_ids(t, B, n) for t in cand_text]),
        cand_left=Bags.of([_left_ids(lw, B, n) for lw in c_left]),
        cand_num=np.array(rows, dtype=np.float32).reshape(-1, N_CANDIDATE_FEATURES),
        cand_sources=np.array(c_src, dtype=bool).reshape(-1, S),
        cand_elem=tuple(
            tuple(sorted(links.get(t, set()) | set(by_norm.get(normalise(t), ()))))
            for t in cand_text
        ),
    )


def featurise(context: Context, spec: FeatureSpec) -> ContextFeatures:
    """Compute the features of one context (see the module docstring). The part that depends
    only on the instruction and the elements is cached (screens recur across rollouts)."""
    elements = tuple(context.observation.elements[: spec.max_elements])
    st = _static(context.instruction, elements, spec)
    history = context.history
    k = spec.history_len

    # history-derived facts
    typed = frozenset(a.text for a in history if a.kind is ActionKind.TYPE and a.text is not None)
    used = frozenset(
        (a.text if a.text is not None else a.app or "")
        for a in history
        if a.kind in (ActionKind.TYPE, ActionKind.OPEN_APP, ActionKind.DONE)
    )
    n_typed = sum(1 for a in history if a.kind is ActionKind.TYPE)
    recent = list(history)[-k:] if k else []
    recent_points = [
        (float(a.x), float(a.y))
        for a in recent
        if a.x is not None and a.y is not None and a.kind in POINT_KINDS
    ]
    last = history[-1] if history else None

    el_num = st.el_num
    if len(elements) and history:
        el_num = el_num.copy()
        b = st.bounds
        col = _EL_HIST
        if (
            last is not None
            and last.kind in POINT_KINDS
            and last.x is not None
            and last.y is not None
        ):
            lx, ly = last.x, last.y
            el_num[:, col] = (b[:, 0] <= lx) & (lx <= b[:, 2]) & (b[:, 1] <= ly) & (ly <= b[:, 3])
        for px, py in recent_points:
            el_num[:, col + 1] += (
                (b[:, 0] <= px) & (px <= b[:, 2]) & (b[:, 1] <= py) & (py <= b[:, 3])
            ) / max(k, 1)
        if typed:
            typed_norm = {normalise(t) for t in typed}
            el_num[:, col + 2] = [bool(t) and t in typed_norm for t in st.norm_texts]

    S = len(CANDIDATE_SOURCES)
    cand_num = st.cand_num.copy()
    used_or_typed = used | typed
    for i, t in enumerate(st.cand_text):
        q = st.cand_q[i]
        if q >= 0 and q == n_typed:
            cand_num[i, S + 4] = 1.0
        if t in used_or_typed:
            cand_num[i, S + 6] = 1.0

    hist_bags, hist_num = _history_rows(history, k, spec)
    glob = np.array(
        [
            min(len(history), 30) / 10,
            min(n_typed, 10) / 5,
            min(len(elements), 200) / 50,
            min(len(st.info.quoted), 8) / 4,
            float(st.focused),
            min(sum(1 for a in history if a.kind in POINT_KINDS), 30) / 10,
        ],
        dtype=np.float32,
    )
    return ContextFeatures(
        elements=elements,
        el_text=st.el_text,
        el_role=st.el_role,
        el_num=el_num,
        el_option=st.option,
        el_point=st.point,
        el_norm_text=st.norm_texts,
        word_bags=st.word_bags,
        word_num=st.word_num,
        cand_text=st.cand_text,
        cand_bags=st.cand_bags,
        cand_left=st.cand_left,
        cand_num=cand_num,
        cand_sources=st.cand_sources,
        cand_elem=st.cand_elem,
        hist_bags=hist_bags,
        hist_num=hist_num,
        glob=glob,
        info=st.info,
        typed=typed,
        used_texts=used,
        n_typed=n_typed,
        focused_norm=st.focused_norm,
        focused_words=st.focused_words,
        editable_norm=st.editable_norm,
        norm_counts=st.counts,
    )


def extra_candidate(
    cf: ContextFeatures, text: str, spec: FeatureSpec
) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """Bag, numeric features and matching elements of a string that is not a candidate of ``cf``
    (appended at scoring time, e.g. an expert's typed text that the instruction does not quote)."""
    num = candidate_features(cf, text, [False] * len(CANDIDATE_SOURCES), -1, None, extra=True)
    norm = normalise(text)
    elems = tuple(i for i, t in enumerate(cf.el_norm_text) if t == norm)
    return text_ids(text, spec.hash_buckets, spec.char_ngram), num, elems


class FeatureCache:
    """Features by context *identity* (a weak reference guards against reused ids).

    Contexts are immutable, so the features of one object never change. An entry is dropped
    when its context is garbage-collected, and at most ``maxsize`` (the most recently used)
    are kept, so the cache never holds features of contexts nobody references.
    """

    def __init__(self, spec: FeatureSpec, maxsize: int = 20_000) -> None:
        self.spec = spec
        self.maxsize = maxsize
        self._items: OrderedDict[int, tuple[weakref.ref[Context], ContextFeatures]] = OrderedDict()

    def get(self, context: Context) -> ContextFeatures:
        key = id(context)
        hit = self._items.get(key)
        if hit is not None and hit[0]() is context:
            self._items.move_to_end(key)
            return hit[1]
        cf = featurise(context, self.spec)
        if self.maxsize <= 0:
            return cf
        try:
            ref = weakref.ref(context, self._forget(key))
        except TypeError:  # not weak-referenceable: do not cache
            return cf
        self._items[key] = (ref, cf)
        if len(self._items) > self.maxsize:
            self._items.popitem(last=False)
        return cf

    def _forget(self, key: int) -> Callable[[weakref.ref[Context]], None]:
        items = weakref.ref(self._items)

        def drop(ref: weakref.ref[Context]) -> None:
            d = items()
            if d is not None:
                entry = d.get(key)
                if entry is not None and entry[0] is ref:
                    del d[key]

        return drop

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        self._items.clear()
