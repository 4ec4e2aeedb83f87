"""The ``hf`` policy on a tiny randomly initialised Qwen2 model with an in-process tokenizer.

No download, CPU only. These tests import transformers/peft unconditionally: without the
``llm`` extra they fail (collection error), they do not skip.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from transformers import GenerationConfig

from adaroll.actions import Action, action_format_help
from adaroll.algos.pivots import cluster_sizes, disagreement
from adaroll.config import GRPOConfig, PolicyConfig
from adaroll.envs.base import Observation, TaskSpec, UIElement
from adaroll.policies import load_policy, make_policy
from adaroll.policies.base import Context, SampledAction
from adaroll.policies.hf import HFPolicy, HFPolicyConfig, LMSample
from adaroll.rollout.jobs import Decision, Group, Job
from adaroll.training.update import grpo_update

MAX_NEW = 10


def _obs(n: int = 2) -> Observation:
    elements = [
        UIElement(1, "button", "OK", (0.1, 0.1, 0.3, 0.2), frozenset({"clickable"})),
        UIElement(2, "text", "Hello", (0.1, 0.3, 0.9, 0.4)),
    ]
    for i in range(3, n + 1):
        elements.append(UIElement(i, "item", f"row {i}", (0.0, 0.05 * i, 1.0, 0.05 * i + 0.04)))
    return Observation(tuple(elements[:n]), (1080, 1920))


CTX_A = Context("Tap OK", _obs(), (Action.tap(0.5, 0.5), Action.swipe("up")))
CTX_B = Context("Say hi", _obs(), ())


@pytest.fixture(scope="module", autouse=True)
def _one_thread():  # type: ignore[no-untyped-def]
    """Tiny matrices: one intra-op thread is faster, and much faster on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def policy() -> HFPolicy:
    return HFPolicy(tiny=True, seed=0, max_new_tokens=MAX_NEW, history_len=4, batch_size=8)


def _manual_logp(p: HFPolicy, context: Context, ids: list[int]) -> torch.Tensor:
    """Per-token log-probs of ``ids`` after the prompt: one unpadded forward, no batching."""
    prompt = list(p._prompt(context).ids)
    seq = torch.tensor([prompt + ids])
    with torch.no_grad():
        logits = p.model(input_ids=seq).logits[0].float() / p.config.temperature
    lsm = torch.log_softmax(logits, -1)
    pos = torch.arange(len(prompt) - 1, len(prompt) - 1 + len(ids))
    return lsm[pos, torch.tensor(ids)]


# -- config and construction --------------------------------------------------------------------


def test_config_validation_names_the_problem() -> None:
    with pytest.raises(
        ValueError, match="unknown hf policy option.*'bogus'.*valid:.*max_new_tokens"
    ):
        HFPolicyConfig.from_options({"tiny": True, "bogus": 1})
    with pytest.raises(ValueError, match="exactly one of"):
        HFPolicyConfig()
    with pytest.raises(ValueError, match="exactly one of"):
        HFPolicyConfig(model="x", tiny=True)
    with pytest.raises(ValueError, match="temperature"):
        HFPolicyConfig(tiny=True, temperature=0.0)
    with pytest.raises(ValueError, match="dtype"):
        HFPolicyConfig(tiny=True, dtype="int8")
    cfg = HFPolicyConfig.from_options(
        HFPolicyConfig(tiny=True, lora_target_modules=["q_proj"]).to_dict()
    )
    assert cfg.lora_target_modules == ("q_proj",)


def test_make_policy_by_kind_and_cpu_defaults() -> None:
    p = make_policy(
        PolicyConfig(kind="hf", history=2, options={"tiny": True, "max_new_tokens": 4}), seed=3
    )
    assert isinstance(p, HFPolicy)
    assert p.config.history_len == 2 and p.config.seed == 3
    assert p.device.type == "cpu" and p.dtype == torch.float32
    assert not any(getattr(m, "gradient_checkpointing", False) for m in p.model.modules())
    names = list(p.named_trainable())
    assert names and all("lora_" in n for n in names)
    assert all(not q.requires_grad for n, q in p.model.named_parameters() if "lora_" not in n)


def test_gpu_settings_work_on_cpu_too() -> None:
    """bfloat16 weights + gradient checkpointing (the CUDA defaults) forced on the CPU: samples
    and per-token log-probs stay float32 on the CPU, and gradients reach the adapter."""
    p = HFPolicy(tiny=True, dtype="bfloat16", gradient_checkpointing=True, max_new_tokens=4)
    assert any(getattr(m, "gradient_checkpointing", False) for m in p.model.modules())
    assert next(p.model.get_base_model().parameters()).dtype == torch.bfloat16
    (row,) = p.sample([CTX_A], 2)
    p.train(True)
    logp, mask = p.decision_log_probs([CTX_A, CTX_A], row)
    assert logp.dtype == torch.float32 and logp.device.type == "cpu"
    logp.sum().backward()
    assert all(q.grad is not None for q in p.parameters())
    p.train(False)


# -- prompts ------------------------------------------------------------------------------------


def test_prompt_has_instruction_history_elements_and_action_help(policy: HFPolicy) -> None:
    text = policy.prompt_text(CTX_A)
    assert "Task: Tap OK" in text
    assert "1. tap(0.5, 0.5)\n2. swipe(up)" in text
    for line in CTX_A.observation.describe().splitlines():
        assert line in text
    assert action_format_help() in text
    assert text.endswith("### assistant\n")  # plain rendering: the tiny tokenizer has no template
    assert "(none)" in policy.prompt_text(CTX_B)


def test_prompt_history_window_and_element_cap() -> None:
    p = HFPolicy(tiny=True, history_len=1, max_elements=3, max_new_tokens=2)
    text = p.prompt_text(Context("t", _obs(6), (Action.tap(0.1, 0.1), Action.press("back"))))
    assert "1. key(back)" in text and "tap(0.1, 0.1)" not in text
    assert '"row 3"' in text and '"row 4"' not in text and "3 more elements not shown" in text


def test_prompt_uses_the_chat_template_when_there_is_one() -> None:
    p = HFPolicy(tiny=True, max_new_tokens=2)
    p.tokenizer.chat_template = (
        "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}</{{ m['role'] }}>{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}"
    )
    p._template_owner = p.tokenizer
    p._prompt_cache.clear()
    text = p.prompt_text(CTX_B)
    assert text.startswith("<system>You are a GUI agent") and text.endswith("</user><assistant>")
    assert list(p._prompt(CTX_B).ids) == p.tokenize(text)


# -- sampling and log-probs ---------------------------------------------------------------------


def test_samples_are_lm_samples_with_exact_log_probs(policy: HFPolicy) -> None:
    policy.reseed(0)
    out = policy.sample([CTX_A, CTX_B], 3)
    assert [len(r) for r in out] == [3, 3]
    flat = [s for r in out for s in r]
    contexts = [CTX_A] * 3 + [CTX_B] * 3
    logp, mask = policy.decision_log_probs(contexts, flat)
    assert logp.shape == mask.shape == (6, max(len(s.token_ids) for s in flat))
    for i, (ctx, s) in enumerate(zip(contexts, flat, strict=True)):
        assert isinstance(s, LMSample) and 1 <= len(s.token_ids) <= MAX_NEW
        assert s.truncated == (s.token_ids[-1] not in policy.stop_ids)
        manual = _manual_logp(policy, ctx, list(s.token_ids))
        assert torch.allclose(logp[i, : len(s.token_ids)], manual, atol=1e-4)
        assert int(mask[i].sum()) == len(s.token_ids)
        assert s.log_prob == pytest.approx(float(manual.sum()), abs=1e-3)
        assert math.isfinite(s.log_prob) and s.log_prob < 0


def test_stop_token_is_scored_and_kept(policy: HFPolicy) -> None:
    eos = policy.stop_ids[0]
    ids = policy.tokenize("wait()") + [eos]
    sample = policy.to_sample(ids, 0.0)
    assert sample.action == Action(kind="wait") and sample.raw == "wait()" and not sample.truncated
    logp, mask = policy.decision_log_probs([CTX_A], [sample])
    manual = _manual_logp(policy, CTX_A, ids)
    assert mask.sum() == len(ids)
    assert torch.allclose(logp[0], manual, atol=1e-4)  # includes log p(EOS | ... wait())


def test_generation_samples_from_the_scored_distribution(policy: HFPolicy) -> None:
    """generate's processed scores at the sampled tokens equal the scoring pass - even when
    the checkpoint ships top-k / repetition-penalty defaults (the policy neutralises them)."""
    p = HFPolicy(tiny=True, seed=1, temperature=0.7, max_new_tokens=6)
    base = p.model.get_base_model()
    base.generation_config = GenerationConfig(
        top_k=3,
        repetition_penalty=2.0,
        top_p=0.5,
        eos_token_id=list(p.stop_ids),
        pad_token_id=p.pad_id,
    )
    prompts = p._prompts([CTX_A, CTX_B])  # different lengths: left padding is exercised
    inputs = p._batch(prompts, [[], []])
    inputs.pop("position_ids")
    torch.manual_seed(0)
    with torch.no_grad():
        out = p.model.generate(**inputs, generation_config=p.generation_config(output_scores=True))
    width = inputs["input_ids"].shape[1]
    completions = [p._cut(r) for r in out.sequences[:, width:].tolist()]
    with torch.no_grad():
        logp, mask = p._score(prompts, completions)
    for i, c in enumerate(completions):
        for j, tok in enumerate(c):
            processed = torch.log_softmax(out.scores[j][i].float(), -1)[tok]
            assert float(processed) == pytest.approx(float(logp[i, j]), abs=1e-4)


def test_reseed_makes_sampling_deterministic(policy: HFPolicy) -> None:
    policy.reseed(11)
    first = [s.token_ids for r in policy.sample([CTX_A, CTX_B], 2) for s in r]
    policy.reseed(11)
    second = [s.token_ids for r in policy.sample([CTX_A, CTX_B], 2) for s in r]
    policy.reseed(12)
    third = [s.token_ids for r in policy.sample([CTX_A, CTX_B], 2) for s in r]
    assert first == second
    assert first != third


def test_greedy_repeats_one_argmax_decode(policy: HFPolicy) -> None:
    (row,) = policy.sample([CTX_A], 3, greedy=True)
    assert len(row) == 3 and len({s.token_ids for s in row}) == 1
    manual = _manual_logp(policy, CTX_A, list(row[0].token_ids))
    assert row[0].log_prob == pytest.approx(float(manual.sum()), abs=1e-3)


def test_stored_token_ids_are_rescored_not_the_retokenised_text(policy: HFPolicy) -> None:
    """A model may emit a non-canonical split of a string; re-tokenising the text gives other
    ids and another log-prob, which is why samples keep their ids."""
    text = "tap(0.5, 0.25)"
    canonical = policy.tokenize(text)
    per_char = [t for ch in text for t in policy.tokenize(ch)]
    assert per_char != canonical and policy.decode(per_char) == text
    eos = policy.stop_ids[0]
    generated = policy.to_sample(per_char + [eos], 0.0)
    assert generated.action == Action.tap(0.5, 0.25)
    retokenised = SampledAction(generated.action, 0.0, generated.raw)
    logp, mask = policy.decision_log_probs([CTX_A, CTX_A], [generated, retokenised])
    assert int(mask[0].sum()) == len(per_char) + 1 and int(mask[1].sum()) == len(canonical) + 1
    exact = _manual_logp(policy, CTX_A, per_char + [eos]).sum()
    totals = (logp * mask).sum(-1).detach()
    assert float(totals[0]) == pytest.approx(float(exact), abs=1e-3)
    assert abs(float(totals[1]) - float(exact)) > 1e-2
    # plain actions (SFT, expert scoring) are scored as canonical tokens + the stop token
    lp_action, _ = policy.decision_log_probs([CTX_A], [Action.tap(0.5, 0.25)])
    assert torch.allclose(lp_action, logp[1:2, : lp_action.shape[1]], atol=1e-5)


def test_invalid_outputs_are_samples_not_crashes(policy: HFPolicy) -> None:
    eos = policy.stop_ids[0]
    chatter = policy.to_sample(policy.tokenize("I would tap OK") + [eos], -3.0)
    truncated = policy.to_sample(policy.tokenize('type("unterminated'), -2.0)
    assert chatter.action is None and not chatter.valid and chatter.raw == "I would tap OK"
    assert truncated.action is None and truncated.truncated
    # an untrained model's samples are garbage: all invalid, each its own cluster
    policy.reseed(0)
    (row,) = policy.sample([CTX_A], 8)
    assert all(s.action is None for s in row)
    assert disagreement([s.action for s in row]) == 1.0
    ok = Action.tap(0.2, 0.15)
    mixed = [ok, ok, ok, None, None, ok, ok, ok]
    assert cluster_sizes(mixed) == [6, 1, 1]
    # invalid samples can still be scored (GRPO pushes their probability down)
    logp, mask = policy.decision_log_probs([CTX_A] * 2, [chatter, truncated])
    assert torch.isfinite(logp).all() and bool((logp * mask).sum(-1).lt(0).all())


# -- training -----------------------------------------------------------------------------------


def _group(
    samples: list[SampledAction], rewards: list[float], ctx: Context = CTX_A, purpose: str = "train"
) -> Group:
    job = Job(
        kind="onestep",
        task=TaskSpec("mobile", "t", 0),
        group_size=len(samples),
        checkpoint_id="c0",
        purpose=purpose,
    )  # type: ignore[arg-type]
    return Group(job, [[Decision(ctx, s)] for s in samples], rewards)


def test_grpo_update_moves_lora_weights_only_and_raises_rewarded_sample() -> None:
    p = HFPolicy(tiny=True, seed=2, max_new_tokens=MAX_NEW)
    p.reseed(0)
    drawn = p.sample([CTX_A], 2)[0]
    eos = p.stop_ids[0]
    good = p.to_sample(p.tokenize("tap(0.2, 0.15)") + [eos], 0.0)
    bad = p.to_sample(p.tokenize("key(back)") + [eos], 0.0)
    samples = [good, bad, *drawn]
    rewards = [1.0, 0.0, 0.0, 0.0]  # invalid samples earn 0
    frozen = {n: q.detach().clone() for n, q in p.model.named_parameters() if not q.requires_grad}
    before = p.state_dict()
    with torch.no_grad():
        lp_good_before = float(p.log_prob([CTX_A], [good]))
    optimizer = torch.optim.Adam(p.parameters(), lr=2e-2)
    cfg = GRPOConfig(ppo_epochs=2)
    groups = [
        _group(samples, rewards),
        _group(samples[:2], [1.0, 1.0]),
        _group(samples[:2], [1.0, 0.0], purpose="routing"),
    ]
    for _ in range(3):
        result = grpo_update(p, optimizer, groups, cfg)
    assert result.groups_used == 1 and result.groups_skipped == 1
    assert result.training_samples[0] == 4 and result.training_samples[1] == 0
    after = p.state_dict()
    changed = [n for n in before if not torch.equal(before[n], after[n])]
    assert changed and all("lora_" in n for n in changed)
    assert any("lora_B" in n for n in changed)
    for n, q in p.model.named_parameters():
        if n in frozen:
            assert torch.equal(q, frozen[n]), n
    with torch.no_grad():
        assert float(p.log_prob([CTX_A], [good])) > lp_good_before + 0.1


def test_sft_steps_teach_the_model_a_valid_action() -> None:
    """Maximising the log-prob of one action text makes greedy decoding produce it: sampling
    decodes, stops on EOS and parses into the action (full fine-tuning path, lora off)."""
    p = HFPolicy(tiny=True, seed=4, lora=False, max_new_tokens=16)
    target = Action.tap(0.2, 0.15)
    optimizer = torch.optim.Adam(p.parameters(), lr=5e-3)
    p.train(True)
    for _ in range(45):
        loss = -p.log_prob([CTX_A], [target]).mean()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(p.parameters(), 1.0)
        optimizer.step()
    p.train(False)
    (row,) = p.sample([CTX_A], 2, greedy=True)
    assert row[0].action == target and row[0].raw == "tap(0.2, 0.15)"
    assert not row[0].truncated and row[0].log_prob > -1.0


# -- persistence --------------------------------------------------------------------------------


def test_save_load_roundtrip_is_exact(tmp_path: Path) -> None:
    p = HFPolicy(tiny=True, seed=5, max_new_tokens=MAX_NEW, temperature=0.9)
    with torch.no_grad():
        for q in p.parameters():
            q.add_(0.05 * torch.randn_like(q))  # a "trained" adapter (lora_B is zero at init)
    p.save(tmp_path / "pol")
    p.save(tmp_path / "pol")  # over an existing save
    saved = tmp_path / "pol" / "hf_policy"
    assert (saved / "adapter" / "adapter_config.json").exists()
    assert (saved / "model" / "config.json").exists() and (saved / "tokenizer").exists()
    assert not [f for f in (tmp_path / "pol").iterdir() if f.name.startswith(".hf_policy")]
    q = load_policy(PolicyConfig(kind="hf"), tmp_path / "pol")
    assert isinstance(q, HFPolicy) and q.config == p.config
    a, b = p.state_dict(), q.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    frozen_p = {n: t for n, t in p.model.named_parameters() if not t.requires_grad}
    for n, t in q.model.named_parameters():
        if not t.requires_grad:
            assert torch.equal(t, frozen_p[n]), n
    p.reseed(7)
    sp = p.sample([CTX_A, CTX_B], 2)
    q.reseed(7)
    sq = q.sample([CTX_A, CTX_B], 2)
    assert [s.token_ids for r in sp for s in r] == [s.token_ids for r in sq for s in r]
    assert [s.log_prob for r in sp for s in r] == pytest.approx(
        [s.log_prob for r in sq for s in r], abs=1e-5
    )
    # the trainer's resume path: load_state_dict(load(state).state_dict())
    fresh = HFPolicy(tiny=True, seed=5, max_new_tokens=MAX_NEW, temperature=0.9)
    fresh.load_state_dict(q.state_dict())
    assert all(torch.equal(fresh.state_dict()[k], a[k]) for k in a)
    with pytest.raises(ValueError, match="does not fit"):
        fresh.load_state_dict({"nope": torch.zeros(1)})


def test_load_recovers_from_a_save_killed_between_renames(tmp_path: Path) -> None:
    p = HFPolicy(tiny=True, seed=6, max_new_tokens=2)
    p.save(tmp_path)
    (tmp_path / "hf_policy").rename(tmp_path / ".hf_policy.old")
    q = HFPolicy.load(tmp_path)
    assert all(torch.equal(p.state_dict()[k], v) for k, v in q.state_dict().items())
    with pytest.raises(FileNotFoundError, match="no saved hf policy"):
        HFPolicy.load(tmp_path / "missing")


# -- vision-language models ---------------------------------------------------------------------


def _tiny_llava(folder: Path) -> None:
    """A tiny LLaVA (Qwen2 text model + 2-layer CLIP vision tower) with a processor, saved
    like a hub checkpoint - the VLM path without a download or torchvision."""
    import transformers as tf

    from adaroll.policies.hf_tiny import build_tiny_tokenizer

    tok = build_tiny_tokenizer()
    tok.add_special_tokens({"additional_special_tokens": ["<image>"]})
    template = (
        "{% for m in messages %}<{{ m['role'] }}>{% if m['content'] is string %}"
        "{{ m['content'] }}{% else %}{% for p in m['content'] %}{% if p['type'] == 'image' %}"
        "<image>{% else %}{{ p['text'] }}{% endif %}{% endfor %}{% endif %}"
        "</{{ m['role'] }}>{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
    )
    tok.chat_template = template
    images = tf.CLIPImageProcessorPil(
        size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28}
    )
    processor = tf.LlavaProcessor(
        image_processor=images,
        tokenizer=tok,
        patch_size=14,
        vision_feature_select_strategy="default",
        chat_template=template,
        num_additional_image_tokens=1,
    )
    config = tf.LlavaConfig(
        vision_config=tf.CLIPVisionConfig(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            image_size=28,
            patch_size=14,
        ),
        text_config=tf.Qwen2Config(
            vocab_size=len(tok),
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
        ),
        image_token_id=tok.convert_tokens_to_ids("<image>"),
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
    )
    torch.manual_seed(0)
    model = tf.LlavaForConditionalGeneration(config)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.save_pretrained(folder)
    processor.save_pretrained(folder)


def test_vlm_gets_screenshots_and_exact_log_probs(tmp_path: Path) -> None:
    import numpy as np

    _tiny_llava(tmp_path / "llava")
    p = HFPolicy(
        model=str(tmp_path / "llava"),
        max_new_tokens=4,
        lora_target_modules=r".*language_model.*\.(q_proj|v_proj)",
    )
    assert p.vision and all("language_model" in n for n in p.named_trainable())
    shot = np.random.default_rng(0).integers(0, 255, (112, 84, 3), dtype=np.uint8)
    with_image = Context("Tap OK", Observation(_obs().elements, (84, 112), screenshot=shot))
    contexts = [with_image, CTX_B]  # an image row and a text-only row in one batch
    prompts = p._prompts(contexts)
    assert "pixel_values" in prompts[0].extras and not prompts[1].extras
    assert p.prompt_text(with_image).startswith("<system>") and "<image>" in p.prompt_text(
        with_image
    )
    p.reseed(0)
    flat = [s for row in p.sample(contexts, 2) for s in row]
    rows = [c for c in contexts for _ in range(2)]
    p.train(True)
    logp, mask = p.decision_log_probs(rows, flat)
    (logp * mask).sum().backward()
    p.train(False)
    assert all(q.grad is not None for q in p.parameters())
    totals = (logp * mask).sum(-1).detach()
    for i, (ctx, s) in enumerate(zip(rows, flat, strict=True)):
        prompt = p._prompt(ctx)
        ids = torch.tensor([list(prompt.ids) + list(s.token_ids)])
        with torch.no_grad():
            lsm = torch.log_softmax(p.model(input_ids=ids, **prompt.extras).logits[0].float(), -1)
        start = len(prompt.ids) - 1
        manual = sum(float(lsm[start + j, t]) for j, t in enumerate(s.token_ids))
        assert s.log_prob == pytest.approx(manual, abs=1e-3)
        assert float(totals[i]) == pytest.approx(manual, abs=1e-3)
    p.save(tmp_path / "saved")  # LoRA over a checkpoint: adapter only, base re-read on load
    assert not (tmp_path / "saved" / "hf_policy" / "model").exists()
    q = HFPolicy.load(tmp_path / "saved")
    assert q.vision and all(torch.equal(v, p.state_dict()[k]) for k, v in q.state_dict().items())
