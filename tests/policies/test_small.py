"""The small policy: exact factorised log-probs, scoring arbitrary actions, persistence, seeds."""

from __future__ import annotations

import copy
import math
import pickle
from pathlib import Path

import pytest
import torch

from adaroll.actions import DIRECTIONS, Action, ActionKind
from adaroll.envs.base import Observation, UIElement
from adaroll.policies.base import POLICIES, Context, SampledAction
from adaroll.policies.features import CANDIDATE_SOURCES, featurise, pointer_options, tap_target
from adaroll.policies.small import (
    FORMAT,
    PolicyFileError,
    SmallPolicy,
    SmallPolicyConfig,
    UnrepresentableActionError,
    make_optimizer,
)
from adaroll.policies.text_match import element_parts, quoted_spans, stable_hash
from tests.policies.synthetic import make_examples, name_pool

ALL_KINDS = ("tap", "double_tap", "long_press", "swipe", "type", "key", "open_app", "wait", "done")
CLICK = frozenset({"clickable", "enabled"})


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def small(**kw: object) -> SmallPolicy:
    base: dict[str, object] = {"dim": 16, "heads": 2, "hash_buckets": 4096}
    base.update(kw)
    return SmallPolicy(SmallPolicyConfig(**base))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def contexts() -> list[Context]:
    examples = make_examples(3, 10, name_pool(0))
    return [c for c, _ in examples]


def all_actions(policy: SmallPolicy, ctx: Context) -> list[Action]:
    """Every action the policy can emit in ``ctx`` (each exactly once)."""
    f = featurise(ctx, policy.spec)
    out: list[Action] = []
    cfg = policy.config
    for kind in policy.kinds:
        if kind in (ActionKind.TAP, ActionKind.DOUBLE_TAP, ActionKind.LONG_PRESS):
            for e in range(f.n_elements):
                if f.el_option[e]:
                    x, y = f.el_point[e].tolist()
                    out.append(Action(kind, x=x, y=y))
        elif kind is ActionKind.SWIPE:
            out += [Action.swipe(d) for d in DIRECTIONS]
        elif kind is ActionKind.KEY:
            out += [Action.press(k) for k in cfg.keys]
        elif kind is ActionKind.WAIT:
            out.append(Action(kind))
        else:
            srcs = {
                ActionKind.TYPE: cfg.type_sources,
                ActionKind.OPEN_APP: cfg.app_sources,
                ActionKind.DONE: cfg.answer_sources,
            }[kind]
            idx = [CANDIDATE_SOURCES.index(s) for s in srcs]
            texts = [t for i, t in enumerate(f.cand_text) if f.cand_sources[i, idx].any()]
            if kind is ActionKind.TYPE:
                out += [Action.type_text(t) for t in texts]
            elif kind is ActionKind.OPEN_APP:
                out += [Action(kind, app=t) for t in texts]
            else:
                out += [Action.done()] + [Action.done(t) for t in texts]
    return out


# -- config, registry -------------------------------------------------------------------------


def test_registered_and_config_validation() -> None:
    assert POLICIES.get("small") is SmallPolicy
    cfg = SmallPolicyConfig(dim=32, kinds=["tap", "done"], seed=3)  # type: ignore[arg-type]
    assert cfg.kinds == ("tap", "done")
    assert SmallPolicyConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="valid kinds"):
        SmallPolicyConfig(kinds=("tap", "fly"))
    with pytest.raises(ValueError, match="valid keys"):
        SmallPolicyConfig(keys=("back", "warp"))
    with pytest.raises(ValueError, match="source"):
        SmallPolicyConfig(type_sources=("quoted", "dream"))
    with pytest.raises(ValueError, match="multiple of heads"):
        SmallPolicyConfig(dim=30, heads=4)
    with pytest.raises(ValueError, match="temperature"):
        SmallPolicyConfig(temperature=0.0)
    with pytest.raises(ValueError, match="unknown SmallPolicyConfig"):
        SmallPolicyConfig.from_dict({"dims": 3})
    # keyword overrides (how the pipeline builds policies)
    assert SmallPolicy(history_len=2, seed=5, dim=16, heads=2).config.history_len == 2


# -- features ---------------------------------------------------------------------------------


def test_tap_rule_prefers_smallest_clickable_then_nearest_centre() -> None:
    els = [
        UIElement(0, "list", "", (0.0, 0.0, 1.0, 1.0), CLICK),
        UIElement(1, "row", "Bob", (0.0, 0.2, 1.0, 0.3), CLICK),
        UIElement(2, "label", "Bob", (0.1, 0.22, 0.3, 0.28)),  # smaller, not clickable
        UIElement(3, "button", "x", (0.8, 0.22, 0.9, 0.28), CLICK),
    ]
    assert tap_target(els, 0.2, 0.25) == 1  # label is smaller but not clickable
    assert tap_target(els, 0.85, 0.25) == 3  # smallest clickable
    assert tap_target(els, 0.5, 0.6) == 0
    lone = [
        UIElement(0, "text", "a", (0.0, 0.0, 0.1, 0.1)),
        UIElement(1, "text", "b", (0.5, 0.5, 0.6, 0.6)),
    ]
    assert tap_target(lone, 0.45, 0.45) == 1  # nothing contains it: nearest centre
    assert tap_target([], 0.5, 0.5) is None
    option, point = pointer_options(els)
    # the list's centre (0.5, 0.5) maps back to the list; the label's centre maps to the row
    assert option.tolist() == [True, True, False, True]
    for e in range(len(els)):
        if option[e]:
            assert tap_target(els, *point[e].tolist()) == e
    off = [UIElement(0, "row", "gone", (0.0, 1.2, 1.0, 1.3), CLICK)]
    assert pointer_options(off)[0].tolist() == [False]


def test_featurise_candidates_and_hash_stability() -> None:
    assert quoted_spans('Send "hi there" to "Bob" and ""') == ["hi there", "Bob"]
    assert stable_hash("w:bob", 1000) == stable_hash("w:bob", 1000) and 0 < stable_hash("x", 7) < 7
    ctx = Context(
        'Send "hi there" to Bob',
        Observation(
            (
                UIElement(0, "row", "Bob", (0, 0.1, 1, 0.2), CLICK),
                UIElement(1, "row", "Al", (0, 0.2, 1, 0.3), CLICK),
            ),
            (100, 200),
        ),
        (Action.type_text("hi there"),),
    )
    f = featurise(ctx, SmallPolicyConfig(type_sources=("quoted", "ngram")).feature_spec())
    hi = f.cand_text.index("hi there")
    assert f.cand_sources[hi].tolist() == [True, False, False, False, False, False]
    assert "Bob" in f.cand_text and "Send" in f.cand_text and "Al" in f.cand_text
    bob = f.cand_text.index("Bob")
    assert f.cand_sources[bob].tolist() == [False, True, True, False, False, False]
    assert f.cand_elem[bob] == (0,)
    assert f.cand_num[hi, len(CANDIDATE_SOURCES) + 6] == 1.0  # already typed
    assert "12" in f.cand_text and "0" in f.cand_text  # numbers for counting answers
    assert element_parts("Phone: 555-1234") == (("Phone", ()), ("555-1234", ("phone",)))
    parts = dict(element_parts("Storage: 33 GB of 64 GB used"))
    assert parts["33"] == ("storage",) and parts["33 GB of 64 GB used"] == ("storage",)
    assert [p for p, _ in element_parts("20:00  Team meeting")][:2] == ["20:00", "Team meeting"]
    assert element_parts("Bob") == ()
    plain = featurise(ctx, SmallPolicyConfig().feature_spec())  # no head uses n-grams
    assert "Send" not in plain.cand_text and "hi there" in plain.cand_text
    assert f.el_num[0].sum() != f.el_num[1].sum()  # Bob matches the instruction, Al does not


# -- sampling and exact log-probs ---------------------------------------------------------------


def test_sample_shapes_and_log_prob_consistency(contexts: list[Context]) -> None:
    policy = small(kinds=ALL_KINDS, temperature=2.0)
    samples = policy.sample(contexts, 16)
    assert len(samples) == len(contexts) and all(len(row) == 16 for row in samples)
    flat_c = [c for c, row in zip(contexts, samples, strict=True) for _ in row]
    flat_s = [s for row in samples for s in row]
    kinds = {s.action.kind for s in flat_s if s.action is not None}
    assert len(kinds) >= 6  # the test covers most factor types
    logp, mask = policy.decision_log_probs(flat_c, flat_s)
    assert logp.shape == mask.shape == (len(flat_s), 2)
    total = (logp * mask).sum(1)
    expected = torch.tensor([s.log_prob for s in flat_s])
    assert torch.allclose(total, expected, atol=1e-5)
    assert torch.allclose(policy.log_prob(flat_c, flat_s), expected, atol=1e-5)
    for s, m in zip(flat_s, mask.tolist(), strict=True):
        assert s.valid and s.raw == s.action.to_text()  # type: ignore[union-attr]
        assert m[1] == (0.0 if s.action.kind is ActionKind.WAIT else 1.0)  # type: ignore[union-attr]
        if s.action.x is not None:  # type: ignore[union-attr]
            assert 0 <= s.action.x <= 1 and 0 <= s.action.y <= 1  # type: ignore[union-attr,operator]


def test_distribution_is_normalised_over_all_actions(contexts: list[Context]) -> None:
    policy = small(kinds=ALL_KINDS, keys=("back", "home", "enter"))
    for ctx in contexts[:3]:
        actions = all_actions(policy, ctx)
        assert len({a.to_text() for a in actions}) == len(actions)
        with torch.no_grad():
            lp = policy.log_prob([ctx] * len(actions), [SampledAction(a, 0.0) for a in actions])
        assert math.isclose(float(lp.exp().sum()), 1.0, abs_tol=1e-4)


def test_greedy_is_deterministic_and_batched_equals_loop(contexts: list[Context]) -> None:
    policy = small()
    g1 = policy.sample(contexts, 3, greedy=True)
    g2 = policy.sample(contexts, 3, greedy=True)
    for r1, r2 in zip(g1, g2, strict=True):
        assert len({s.action for s in r1}) == 1 and r1 == r2
    actions = [row[0].action for row in policy.sample(contexts, 1)]
    batched, _ = policy.decision_log_probs(contexts, actions)  # type: ignore[arg-type]
    for i, (c, a) in enumerate(zip(contexts, actions, strict=True)):
        single, _ = policy.decision_log_probs([c], [a])  # type: ignore[list-item]
        assert torch.allclose(batched[i], single[0], atol=1e-5)


def test_gradients_flow_to_all_parts(contexts: list[Context]) -> None:
    policy = small(kinds=ALL_KINDS)
    examples = make_examples(4, 10, name_pool(0))
    lp = policy.log_prob([c for c, _ in examples], [a for _, a in examples])  # type: ignore[misc]
    assert lp.requires_grad and torch.isfinite(lp).all()
    (-lp.sum()).backward()
    names = [
        n for n, p in policy.net.named_parameters() if p.grad is not None and p.grad.abs().sum() > 0
    ]
    for part in (
        "bag.",
        "el_in.",
        "word_blocks.",
        "el_cross.",
        "el_self.",
        "hist_in.",
        "state.",
        "kind.",
        "ptr.",
        "cand_in.",
        "cand_ptr.",
    ):
        assert any(n.startswith(part) for n in names), part
    opt = make_optimizer(policy, 1e-2)
    before = [p.detach().clone() for p in policy.parameters()]
    opt.step()
    assert any(not torch.equal(a, b) for a, b in zip(before, policy.parameters(), strict=True))


# -- scoring arbitrary actions ----------------------------------------------------------------


def test_scores_expert_actions_outside_the_sampler_support() -> None:
    policy = small(kinds=("tap", "type", "open_app", "done", "swipe"))
    els = (
        UIElement(0, "row", "Bob", (0.0, 0.1, 1.0, 0.2), CLICK),
        UIElement(1, "label", "Bob", (0.4, 0.12, 0.6, 0.18)),
        UIElement(2, "button", "OK", (0.45, 0.13, 0.55, 0.17), CLICK),
    )
    ctx = Context('Reply "on my way" to Bob', Observation(els, (100, 200)))
    actions = [
        Action.tap(0.05, 0.15),  # inside the row, whose centre is covered by OK: unmasked
        Action.type_text("on my way"),  # a quoted span
        Action.type_text("never mentioned"),  # appended as an extra candidate
        Action.done("Bob"),
        Action.done("forty-two"),  # extra answer
        Action(ActionKind.OPEN_APP, app="bob"),  # case-insensitive app match
        Action(ActionKind.SWIPE, x=0.5, y=0.8, x2=0.5, y2=0.2),  # coordinates -> "up"
    ]
    logp, mask = policy.decision_log_probs([ctx] * len(actions), actions)
    assert torch.isfinite(logp).all() and (logp <= 1e-6).all() and mask.sum() == 2 * len(actions)
    assert logp[2, 1] > -50  # a real probability, not the mask value
    swipe_up, _ = policy.decision_log_probs([ctx], [Action.swipe("up")])
    assert torch.allclose(logp[-1], swipe_up[0])
    assert not policy.represents(ctx, Action.press("back"))  # kind not configured
    with pytest.raises(UnrepresentableActionError, match="kind"):
        policy.decision_log_probs([ctx], [Action.press("back")])
    keyed = small(kinds=("key", "tap"), keys=("back",))
    assert not keyed.represents(ctx, Action.press("home"))
    empty = Context("nothing here", Observation((), (100, 200)))
    assert not keyed.represents(empty, Action.tap(0.5, 0.5))
    for _ in range(5):  # with no elements, taps are never sampled
        assert all(s.action.kind is ActionKind.KEY for s in keyed.sample([empty], 8)[0])  # type: ignore[union-attr]
    with pytest.raises(UnrepresentableActionError):
        policy.decision_log_probs([ctx], [SampledAction(None, 0.0, "garbage")])


def test_web_only_actions_can_be_configured_scored_and_sampled() -> None:
    """hover and key chords are not in the default action space; a web policy opts in."""
    els = (UIElement(0, "menuitem", "Alvera", (0.0, 0.1, 0.5, 0.2), CLICK),)
    ctx = Context("Select Alvera>Terza", Observation(els, (160, 210)))
    plain = small()
    assert not plain.represents(ctx, Action.hover(0.25, 0.15))
    with pytest.raises(ValueError, match="keys: key chord 'shift\\+ctrl\\+a'"):
        SmallPolicyConfig(keys=("shift+ctrl+a",))
    web = small(kinds=("tap", "hover", "key", "type"), keys=("enter", "backspace", "ctrl+a"))
    actions = [Action.hover(0.25, 0.15), Action.press("ctrl+a")]
    logp, _ = web.decision_log_probs([ctx] * 2, actions)
    assert torch.isfinite(logp).all() and all(web.represents(ctx, a) for a in actions)
    kinds = {s.action.kind for s in web.sample([ctx], 64)[0]}  # type: ignore[union-attr]
    assert ActionKind.HOVER in kinds


# -- persistence and seeds ----------------------------------------------------------------------


def test_save_load_restores_an_equal_policy(tmp_path: Path, contexts: list[Context]) -> None:
    policy = small(seed=7)
    opt = make_optimizer(policy, 1e-2)
    examples = make_examples(5, 8, name_pool(0))
    (-policy.log_prob([c for c, _ in examples], [a for _, a in examples]).sum()).backward()  # type: ignore[misc]
    opt.step()
    for target in (tmp_path / "p.pt", tmp_path / "dir"):
        policy.save(target)
        loaded = SmallPolicy.load(target)
        assert loaded.config == policy.config
        for k, v in policy.state_dict().items():
            assert torch.equal(v, loaded.state_dict()[k])
        acts = [row[0].action for row in policy.sample(contexts, 1, greedy=True)]
        a, _ = policy.decision_log_probs(contexts, acts)  # type: ignore[arg-type]
        b, _ = loaded.decision_log_probs(contexts, acts)  # type: ignore[arg-type]
        assert torch.equal(a, b)
        state = policy.rng_state()
        s1 = policy.sample(contexts, 4)
        policy.set_rng_state(state)
        loaded.set_rng_state(state)
        assert loaded.sample(contexts, 4) == s1
    assert (tmp_path / "dir" / "small_policy.pt").exists() and (
        tmp_path / "dir" / "config.json"
    ).exists()
    assert not list(tmp_path.rglob("*.tmp"))


def test_a_file_without_a_saved_policy_fails_with_its_name(tmp_path: Path) -> None:
    """Whatever torch.load raises on a damaged or foreign file, load says which file is not a
    small-policy file (and a missing file stays a FileNotFoundError)."""
    small(seed=1).save(tmp_path / "good.pt")
    good = (tmp_path / "good.pt").read_bytes()
    foreign = tmp_path / "foreign.pt"
    torch.save({"format": "someone-else/1", "config": {}, "state_dict": {}}, foreign)
    no_weights = tmp_path / "no_weights.pt"
    torch.save({"format": FORMAT, "config": {}}, no_weights)
    bad = {"empty": b"", "garbage": b"not a torch file " * 8, "torn": good[: len(good) // 2]}
    for name, data in bad.items():
        (tmp_path / f"{name}.pt").write_bytes(data)
        with pytest.raises(
            PolicyFileError, match=rf"{name}\.pt is not a small-policy file \(.*\): \w+"
        ):
            SmallPolicy.load(tmp_path / f"{name}.pt")
    with pytest.raises(
        PolicyFileError, match=r"foreign\.pt is not a small-policy file \(adaroll-small-policy/1\)$"
    ):
        SmallPolicy.load(foreign)
    with pytest.raises(PolicyFileError, match=r"no_weights\.pt .*: state_dict missing"):
        SmallPolicy.load(no_weights)
    with pytest.raises(FileNotFoundError):
        SmallPolicy.load(tmp_path / "missing.pt")


def test_pickle_and_deepcopy_give_an_equal_independent_policy(contexts: list[Context]) -> None:
    policy = small(seed=8)
    policy.sample(contexts, 2)  # fills the feature cache, advances the generator
    for clone in (pickle.loads(pickle.dumps(policy)), copy.deepcopy(policy)):
        assert isinstance(clone, SmallPolicy) and clone.config == policy.config
        state = policy.rng_state()
        assert clone.sample(contexts, 3) == policy.sample(contexts, 3)
        policy.set_rng_state(state)
        with torch.no_grad():
            next(iter(clone.parameters())).add_(1.0)
        assert not torch.equal(next(iter(clone.parameters())), next(iter(policy.parameters())))


def test_seed_determines_weights_and_samples(contexts: list[Context]) -> None:
    a, b, c = small(seed=1), small(seed=1), small(seed=2)
    assert all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters(), strict=True))
    assert not all(torch.equal(x, y) for x, y in zip(a.parameters(), c.parameters(), strict=True))
    assert a.sample(contexts, 5) == b.sample(contexts, 5)
    gen = torch.Generator().manual_seed(9)
    s1 = a.sample(contexts, 5, generator=gen)
    s2 = b.sample(contexts, 5, generator=torch.Generator().manual_seed(9))
    assert s1 == s2
    # global torch RNG is untouched by construction and sampling
    torch.manual_seed(0)
    x = torch.rand(1)
    torch.manual_seed(0)
    small(seed=3).sample(contexts, 2)
    assert torch.equal(torch.rand(1), x)


def test_temperature_spreads_the_distribution(contexts: list[Context]) -> None:
    cold, hot = small(seed=4, temperature=0.5), small(seed=4, temperature=4.0)
    acts = [Action.swipe(d) for d in DIRECTIONS]
    ctx = [contexts[0]] * 4
    with torch.no_grad():
        p_cold = cold.decision_log_probs(ctx, acts)[0][:, 1].exp()  # type: ignore[arg-type]
        p_hot = hot.decision_log_probs(ctx, acts)[0][:, 1].exp()  # type: ignore[arg-type]
    assert math.isclose(float(p_cold.sum()), 1.0, abs_tol=1e-5)
    assert float(p_hot.max() - p_hot.min()) < float(p_cold.max() - p_cold.min())


def test_history_changes_the_decision() -> None:
    ctx, _ = make_examples(6, 1, name_pool(0))[0]
    policy = small(seed=5)
    later = Context(ctx.instruction, ctx.observation, (Action.press("back"), Action.swipe("up")))
    a, _ = policy.decision_log_probs([ctx], [Action.swipe("up")])
    b, _ = policy.decision_log_probs([later], [Action.swipe("up")])
    assert not torch.allclose(a, b)
