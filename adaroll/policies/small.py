"""The small policy: AdaRoll's default, a from-scratch PyTorch network that trains on a CPU.

It reads the UI element list, the instruction and the last few actions (featurised without any
pretrained model, see :mod:`adaroll.policies.features`) and outputs a *factorised* distribution
over GUI actions with exact log-probabilities::

    pi(a | c) = pi(kind | c) * pi(argument | kind, c)

Factors (``decision_log_probs`` returns them as ``T = 2`` columns: kind, argument; the
argument column is masked out for ``wait``, the one kind without an argument):

==========================  ==================================================================
kind                        argument
==========================  ==================================================================
tap/long_press/double_tap   pointer over elements (one head per kind); the action is the
                            element's tap point (its centre, clipped to the screen)
swipe                       one of up/down/left/right
type                        pointer over candidate strings per ``type_sources`` (default: the
                            double-quoted spans of the instruction; the web suite's hints add
                            unquoted n-grams, element texts and their parts)
key                         one of ``config.keys``
open_app                    pointer over candidate strings per ``app_sources``
done                        "no answer" or a candidate string per ``answer_sources``
wait                        none
==========================  ==================================================================

The network (:mod:`adaroll.policies.small_net`): hashed-bag embeddings of element text/role
and instruction words; instruction words go through self-attention layers; elements attend to
the instruction words (so "Bob" in the instruction can select the list item "Bob") and to each
other; a pooled state vector drives the kind/swipe/key heads; element and candidate pointers
score each option by additive attention and a bilinear term against the state, plus a linear
"wide" term on the option's explicit match features (quoted-span equality, token overlap,
...), which is what lets a policy trained for a minute on a few thousand expert steps match
names it has never seen. Candidate strings are encoded without padding (only their logits are
padded per context).

Kinds whose argument set is empty in a context (a point kind on a screen without tappable
elements, ``type`` without candidates) get probability 0 there. Sampling uses the policy's own
``torch.Generator`` (seeded from ``config.seed``; ``reseed``/``rng_state`` control it), never
torch's global RNG.

Scoring arbitrary actions (e.g. the expert's, for SFT): a point action maps to an element by the
rule of :func:`adaroll.policies.features.tap_target` (smallest containing clickable element,
else smallest containing, else nearest centre). Text (type / open_app / done answer) maps to
the candidate with exactly that string (``open_app`` also accepts a case-insensitive match). A
target the sampler could not have produced is still scored, *for that row only*, by widening the
row's choice set: an element that is not a pointer option (its centre is covered by another
element) is unmasked, a candidate string not allowed for the head is unmasked, and a string
that is not a candidate at all is appended as an extra candidate (flagged ``extra``) - so SFT
can learn from it and the log-probability stays a proper normalised one. Samples drawn by
:meth:`SmallPolicy.sample` never need this, so their scores equal their sampled log-probs.
Actions with no possible representation (a kind or key outside the config, a point action on a
screen without elements) raise :class:`UnrepresentableActionError`; ``represents`` tells in
advance (SFT skips and counts such examples).
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from adaroll.actions import (
    DIRECTIONS,
    PAPER_MATCHER,
    POINT_KINDS,
    Action,
    ActionKind,
    ActionMatcher,
)
from adaroll.policies.base import POLICIES, Context, Policy, SampledAction
from adaroll.policies.features import (
    CANDIDATE_SOURCES,
    ContextFeatures,
    FeatureCache,
    extra_candidate,
    tap_target,
    token_ids,
)
from adaroll.policies.small_config import SmallPolicyConfig
from adaroll.policies.small_net import (
    CAND_HEADS,
    NEG,
    SmallPolicyNet,
    _Batch,
    _collate,
    _Extras,
    masked_log_softmax,
)

FORMAT = "adaroll-small-policy/1"
WEIGHTS_FILE = "small_policy.pt"


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class PolicyFileError(ValueError):
    """A file that does not hold a policy written by :meth:`SmallPolicy.save`: empty, torn,
    not a torch file, or a torch file of another format. The message names the file."""


def _read_payload(target: Path) -> dict[str, Any]:
    """The saved payload in ``target``; :class:`PolicyFileError` when it holds none (a missing
    file stays a FileNotFoundError)."""
    not_ours = f"{target} is not a small-policy file ({FORMAT})"
    try:
        payload = torch.load(target, map_location="cpu", weights_only=True)
    except OSError:
        raise
    except Exception as exc:  # torch.load documents no error types: any failure means "not ours"
        raise PolicyFileError(f"{not_ours}: {_first_line(exc)}") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise PolicyFileError(not_ours)
    missing = [key for key in ("config", "state_dict") if key not in payload]
    if missing:
        raise PolicyFileError(f"{not_ours}: {', '.join(missing)} missing")
    return payload


def _first_line(exc: BaseException) -> str:
    """``Type: first line of the message`` (torch's unpickling messages run to paragraphs)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


class UnrepresentableActionError(ValueError):
    """The small policy cannot express this action (kind/key not configured, no elements...)."""


# -- network ------------------------------------------------------------------------------------


_ARG_NAMES = {
    ActionKind.SWIPE: "swipe",
    ActionKind.KEY: "key",
    ActionKind.TYPE: "type",
    ActionKind.OPEN_APP: "app",
    ActionKind.DONE: "answer",
}

# argument heads
_NONE, _PTR, _SWIPE, _KEY, _TYPE, _APP, _ANSWER = range(7)


@dataclass
class _Target:
    """One action as indices into the policy's factors."""

    kind: int
    head: int
    arg: int = 0  # element / direction / key / candidate index (answer: 0 = no answer, 1 + j)
    point_head: int = 0  # which pointer head for point kinds
    unmask: bool = False  # the argument is outside the sampler's choice set for this context
    extra: str | None = None  # a string appended as an extra candidate for this row


# -- the policy ---------------------------------------------------------------------------------


@POLICIES.register("small")
class SmallPolicy(Policy):
    """The default AdaRoll policy (see the module docstring)."""

    @property
    def history_window(self) -> int:
        return self.config.history_len

    def __init__(self, config: SmallPolicyConfig | None = None, **overrides: Any) -> None:
        cfg = config or SmallPolicyConfig()
        if overrides:
            cfg = SmallPolicyConfig.from_dict({**asdict(cfg), **overrides})
        self.config = cfg
        self.spec = cfg.feature_spec()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(cfg.seed)
            self.net = SmallPolicyNet(cfg)
        self.kinds = tuple(ActionKind(k) for k in cfg.kinds)
        self._kind_index = {k: i for i, k in enumerate(self.kinds)}
        self._point_kinds = [k for k in self.kinds if k in POINT_KINDS]
        self.generator = torch.Generator().manual_seed(cfg.seed + 1)
        self.cache = FeatureCache(self.spec)
        self._src_masks = {
            _TYPE: [CANDIDATE_SOURCES.index(s) for s in cfg.type_sources],
            _APP: [CANDIDATE_SOURCES.index(s) for s in cfg.app_sources],
            _ANSWER: [CANDIDATE_SOURCES.index(s) for s in cfg.answer_sources],
        }

    # -- protocol: parameters and persistence ---------------------------------------------------
    def parameters(self) -> list[nn.Parameter]:
        return list(self.net.parameters())

    def state_dict(self) -> dict[str, Any]:
        return self.net.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.net.load_state_dict(state)

    def train(self, mode: bool = True) -> None:
        self.net.train(mode)

    def __getstate__(self) -> dict[str, Any]:
        """Pickle (Ray workers, ``copy.deepcopy``) as config + weights + sampler state; the
        feature cache is not carried over."""
        return {
            "config": self.config,
            "state_dict": self.state_dict(),
            "rng": self.rng_state(),
            "training": self.net.training,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["config"])  # type: ignore[misc]
        self.load_state_dict(state["state_dict"])
        self.set_rng_state(state["rng"])
        self.net.train(state["training"])

    def rng_state(self) -> torch.Tensor:
        """The state of the policy's sampling generator (save it to resume a run exactly)."""
        return self.generator.get_state()

    def set_rng_state(self, state: torch.Tensor) -> None:
        self.generator.set_state(state)

    def sampling_state(self) -> torch.Tensor:
        """Sampling draws only from the policy's own generator."""
        return self.rng_state()

    def set_sampling_state(self, state: Any) -> None:
        self.set_rng_state(state)

    @staticmethod
    def _file(path: Path | str) -> Path:
        """A directory (existing, or a path without suffix) holds ``WEIGHTS_FILE``."""
        path = Path(path)
        return path / WEIGHTS_FILE if path.is_dir() or not path.suffix else path

    def save(self, path: Path | str) -> None:
        """Write config, weights and sampler state atomically (temp file + ``os.replace``).

        ``path`` is a file (e.g. ``policy.pt``) or a directory (an existing one, or a path
        without suffix), which then receives ``small_policy.pt`` and a readable
        ``config.json``."""
        target = self._file(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "format": FORMAT,
            "config": self.config.to_dict(),
            "state_dict": self.state_dict(),
            "rng": self.rng_state(),
        }
        buf = io.BytesIO()
        torch.save(payload, buf)
        _atomic_write(target, buf.getvalue())
        if target.parent == Path(path):
            text = json.dumps({"kind": "small", **self.config.to_dict()}, indent=1)
            _atomic_write(target.parent / "config.json", text.encode())

    @classmethod
    def load(cls, path: Path | str) -> SmallPolicy:
        """Restore a policy written by :meth:`save` (same file or directory)."""
        target = cls._file(path)
        payload = _read_payload(target)
        policy = cls(SmallPolicyConfig.from_dict(payload["config"]))
        policy.load_state_dict(payload["state_dict"])
        if "rng" in payload:
            policy.set_rng_state(payload["rng"])
        return policy

    # -- forward --------------------------------------------------------------------------------
    def _features(self, contexts: Sequence[Context]) -> list[ContextFeatures]:
        return [self.cache.get(c) for c in contexts]

    def _forward(self, feats: Sequence[ContextFeatures]) -> tuple[_Batch, dict[str, torch.Tensor]]:
        batch = _collate(feats, self.config.history_len)
        return batch, self.net.encode(batch)

    def _masks(self, b: _Batch) -> dict[int, torch.Tensor]:
        """Context-level choice sets: candidate masks per head [U, N] and kind mask [U, K]."""
        out: dict[int, torch.Tensor] = {}
        for head, srcs in self._src_masks.items():
            m = b.cand_src[:, :, srcs].any(-1) if srcs else torch.zeros(b.U, b.N, dtype=torch.bool)
            out[head] = m & b.cand_valid
        kind_ok = torch.ones(b.U, len(self.kinds), dtype=torch.bool)
        has_option = b.el_option.any(1)
        for i, k in enumerate(self.kinds):
            if k in POINT_KINDS:
                kind_ok[:, i] = has_option
            elif k is ActionKind.TYPE:
                kind_ok[:, i] = out[_TYPE].any(1)
            elif k is ActionKind.OPEN_APP:
                kind_ok[:, i] = out[_APP].any(1)
        out[-1] = kind_ok
        return out

    def _log_probs(self, b: _Batch, enc: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """Context-level log-probs of every factor under the tempered distribution."""
        T = self.config.temperature
        m = self._masks(b)
        U = b.U
        answer_logits = torch.cat([enc["no_answer"], enc["cand"][:, :, 2]], 1) / T
        answer_mask = torch.cat([torch.ones(U, 1, dtype=torch.bool), m[_ANSWER]], 1)
        return {
            "kind": masked_log_softmax(enc["kind"] / T, m[-1]),
            "ptr": masked_log_softmax(enc["ptr"] / T, b.el_option[..., None], dim=1),
            "swipe": torch.log_softmax(enc["swipe"] / T, -1),
            "key": torch.log_softmax(enc["key"] / T, -1),
            "type": masked_log_softmax(enc["cand"][:, :, 0] / T, m[_TYPE]),
            "app": masked_log_softmax(enc["cand"][:, :, 1] / T, m[_APP]),
            "answer": masked_log_softmax(answer_logits, answer_mask),
        }

    # -- sampling -------------------------------------------------------------------------------
    @torch.no_grad()
    def sample(
        self,
        contexts: Sequence[Context],
        n: int,
        *,
        greedy: bool = False,
        generator: torch.Generator | None = None,
    ) -> list[list[SampledAction]]:
        """``n`` samples per context (one forward for the whole batch); ``greedy`` takes the
        most likely kind and argument (all ``n`` copies equal). Uses the policy's own generator
        unless one is given."""
        if not contexts:
            return []
        if n < 1:
            raise ValueError("n must be >= 1")
        gen = generator if generator is not None else self.generator
        feats = self._features(contexts)
        b, enc = self._forward(feats)
        lp = self._log_probs(b, enc)
        U = b.U

        def draw(logp: torch.Tensor) -> torch.Tensor:
            """logp [R, X] -> indices [R, n]."""
            if greedy:
                return logp.argmax(-1, keepdim=True).expand(logp.shape[0], n)
            return torch.multinomial(logp.exp(), n, replacement=True, generator=gen)

        kind = draw(lp["kind"])
        ptr = lp["ptr"].permute(0, 2, 1)  # [U, P, E]
        P = ptr.shape[1]
        ptr_idx = draw(ptr.reshape(U * P, -1)).view(U, P, n)
        swipe = draw(lp["swipe"])
        key = draw(lp["key"])
        typ = draw(lp["type"])
        app = draw(lp["app"])
        ans = draw(lp["answer"])
        # gather each factor's log-prob of what was drawn, then build actions from plain lists
        kind_l = kind.tolist()
        kind_lp = lp["kind"].gather(1, kind).tolist()
        ptr_l = ptr_idx.tolist()
        ptr_lp = ptr.gather(2, ptr_idx).tolist()
        arg = {
            name: (idx.tolist(), lp[name].gather(1, idx).tolist())
            for name, idx in (
                ("swipe", swipe),
                ("key", key),
                ("type", typ),
                ("app", app),
                ("answer", ans),
            )
        }
        keys = self.config.keys
        out: list[list[SampledAction]] = []
        for u, f in enumerate(feats):
            row: list[SampledAction] = []
            for j in range(n):
                k = self.kinds[kind_l[u][j]]
                logp = kind_lp[u][j]
                action: Action
                if k in POINT_KINDS:
                    p = self._point_kinds.index(k)
                    e = ptr_l[u][p][j]
                    logp += ptr_lp[u][p][j]
                    x, y = f.el_point[e].tolist()
                    action = Action(k, x=x, y=y)
                elif k is ActionKind.WAIT:
                    action = Action(k)
                else:
                    name = _ARG_NAMES[k]
                    i = arg[name][0][u][j]
                    logp += arg[name][1][u][j]
                    if k is ActionKind.SWIPE:
                        action = Action.swipe(DIRECTIONS[i])
                    elif k is ActionKind.KEY:
                        action = Action.press(keys[i])
                    elif k is ActionKind.TYPE:
                        action = Action.type_text(f.cand_text[i])
                    elif k is ActionKind.OPEN_APP:
                        action = Action(ActionKind.OPEN_APP, app=f.cand_text[i])
                    else:
                        action = Action.done(None if i == 0 else f.cand_text[i - 1])
                row.append(SampledAction(action, logp, action.to_text()))
            out.append(row)
        return out

    def act(self, context: Context, *, greedy: bool = True) -> Action:
        """One action for one context (greedy by default)."""
        action = self.sample([context], 1, greedy=greedy)[0][0].action
        assert action is not None
        return action

    # -- scoring --------------------------------------------------------------------------------
    def _target(self, f: ContextFeatures, action: Action | None) -> _Target:
        if action is None:
            raise UnrepresentableActionError("an invalid (unparsed) sample has no log-probability")
        k = action.kind
        if k not in self._kind_index:
            raise UnrepresentableActionError(
                f"action kind {k.value!r} is not among the policy's kinds {self.config.kinds}"
            )
        ki = self._kind_index[k]
        if k in POINT_KINDS:
            assert action.x is not None and action.y is not None
            e = tap_target(f.elements, action.x, action.y)
            if e is None:
                raise UnrepresentableActionError(f"{action.to_text()} on a screen without elements")
            return _Target(ki, _PTR, e, self._point_kinds.index(k), unmask=not f.el_option[e])
        if k is ActionKind.SWIPE:
            return _Target(ki, _SWIPE, DIRECTIONS.index(action.swipe_direction))
        if k is ActionKind.KEY:
            if action.key not in self.config.keys:
                raise UnrepresentableActionError(
                    f"key {action.key!r} is not among the policy's keys {self.config.keys}"
                )
            return _Target(ki, _KEY, self.config.keys.index(action.key))
        if k is ActionKind.WAIT:
            return _Target(ki, _NONE)
        head = {ActionKind.TYPE: _TYPE, ActionKind.OPEN_APP: _APP, ActionKind.DONE: _ANSWER}[k]
        text = action.app if k is ActionKind.OPEN_APP else action.text
        if text is None:  # done() without an answer
            return _Target(ki, _ANSWER, 0)
        srcs = self._src_masks[head]
        allowed = [bool(f.cand_sources[i, srcs].any()) for i in range(f.n_candidates)]
        j = -1
        if text in f.cand_text:
            j = f.cand_text.index(text)
        elif k is ActionKind.OPEN_APP:
            folded = [
                i
                for i, t in enumerate(f.cand_text)
                if t.strip().casefold() == text.strip().casefold()
            ]
            j = next((i for i in folded if allowed[i]), folded[0] if folded else -1)
        offset = 1 if head == _ANSWER else 0
        if j < 0:
            return _Target(ki, head, offset + f.n_candidates, extra=text)
        return _Target(ki, head, offset + j, unmask=not allowed[j])

    def represents(self, context: Context, action: Action) -> bool:
        """Whether ``action`` can be scored under ``context`` (see UnrepresentableActionError)."""
        try:
            self._target(self.cache.get(context), action)
        except UnrepresentableActionError:
            return False
        return True

    def action_space_gap(
        self, context: Context, action: Action, matcher: ActionMatcher = PAPER_MATCHER
    ) -> str | None:
        """Why the *sampler* cannot produce ``action`` under ``context`` (None when it can).

        Stricter than :meth:`represents`, which also accepts actions that can only be scored
        (by widening a row's choice set): here a point action must address a pointer option
        whose tap point ``matcher`` counts as the same decision (so a OneStep sample can earn
        the expert's reward), and a text must be a candidate of a source the head draws from."""
        f = self.cache.get(context)
        try:
            target = self._target(f, action)
        except UnrepresentableActionError as exc:
            return str(exc)
        what = action.to_text()
        if action.kind in POINT_KINDS:
            e = target.arg
            if target.unmask:
                return f"{what}: its element {e} is covered (not a pointer option)"
            x, y = f.el_point[e].tolist()
            if not matcher(Action(action.kind, x=x, y=y), action):
                return (
                    f"{what}: the policy taps its element {e} at ({x:.3f}, {y:.3f}), "
                    "not the same point under the matcher"
                )
        elif target.extra is not None:
            return f"{what}: {target.extra!r} is not a candidate string in this context"
        elif target.unmask:
            head = {_TYPE: "type_sources", _APP: "app_sources", _ANSWER: "answer_sources"}
            return f"{what}: the candidate's sources are outside {head[target.head]}"
        return None

    def decision_log_probs(
        self, contexts: Sequence[Context], samples: Sequence[SampledAction | Action]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-factor log-probs ``[B, 2]`` (kind, argument) and mask ``[B, 2]``, with gradients.

        Accepts SampledActions or plain Actions (e.g. expert actions). Repeated context
        objects are encoded once. See the module docstring for how arbitrary actions map."""
        if len(contexts) != len(samples):
            raise ValueError(f"{len(contexts)} contexts but {len(samples)} samples")
        B = len(contexts)
        if B == 0:
            return torch.zeros(0, 2), torch.zeros(0, 2)
        index: dict[int, int] = {}
        uniq: list[Context] = []
        rows = []
        for c in contexts:
            u = index.get(id(c))
            if u is None:
                u = index[id(c)] = len(uniq)
                uniq.append(c)
            rows.append(u)
        feats = self._features(uniq)
        targets = []
        for u, s in zip(rows, samples, strict=True):
            action = s.action if isinstance(s, SampledAction) else s
            targets.append(self._target(feats[u], action))
        b, enc = self._forward(feats)
        masks = self._masks(b)
        T = self.config.temperature
        ctx = torch.tensor(rows, dtype=torch.int64)
        ar = torch.arange(B)

        # kind factor (a widened argument set may make an otherwise unavailable kind available)
        kind_idx = torch.tensor([t.kind for t in targets])
        kind_mask = masks[-1][ctx].clone()
        widened = torch.tensor([t.unmask or t.extra is not None for t in targets])
        kind_mask[ar[widened], kind_idx[widened]] = True
        kind_lp = masked_log_softmax(enc["kind"][ctx] / T, kind_mask).gather(1, kind_idx[:, None])[
            :, 0
        ]
        ok = kind_mask[ar, kind_idx]
        if not bool(ok.all()):
            bad = int((~ok).nonzero()[0, 0])
            raise UnrepresentableActionError(
                f"sample {bad} ({samples[bad]}) has a kind that is unavailable in its context"
            )

        arg_lp = torch.zeros(B)
        arg_mask = torch.zeros(B)
        heads = torch.tensor([t.head for t in targets])
        args = torch.tensor([t.arg for t in targets])
        unmask = torch.tensor([t.unmask for t in targets])

        def put(
            idx: torch.Tensor, a: torch.Tensor, logits: torch.Tensor, mask: torch.Tensor
        ) -> None:
            """Rows ``idx`` choose option ``a`` among ``logits`` [R, X] where ``mask`` [R, X]."""
            nonlocal arg_lp
            mask = mask.clone()
            um = unmask[idx]
            mask[torch.arange(len(idx))[um], a[um]] = True
            lp = masked_log_softmax(logits / T, mask).gather(1, a[:, None])[:, 0]
            arg_lp = arg_lp.index_put((idx,), lp)
            arg_mask[idx] = 1.0

        idx = (heads == _PTR).nonzero()[:, 0]
        if len(idx):
            ph = torch.tensor([targets[i].point_head for i in idx.tolist()], dtype=torch.int64)
            put(idx, args[idx], enc["ptr"][ctx[idx], :, ph], b.el_option[ctx[idx]])
        for head, name in ((_SWIPE, "swipe"), (_KEY, "key")):
            idx = (heads == head).nonzero()[:, 0]
            if len(idx):
                logits = enc[name][ctx[idx]]
                put(idx, args[idx], logits, torch.ones_like(logits, dtype=torch.bool))
        extra_rows = [i for i, t in enumerate(targets) if t.extra is not None]
        extra_logits = torch.full((B, len(CAND_HEADS)), NEG)
        if extra_rows:
            ex = self._extras(
                [(rows[i], feats[rows[i]], targets[i].extra) for i in extra_rows], b.E
            )
            extra_logits = extra_logits.index_put(
                (torch.tensor(extra_rows),), self.net.extra_logits(enc, ex)
            )
        has_extra = torch.tensor([t.extra is not None for t in targets])
        for head, col in ((_TYPE, 0), (_APP, 1), (_ANSWER, 2)):
            idx = (heads == head).nonzero()[:, 0]
            if not len(idx):
                continue
            logits = torch.cat([enc["cand"][ctx[idx], :, col], extra_logits[idx, col : col + 1]], 1)
            mask = torch.cat([masks[head][ctx[idx]], has_extra[idx, None]], 1)
            a = args[idx].clone()
            if head == _ANSWER:
                logits = torch.cat([enc["no_answer"][ctx[idx]], logits], 1)
                mask = torch.cat([torch.ones(len(idx), 1, dtype=torch.bool), mask], 1)
            # an extra string sits in the column after the (padded) candidates
            a[has_extra[idx]] = logits.shape[1] - 1
            put(idx, a, logits, mask)
        logp = torch.stack([kind_lp, arg_lp], 1)
        mask = torch.stack([torch.ones(B), arg_mask], 1)
        return logp, mask

    def _extras(self, items: list[tuple[int, ContextFeatures, str | None]], E: int) -> _Extras:
        bags, nums, ce_row, ce_el, counts = [], [], [], [], []
        for r, (u, f, text) in enumerate(items):
            assert text is not None
            ids, num, elems = extra_candidate(f, text, self.spec)
            bags.append(ids)
            nums.append(num)
            counts.append(len(elems))
            for e in elems:
                ce_row.append(r)
                ce_el.append(u * E + e)
        lens = np.array([len(x) for x in bags], dtype=np.int64)
        offsets = np.zeros(len(lens), dtype=np.int64)
        np.cumsum(lens[:-1], out=offsets[1:])
        return _Extras(
            ctx=torch.tensor([u for u, _, _ in items], dtype=torch.int64),
            ids=torch.from_numpy(np.concatenate(bags)),
            offsets=torch.from_numpy(offsets),
            left_ids=torch.tensor(token_ids("<no-left>", self.spec.hash_buckets))[None],
            num=torch.from_numpy(np.stack(nums)),
            ce_row=torch.tensor(ce_row, dtype=torch.int64),
            ce_el=torch.tensor(ce_el, dtype=torch.int64),
            ce_count=torch.tensor(counts, dtype=torch.float32),
        )


def make_optimizer(policy: Policy, lr: float, weight_decay: float = 0.0) -> torch.optim.Optimizer:
    """AdamW over ``policy.parameters()`` (the policy itself holds no optimiser)."""
    return torch.optim.AdamW(policy.parameters(), lr=lr, weight_decay=weight_decay)
