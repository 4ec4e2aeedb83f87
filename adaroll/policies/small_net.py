"""The network of the small policy (:mod:`adaroll.policies.small`) and the collation of a
batch of context features into its padded and packed tensors."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from adaroll.actions import DIRECTIONS, POINT_KINDS, ActionKind
from adaroll.policies.features import (
    CANDIDATE_SOURCES,
    N_CANDIDATE_FEATURES,
    N_ELEMENT_FEATURES,
    N_GLOBAL_FEATURES,
    N_HISTORY_FEATURES,
    N_WORD_FEATURES,
    Bags,
    ContextFeatures,
)
from adaroll.policies.small_config import SmallPolicyConfig

NEG = -1e9  # finite "minus infinity": masked options get probability exactly 0, never NaN
CAND_HEADS = ("type", "open_app", "done")
"""The candidate-string pointer heads, in their column order."""


def masked_log_softmax(logits: torch.Tensor, mask: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """log_softmax over the options where ``mask`` is True (others get about -1e9)."""
    return torch.log_softmax(logits.masked_fill(~mask, NEG), dim=dim)


@dataclass
class _Packing:
    """Where the packed rows [P, d] of one kind (elements or words) sit in a padded [U, n, d]
    layout: ``pos`` [P] = u * n + j, ``valid`` [U, n]."""

    U: int
    n: int
    pos: torch.Tensor
    valid: torch.Tensor

    def pad(self, rows: torch.Tensor, fill: float = 0.0) -> torch.Tensor:
        out = torch.full((self.U * self.n, rows.shape[-1]), fill, dtype=rows.dtype)
        return out.index_copy(0, self.pos, rows).view(self.U, self.n, rows.shape[-1])

    def unpad(self, padded: torch.Tensor) -> torch.Tensor:
        return padded.reshape(self.U * self.n, -1)[self.pos]


class _Attention(nn.Module):
    """Multi-head attention on packed rows: projections run on the real rows only, and just
    the attention core on the padded layout (written out: faster than SDPA at these sizes)."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def forward(
        self, x: torch.Tensor, xp: _Packing, mem: torch.Tensor, mp: _Packing
    ) -> torch.Tensor:
        """Queries x [P, d] (packed per ``xp``) attend to the keys mem [K, d] of their own
        context (packed per ``mp``) -> [P, d]. A context without keys yields a finite output."""
        U, d, h = xp.U, x.shape[-1], self.heads
        q = xp.pad(self.q(x)).view(U, xp.n, h, d // h).transpose(1, 2)
        k = mp.pad(self.k(mem)).view(U, mp.n, h, d // h).transpose(1, 2)
        v = mp.pad(self.v(mem)).view(U, mp.n, h, d // h).transpose(1, 2)
        bias = torch.zeros(U, 1, 1, mp.n, dtype=x.dtype).masked_fill(
            ~mp.valid[:, None, None, :], NEG
        )
        scores = torch.matmul(q, k.transpose(-1, -2)) * (d // h) ** -0.5 + bias
        out = torch.matmul(torch.softmax(scores, -1), v)  # [U, h, n, d/h]
        return self.out(xp.unpad(out.transpose(1, 2).reshape(U, xp.n, d)))


class _Block(nn.Module):
    """Post-norm residual attention block with a feed-forward layer (packed rows)."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.attn = _Attention(dim, heads)
        self.norm1 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, dim))
        self.norm2 = nn.LayerNorm(dim)

    def forward(
        self, x: torch.Tensor, xp: _Packing, mem: torch.Tensor, mp: _Packing
    ) -> torch.Tensor:
        x = self.norm1(x + self.attn(x, xp, mem, mp))
        return self.norm2(x + self.ff(x))


class _PointerHead(nn.Module):
    """Scores options for P heads: additive attention, a bilinear option-state term and a wide
    linear term on the options' explicit match features."""

    def __init__(self, dim: int, n_features: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.scale = dim**-0.5
        self.wh = nn.Linear(dim, dim)
        self.ws = nn.Linear(dim, dim, bias=False)
        self.v = nn.Linear(dim, n_heads)
        self.k = nn.Linear(dim, dim, bias=False)
        self.q = nn.Linear(dim, n_heads * dim, bias=False)
        self.wide = nn.Linear(n_features, n_heads, bias=False)

    def context(self, s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-context terms of state s [U, d]: ([U, d], [U, P, d]) (computed once per context)."""
        return self.ws(s), self.q(s).view(s.shape[0], self.n_heads, -1)

    def packed(
        self,
        h: torch.Tensor,
        ctx: torch.Tensor,
        pack: _Packing,
        terms: tuple[torch.Tensor, torch.Tensor],
        num: torch.Tensor,
    ) -> torch.Tensor:
        """Options h [R, d] of contexts ``ctx`` [R] laid out by ``pack``, features num [R, F]
        -> padded logits [U, n, P] (padding positions hold about -1e9)."""
        ws, q = terms
        additive = self.v(torch.tanh(self.wh(h) + ws[ctx])) + self.wide(num)
        bilinear = torch.bmm(pack.pad(self.k(h)), q.transpose(1, 2)) * self.scale
        return pack.pad(additive, NEG) + bilinear

    def rows(
        self, h: torch.Tensor, terms: tuple[torch.Tensor, torch.Tensor], num: torch.Tensor
    ) -> torch.Tensor:
        """Options h [R, d] with their own context terms ([R, d], [R, P, d]) -> logits [R, P]."""
        ws, q = terms
        bilinear = (self.k(h).unsqueeze(-2) * q).sum(-1) * self.scale
        return self.v(torch.tanh(self.wh(h) + ws)) + bilinear + self.wide(num)


def _mlp(n_in: int, dim: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_in, dim), nn.ReLU(), nn.Linear(dim, dim), nn.LayerNorm(dim))


class SmallPolicyNet(nn.Module):
    """The network of :class:`SmallPolicy` (inputs: a collated batch of context features)."""

    def __init__(self, cfg: SmallPolicyConfig) -> None:
        super().__init__()
        d = cfg.dim
        self.cfg = cfg
        self.n_point = sum(1 for k in cfg.kinds if ActionKind(k) in POINT_KINDS)
        self.bag = nn.EmbeddingBag(cfg.hash_buckets, d, mode="mean")
        nn.init.normal_(self.bag.weight, std=1.0)
        self.el_in = _mlp(2 * d + N_ELEMENT_FEATURES, d)
        self.word_pos = nn.Embedding(cfg.max_words, d)
        self.word_in = nn.Linear(d + N_WORD_FEATURES, d)
        self.word_norm = nn.LayerNorm(d)
        self.word_blocks = nn.ModuleList(
            _Block(d, cfg.heads) for _ in range(cfg.instruction_layers)
        )
        self.el_cross = nn.ModuleList(_Block(d, cfg.heads) for _ in range(cfg.layers))
        self.el_self = nn.ModuleList(_Block(d, cfg.heads) for _ in range(cfg.layers))
        k = cfg.history_len
        self.hist_in = nn.Linear(d + N_HISTORY_FEATURES, d)
        self.hist_out = nn.Linear(max(k, 1) * d, d)
        self.state = nn.Sequential(
            nn.Linear(4 * d + N_GLOBAL_FEATURES, 2 * d), nn.ReLU(), nn.Linear(2 * d, d), nn.ReLU()
        )
        self.kind = nn.Linear(d + N_GLOBAL_FEATURES, len(cfg.kinds))
        self.swipe = nn.Linear(d, len(DIRECTIONS))
        self.key = nn.Linear(d, max(len(cfg.keys), 1))
        self.ptr = _PointerHead(d, N_ELEMENT_FEATURES, max(self.n_point, 1))
        self.cand_in = _mlp(3 * d + N_CANDIDATE_FEATURES, d)
        self.cand_ptr = _PointerHead(d, N_CANDIDATE_FEATURES, len(CAND_HEADS))
        self.no_answer = nn.Linear(d, 1)

    def encode(self, b: _Batch) -> dict[str, torch.Tensor]:
        """Context-level forward: raw logits of every head, plus encodings for extras.

        Elements, words and candidates are computed as packed rows (no padding); only the
        attention cores and the final logits use the padded [U, n] layout."""
        d = self.cfg.dim
        U = b.U
        out = self.bag(b.ids, b.offsets)
        el_text, el_role, word_e, cand_e, left_e, hist_e = torch.split(out, b.seg_sizes)
        E, N, k = b.E, b.N, b.k
        ep = _Packing(U, E, b.el_pos, b.el_valid)
        wp = _Packing(U, b.W, b.word_pos, b.word_valid)
        x = self.el_in(torch.cat([el_text, el_role, b.el_num], -1))  # [P, d]
        w = self.word_in(torch.cat([word_e, b.word_num], -1))
        w = self.word_norm(w + self.word_pos(b.word_idx))
        for blk in self.word_blocks:
            w = blk(w, wp, w, wp)
        for cross, own in zip(self.el_cross, self.el_self, strict=True):
            x = cross(x, ep, w, wp)
            x = own(x, ep, x, ep)
        el_count = b.el_valid.sum(1, keepdim=True).clamp(min=1)
        el_mean = torch.zeros(U, d).index_add(0, b.el_ctx, x) / el_count
        el_max = ep.pad(x, NEG).amax(1)
        el_max = torch.where(b.el_valid.any(1, keepdim=True), el_max, torch.zeros_like(el_max))
        w_count = b.word_valid.sum(1, keepdim=True).clamp(min=1)
        w_mean = torch.zeros(U, d).index_add(0, b.word_ctx, w) / w_count
        if k > 0:
            h = self.hist_in(torch.cat([hist_e.view(U, k, d), b.hist_num], -1))
            h_vec = self.hist_out(torch.relu(h).reshape(U, k * d))
        else:
            h_vec = self.hist_out(torch.zeros(U, d))
        s = self.state(torch.cat([el_mean, el_max, w_mean, h_vec, b.glob], -1))
        # candidates (R = all candidates of the batch): text bag, left-context bag, mean
        # encoding of the elements they come from
        el_padded = ep.pad(x).view(U * E, d)
        R = cand_e.shape[0]
        c_el = torch.zeros(R, d).index_add(0, b.ce_cand, el_padded[b.ce_el])
        c_el = c_el / b.ce_count.clamp(min=1)[:, None]
        c = self.cand_in(torch.cat([cand_e, left_e, c_el, b.cand_num], -1))
        cp = _Packing(U, N, b.cand_pos, b.cand_valid)
        cand = self.cand_ptr.packed(c, b.cand_ctx, cp, self.cand_ptr.context(s), b.cand_num)
        ptr = self.ptr.packed(x, b.el_ctx, ep, self.ptr.context(s), b.el_num)
        return {
            "state": s,
            "elements": el_padded.view(U, E, d),
            "kind": self.kind(torch.cat([s, b.glob], -1)),
            "ptr": ptr,  # [U, E, n_point]
            "swipe": self.swipe(s),
            "key": self.key(s),
            "cand": cand,  # [U, N, 3]
            "no_answer": self.no_answer(s),  # [U, 1]
        }

    def extra_logits(self, enc: dict[str, torch.Tensor], x: _Extras) -> torch.Tensor:
        """Logits [R, 3] of strings appended as extra candidates (one per row)."""
        d = self.cfg.dim
        R = len(x.ctx)
        text_e = self.bag(x.ids, x.offsets)
        left_e = self.bag(x.left_ids, None)
        el = enc["elements"]
        U, E, _ = el.shape
        c_el = torch.zeros(R, d).index_add(0, x.ce_row, el.reshape(U * E, d)[x.ce_el])
        c_el = c_el / x.ce_count.clamp(min=1)[:, None]
        c = self.cand_in(torch.cat([text_e, left_e.expand(R, d), c_el, x.num], -1))
        ws, q = self.cand_ptr.context(enc["state"])
        return self.cand_ptr.rows(c, (ws[x.ctx], q[x.ctx]), x.num)


# -- batching -----------------------------------------------------------------------------------


@dataclass
class _Batch:
    U: int
    E: int
    W: int
    N: int
    k: int
    ids: torch.Tensor
    offsets: torch.Tensor
    seg_sizes: list[int]
    el_pos: torch.Tensor
    el_ctx: torch.Tensor
    word_pos: torch.Tensor
    word_idx: torch.Tensor
    word_ctx: torch.Tensor
    cand_pos: torch.Tensor
    cand_ctx: torch.Tensor
    el_num: torch.Tensor
    el_valid: torch.Tensor
    el_option: torch.Tensor
    word_num: torch.Tensor
    word_valid: torch.Tensor
    cand_num: torch.Tensor
    cand_valid: torch.Tensor
    cand_src: torch.Tensor
    ce_cand: torch.Tensor
    ce_el: torch.Tensor
    ce_count: torch.Tensor
    hist_num: torch.Tensor
    glob: torch.Tensor


@dataclass
class _Extras:
    ctx: torch.Tensor
    ids: torch.Tensor
    offsets: torch.Tensor
    left_ids: torch.Tensor
    num: torch.Tensor
    ce_row: torch.Tensor
    ce_el: torch.Tensor
    ce_count: torch.Tensor


def _cat(arrays: Sequence[np.ndarray], width: int) -> np.ndarray:
    return np.concatenate(arrays).reshape(-1, width).astype(np.float32, copy=False)


def _collate(feats: Sequence[ContextFeatures], history_len: int) -> _Batch:
    U = len(feats)
    E = max(1, max(f.n_elements for f in feats))
    W = max(f.word_num.shape[0] for f in feats)
    N = max(1, max(f.n_candidates for f in feats))
    segments: list[list[Bags]] = [
        [f.el_text for f in feats],
        [f.el_role for f in feats],
        [f.word_bags for f in feats],
        [f.cand_bags for f in feats],
        [f.cand_left for f in feats],
        [f.hist_bags for f in feats],
    ]
    ids = np.concatenate([b.ids for seg in segments for b in seg])
    lens = np.concatenate([b.lens for seg in segments for b in seg])
    seg_sizes = [int(sum(len(b.lens) for b in seg)) for seg in segments]
    offsets = np.zeros(len(lens), dtype=np.int64)
    np.cumsum(lens[:-1], out=offsets[1:])

    def positions(counts: list[int], n: int) -> torch.Tensor:
        return torch.from_numpy(
            np.concatenate([u * n + np.arange(c, dtype=np.int64) for u, c in enumerate(counts)])
        )

    el_counts = [f.n_elements for f in feats]
    w_counts = [f.word_num.shape[0] for f in feats]
    c_counts = [f.n_candidates for f in feats]
    el_valid = np.arange(E)[None, :] < np.array(el_counts)[:, None]
    el_option = np.zeros((U, E), dtype=bool)
    cand_src = np.zeros((U, N, len(CANDIDATE_SOURCES)), dtype=bool)
    ce_cand: list[int] = []
    ce_el: list[int] = []
    ce_count = np.zeros(sum(c_counts), dtype=np.float32)
    base = 0
    for u, f in enumerate(feats):
        el_option[u, : f.n_elements] = f.el_option
        cand_src[u, : f.n_candidates] = f.cand_sources
        for j, elems in enumerate(f.cand_elem):
            ce_count[base + j] = len(elems)
            for e in elems:
                ce_cand.append(base + j)
                ce_el.append(u * E + e)
        base += f.n_candidates
    return _Batch(
        U=U,
        E=E,
        W=W,
        N=N,
        k=history_len,
        ids=torch.from_numpy(ids),
        offsets=torch.from_numpy(offsets),
        seg_sizes=seg_sizes,
        el_pos=positions(el_counts, E),
        word_pos=positions(w_counts, W),
        cand_pos=positions(c_counts, N),
        el_num=torch.from_numpy(_cat([f.el_num for f in feats], N_ELEMENT_FEATURES)),
        el_ctx=torch.from_numpy(np.repeat(np.arange(U, dtype=np.int64), el_counts)),
        word_idx=torch.from_numpy(np.concatenate([np.arange(c, dtype=np.int64) for c in w_counts])),
        word_ctx=torch.from_numpy(np.repeat(np.arange(U, dtype=np.int64), w_counts)),
        el_valid=torch.from_numpy(el_valid),
        el_option=torch.from_numpy(el_option),
        word_num=torch.from_numpy(_cat([f.word_num for f in feats], N_WORD_FEATURES)),
        word_valid=torch.from_numpy(np.arange(W)[None, :] < np.array(w_counts)[:, None]),
        cand_ctx=torch.from_numpy(np.repeat(np.arange(U, dtype=np.int64), c_counts)),
        cand_num=torch.from_numpy(_cat([f.cand_num for f in feats], N_CANDIDATE_FEATURES)),
        cand_valid=torch.from_numpy(np.arange(N)[None, :] < np.array(c_counts)[:, None]),
        cand_src=torch.from_numpy(cand_src),
        ce_cand=torch.tensor(ce_cand, dtype=torch.int64),
        ce_el=torch.tensor(ce_el, dtype=torch.int64),
        ce_count=torch.from_numpy(ce_count),
        hist_num=torch.from_numpy(np.stack([f.hist_num for f in feats]).astype(np.float32)),
        glob=torch.from_numpy(np.stack([f.glob for f in feats])),
    )


# -- targets ------------------------------------------------------------------------------------
