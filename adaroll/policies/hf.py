"""The ``hf`` policy: a Hugging Face causal LM or vision-language model, optionally with LoRA.

Needs the ``llm`` extra (``pip install -e '.[llm]'``: transformers, peft, tokenizers, httpx).

**Prompt** (:mod:`adaroll.policies.prompts`): system = role + the action-format help generated
from the action docs; user = instruction + the last ``history_len`` actions + the element list
(+ the screenshot for a VLM, when the observation has one and ``use_images`` is on). Rendered
with the tokenizer's (processor's) chat template, or :func:`~adaroll.policies.prompts.plain_prompt`
when there is none.

**Output**: the generated text (up to the first stop token) is parsed strictly with
:func:`adaroll.actions.parse_action`. Anything that does not parse - chatter, a code fence, a
truncated answer - is a :class:`LMSample` with ``action=None``: a valid sample that earns reward
0, is counted invalid and forms its own disagreement cluster. It still has token ids and a
log-probability, so GRPO pushes its probability down. Sampling never raises on model output.

**Distribution and log-probs**: the policy is the *tempered* distribution
``softmax(logits / temperature)`` over the full vocabulary, token by token, until a stop token
(the model's ``generation_config.eos_token_id`` ids and the tokenizer's EOS) or
``max_new_tokens``. Generation uses exactly that: the policy owns the generation config and
turns off every logits processor a checkpoint may ship (top-k/top-p/min-p, repetition
penalties, suppressed tokens, ...). The log-probability of a sample is the exact sum of
``log_softmax(logits / T)`` over its generated tokens **including the stop token** when
generation stopped on one (a truncated sample has no stop token; its log-prob covers the
tokens it has). It is computed by one scoring forward pass after generation - the same code
as :meth:`HFPolicy.decision_log_probs` - so ``sample.log_prob`` equals the sum of
``decision_log_probs`` up to float noise. Greedy samples are scored under the same tempered
distribution.

**Token ids**: samples are :class:`LMSample` (a :class:`SampledAction` subclass) carrying the
generated ``token_ids``; ``decision_log_probs`` re-scores exactly those ids. Re-tokenising
``raw`` is *not* equivalent: a model may generate a non-canonical split of a string (``"ta"`` +
``"p"`` instead of ``"tap"``), and decoding can be lossy, so the ids are kept on the sample (no
side table: samples travel through Ray workers and resumes as plain picklable values). Plain
:class:`SampledAction`\\ s (from another policy) and plain :class:`Action`\\ s (expert actions,
SFT) are scored as ``tokenize(raw or action.to_text()) + [first stop token]``.

``decision_log_probs`` returns per-token log-probs ``[B, T]`` and a mask ``[B, T]`` (``T`` =
longest completion in the batch) on the CPU (gradients flow back to the model's device), so
the GRPO loss is computed per token with masks.

**Batching**: prompts + completions are left-padded as whole sequences (position ids from the
attention mask, as ``generate`` does), so the completion tokens of every row sit in the last
``T`` positions and only those logits are computed (``logits_to_keep``) - the vocabulary
projection over a long prompt is never materialised.

**Vision-language models** (a checkpoint whose config has a ``vision_config``): loaded with
``AutoModelForImageTextToText`` and ``AutoProcessor``; a context whose observation has a
screenshot gets an image part in its user message and the processor's image tensors
(``pixel_values``, ``image_grid_thw``, ...), which are concatenated along dim 0 across a batch
(the layout of Qwen2/2.5/3-VL and LLaVA-style models); the model computes its own position ids.
Rows with and without images can share a batch. (Fast image processors need ``torchvision``
matching your torch build; it is not part of the extra.)

**Sampling through a server** (``sampler: {...}``): the texts are drawn by an OpenAI-compatible
server (vLLM) that serves the base model with LoRA enabled, and scored here. Before sampling,
the adapter is saved and loaded into the server (``/v1/load_lora_adapter``) whenever the
trainable weights changed. Such samples are scored as the *canonical* tokenisation of the text
+ the first stop token (the server's own token ids are not used), so a server that produced a
non-canonical split yields a slightly off-policy sample; the GRPO ratio stays consistent
because old and new log-probs are both computed here. See docs/llm.md.

**GPU**: on CUDA the model loads in bfloat16 (``dtype: auto``) with gradient checkpointing
(``gradient_checkpointing: null`` = on with CUDA); log-softmax is computed in float32. The LoRA
adapter stays in float32 (peft's default).

**Save layout** (``save(PATH)``, atomic: written to a temporary folder, then swapped in)::

    PATH/config.json             readable: {"kind": "hf", ...config}
    PATH/hf_policy/policy.json   format tag + config
    PATH/hf_policy/tokenizer/    tokenizer (or processor, for a VLM)
    PATH/hf_policy/adapter/      peft LoRA adapter (adapter_config.json + safetensors) - also
                                 loadable by vLLM (``--enable-lora``), see docs/llm.md
    PATH/hf_policy/model/        full weights: the tiny test model, or a full fine-tune

A LoRA policy over a real checkpoint saves only the adapter; ``load`` reads the base model
from ``config.model`` again.
"""

from __future__ import annotations

import copy
import inspect
import json
import math
import os
import shutil
import tempfile
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import torch

try:
    import transformers
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import GenerationConfig
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the 'hf' policy needs the llm extra: pip install -e '.[llm]' "
        f"(transformers, peft, tokenizers, httpx); import failed with: {exc}"
    ) from exc

from adaroll.actions import Action, ActionParseError, parse_action
from adaroll.io import atomic_write_text
from adaroll.policies.base import POLICIES, Context, Policy, SampledAction
from adaroll.policies.hf_tiny import build_tiny_model, build_tiny_tokenizer
from adaroll.policies.prompts import has_screenshot, hf_messages, plain_prompt, screenshot_image

FORMAT = "adaroll-hf-policy/1"
SAVE_DIR = "hf_policy"
DEFAULT_LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass(frozen=True)
class HFPolicyConfig:
    """Configuration of :class:`HFPolicy` (``policy.options`` in the run config; saved)."""

    model: str | None = None
    """Hugging Face model id or local path (causal LM or vision-language model). Exactly one of
    ``model`` and ``tiny`` must be set."""
    tiny: bool = False
    """Build the tiny randomly initialised Qwen2 model (2 layers, hidden 64) with a byte-level
    BPE tokenizer trained in-process: no download; for tests and smoke runs."""
    lora: bool = True
    """Train a LoRA adapter (peft) on a frozen base; False trains every weight."""
    lora_r: int = 16
    """LoRA rank."""
    lora_alpha: int = 32
    """LoRA scaling numerator (scale = alpha / r)."""
    lora_dropout: float = 0.0
    """LoRA dropout. Keep 0 so that GRPO's old/new log-prob ratio is exact."""
    lora_target_modules: tuple[str, ...] | str = DEFAULT_LORA_TARGETS
    """Module names LoRA wraps, or one regex string (peft semantics), e.g.
    ``'.*language_model.*\\.(q_proj|k_proj|v_proj|o_proj)'`` to leave a VLM's vision tower alone."""
    temperature: float = 1.0
    """Sampling temperature; log-probs are those of ``softmax(logits / temperature)``."""
    max_new_tokens: int = 48
    """Most tokens generated per action; a sample cut here usually fails to parse (invalid)."""
    batch_size: int = 16
    """Sequences per ``generate`` call and per scoring forward pass."""
    history_len: int = 4
    """Previous actions shown in the prompt (the most recent ones)."""
    max_elements: int = 200
    """UI elements listed in the prompt at most (the rest are counted, not shown)."""
    system_prompt: str | None = None
    """Replaces the default role text of the system message (the action-format help is always
    appended)."""
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)
    """Extra keyword arguments for ``apply_chat_template`` (e.g. ``enable_thinking: false``)."""
    use_images: bool = True
    """Give the screenshot to a vision-language model when the observation has one."""
    dtype: str = "auto"
    """Weights dtype: auto (bfloat16 on CUDA, else float32), float32, bfloat16, float16."""
    device: str = "auto"
    """auto (cuda if available, else cpu), cpu, cuda, cuda:1, ..."""
    gradient_checkpointing: bool | None = None
    """Recompute activations in the backward pass; None = on when running on CUDA."""
    trust_remote_code: bool = False
    """Passed to ``from_pretrained`` (models whose code lives in their repository)."""
    seed: int = 0
    """Seeds the tiny model's and the LoRA adapter's initialisation."""
    sampler: dict[str, Any] | None = None
    """Options of a :class:`~adaroll.policies.remote.RemotePolicy` for an OpenAI-compatible
    server (vLLM with ``--enable-lora``) serving this policy's base model. When set, ``sample``
    draws the texts there and scores them here (exact log-probs of the re-tokenised texts),
    after loading the current LoRA adapter into the server if the weights changed since the
    last sync. Needs ``lora: true``. See docs/llm.md."""
    sync_dir: str | None = None
    """Folder the adapter is written to for the sampling server to load (the server must see
    the same path); default: a fresh temporary folder."""

    def __post_init__(self) -> None:
        if isinstance(self.lora_target_modules, list):
            object.__setattr__(self, "lora_target_modules", tuple(self.lora_target_modules))
        object.__setattr__(self, "chat_template_kwargs", dict(self.chat_template_kwargs))
        if (self.model is None) == (not self.tiny):
            raise ValueError(
                "set exactly one of policy.options.model (a model id/path) and "
                "policy.options.tiny: true"
            )
        if not (self.temperature > 0 and math.isfinite(self.temperature)):
            raise ValueError(f"temperature must be a positive number, got {self.temperature!r}")
        for name in ("max_new_tokens", "batch_size", "lora_r", "lora_alpha", "max_elements"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        if self.history_len < 0:
            raise ValueError("history_len must be >= 0")
        if not 0.0 <= self.lora_dropout < 1.0:
            raise ValueError("lora_dropout must be in [0, 1)")
        if self.sampler is not None:
            if not isinstance(self.sampler, dict):
                raise ValueError("sampler must be a mapping of remote policy options")
            if not self.lora:
                raise ValueError(
                    "sampler (a vLLM server) needs lora: true - the adapter is "
                    "what gets synced to the server"
                )
            object.__setattr__(self, "sampler", dict(self.sampler))
        if self.dtype != "auto" and self.dtype not in DTYPES:
            raise ValueError(f"dtype must be auto or one of {sorted(DTYPES)}, got {self.dtype!r}")

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> HFPolicyConfig:
        """From ``policy.options`` (plus ``history_len``/``seed`` added by ``make_policy``);
        an unknown option fails with the list of valid ones."""
        known = {f.name for f in fields(cls)}
        unknown = set(options) - known
        if unknown:
            raise ValueError(
                f"unknown hf policy option(s) {sorted(unknown)}; valid: {', '.join(sorted(known))}"
            )
        return cls(**options)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if isinstance(out["lora_target_modules"], tuple):
            out["lora_target_modules"] = list(out["lora_target_modules"])
        return out


@dataclass(frozen=True)
class LMSample(SampledAction):
    """A sample of a language-model policy: the parsed action (None if it did not parse), the
    exact log-prob, the text and the generated token ids (stop token included when generation
    stopped on one), which :meth:`HFPolicy.decision_log_probs` re-scores."""

    token_ids: tuple[int, ...] = ()
    """Generated token ids, stop token included (empty: score ``raw`` re-tokenised)."""
    truncated: bool = False
    """Generation hit ``max_new_tokens`` before a stop token."""


@dataclass(frozen=True)
class _Prompt:
    ids: tuple[int, ...]
    extras: dict[str, torch.Tensor]
    """Processor outputs besides the text (pixel_values, image_grid_thw, ...), batch dim 1."""


def _resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


@POLICIES.register("hf")
class HFPolicy(Policy):
    """A policy over a Hugging Face causal LM / VLM (see the module docstring)."""

    @property
    def history_window(self) -> int:
        return self.config.history_len

    def __init__(
        self, config: HFPolicyConfig | None = None, *, _saved: Path | None = None, **options: Any
    ) -> None:
        if config is None:
            config = HFPolicyConfig.from_options(options)
        elif options:
            raise TypeError("pass either an HFPolicyConfig or keyword options, not both")
        self.config = config
        self.device = _resolve_device(config.device)
        self.dtype = (
            DTYPES[config.dtype]
            if config.dtype != "auto"
            else torch.bfloat16
            if self.device.type == "cuda"
            else torch.float32
        )
        self._prompt_cache: OrderedDict[Context, _Prompt] = OrderedDict()
        self._load(_saved)

    # -- construction -----------------------------------------------------------------------------
    def _load(self, saved: Path | None) -> None:
        cfg = self.config
        self.processor: Any = None
        if cfg.tiny and saved is None:
            self.tokenizer = build_tiny_tokenizer()
            model = build_tiny_model(self.tokenizer, seed=cfg.seed).to(dtype=self.dtype)
            self.vision = False
        else:
            tok_src = str(saved / "tokenizer") if saved is not None else str(cfg.model)
            full = saved / "model" if saved is not None else None
            model_src = str(full) if full is not None and full.exists() else str(cfg.model)
            remote = {"trust_remote_code": cfg.trust_remote_code}
            auto_cfg = transformers.AutoConfig.from_pretrained(model_src, **remote)
            self.vision = getattr(auto_cfg, "vision_config", None) is not None
            if self.vision:
                self.processor = transformers.AutoProcessor.from_pretrained(tok_src, **remote)
                self.tokenizer = self.processor.tokenizer
                model = transformers.AutoModelForImageTextToText.from_pretrained(
                    model_src, dtype=self.dtype, **remote
                )
            else:
                self.tokenizer = transformers.AutoTokenizer.from_pretrained(tok_src, **remote)
                model = transformers.AutoModelForCausalLM.from_pretrained(
                    model_src, dtype=self.dtype, **remote
                )
        self._setup_stop_tokens(model)
        self._tiny_base = copy.deepcopy(model) if cfg.tiny and cfg.lora else None
        use_gc = cfg.gradient_checkpointing
        if use_gc is None:
            use_gc = self.device.type == "cuda"
        if use_gc:
            enable = getattr(model, "activation_checkpointing_enable", None)
            if enable is not None:  # the transformers 5.x name
                enable(activation_checkpointing_kwargs={"use_reentrant": False})
            else:
                model.gradient_checkpointing_enable(
                    gradient_checkpointing_kwargs={"use_reentrant": False}
                )
            model.config.use_cache = False
        if cfg.lora:
            for p in model.parameters():
                p.requires_grad_(False)
            adapter = saved / "adapter" if saved is not None else None
            with warnings.catch_warnings():  # peft probes a property transformers deprecated
                warnings.filterwarnings(
                    "ignore", message=".*is_gradient_checkpointing", category=FutureWarning
                )
                if adapter is not None:
                    if not adapter.exists():
                        raise FileNotFoundError(f"LoRA policy saved without its adapter: {adapter}")
                    model = PeftModel.from_pretrained(model, str(adapter), is_trainable=True)
                else:
                    targets = cfg.lora_target_modules
                    lora = LoraConfig(
                        r=cfg.lora_r,
                        lora_alpha=cfg.lora_alpha,
                        lora_dropout=cfg.lora_dropout,
                        bias="none",
                        task_type="CAUSAL_LM",
                        target_modules=targets if isinstance(targets, str) else list(targets),
                    )
                    with torch.random.fork_rng(devices=[]):
                        torch.manual_seed(cfg.seed)
                        model = get_peft_model(model, lora)
        else:
            for p in model.parameters():
                p.requires_grad_(True)
        self.model = model.to(self.device)
        self.model.eval()
        base = self.model.get_base_model() if isinstance(self.model, PeftModel) else self.model
        self._keep_arg = "logits_to_keep" in inspect.signature(base.forward).parameters
        owner = self.processor if self.vision else self.tokenizer
        self._template_owner = owner if getattr(owner, "chat_template", None) else None
        self._setup_sampler()

    def _setup_sampler(self) -> None:
        cfg = self.config
        self.sampler: Any = None
        if cfg.sampler is None:
            return
        from adaroll.policies.remote import RemotePolicy

        options = {
            "temperature": cfg.temperature,
            "max_tokens": cfg.max_new_tokens,
            "logprobs": False,
            "history_len": cfg.history_len,
            "max_elements": cfg.max_elements,
            "system_prompt": cfg.system_prompt,
            "send_screenshot": self.vision and cfg.use_images,
            "seed": cfg.seed,
            **cfg.sampler,
        }
        self.sampler = RemotePolicy(**options)
        self._sync_root = (
            Path(cfg.sync_dir) if cfg.sync_dir else Path(tempfile.mkdtemp(prefix="adaroll-lora-"))
        )
        self._synced: tuple[int, ...] | None = None
        self._sync_version = 0

    def sync_sampler(self, *, force: bool = False) -> bool:
        """Load the current adapter into the sampling server if the trainable weights changed
        since the last sync (tracked by the tensors' in-place version counters); True if it
        synced. The adapter goes to ``sync_dir/adaroll-PID-vN`` and is loaded under that name
        (vLLM ``POST /v1/load_lora_adapter``); the previous one is unloaded."""
        if self.sampler is None:
            raise ValueError("this policy has no sampler (policy.options.sampler)")
        params = self.parameters()
        stamp = tuple(int(getattr(p, "_version", -1)) for p in params)
        stamp += tuple(p.data_ptr() for p in params)
        if not force and stamp == self._synced and -1 not in stamp:
            return False
        self._sync_version += 1
        name = f"adaroll-{os.getpid()}-v{self._sync_version}"
        folder = (self._sync_root / name).resolve()
        self.model.save_pretrained(str(folder))
        self.sampler.post("load_lora_adapter", {"lora_name": name, "lora_path": str(folder)})
        previous = self.sampler.model_name if self._sync_version > 1 else None
        self.sampler.model_name = name
        if previous is not None:
            try:
                self.sampler.post("unload_lora_adapter", {"lora_name": previous})
            except Exception:  # best effort: a stale adapter only costs server memory
                pass
            shutil.rmtree(self._sync_root / previous, ignore_errors=True)
        self._synced = stamp
        return True

    def _setup_stop_tokens(self, model: Any) -> None:
        """Stop ids = the checkpoint's generation EOS ids, then the tokenizer's EOS. The model's
        generation config is replaced by one holding only special-token ids, so that no
        shipped sampling setting (top-k, penalties, ...) can alter the distribution."""
        stops: list[int] = []
        gen_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        for tid in ([gen_eos] if isinstance(gen_eos, int) else list(gen_eos or [])) + [
            self.tokenizer.eos_token_id
        ]:
            if tid is not None and int(tid) not in stops:
                stops.append(int(tid))
        if not stops:
            raise ValueError("the model/tokenizer defines no EOS token to stop generation on")
        self.stop_ids: tuple[int, ...] = tuple(stops)
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad) if pad is not None else stops[0]
        bos = getattr(getattr(model, "generation_config", None), "bos_token_id", None)
        model.generation_config = GenerationConfig(
            eos_token_id=list(stops), pad_token_id=self.pad_id, bos_token_id=bos
        )

    # -- prompts ----------------------------------------------------------------------------------
    def prompt_text(self, context: Context) -> str:
        """The full prompt text (chat template applied) for ``context``."""
        return self._render(context, self._wants_image(context))[0]

    def _wants_image(self, context: Context) -> bool:
        return self.vision and self.config.use_images and has_screenshot(context)

    def _render(self, context: Context, image: bool) -> tuple[str, bool]:
        cfg = self.config
        messages = hf_messages(
            context,
            history_len=cfg.history_len,
            max_elements=cfg.max_elements,
            system=cfg.system_prompt,
            image=image,
        )
        if self._template_owner is not None:
            text = self._template_owner.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=False, **cfg.chat_template_kwargs
            )
            return str(text), False
        return plain_prompt(messages), True

    def _prompt(self, context: Context) -> _Prompt:
        image = self._wants_image(context)
        if not image:
            hit = self._prompt_cache.get(context)
            if hit is not None:
                self._prompt_cache.move_to_end(context)
                return hit
        text, special = self._render(context, image)
        if image:
            enc = self.processor(
                text=[text],
                images=[screenshot_image(context)],
                return_tensors="pt",
                add_special_tokens=special,
            )
            ids = tuple(int(t) for t in enc["input_ids"][0].tolist())
            extras = {
                k: v
                for k, v in enc.items()
                if k not in ("input_ids", "attention_mask") and isinstance(v, torch.Tensor)
            }
            return _Prompt(ids, extras)
        ids = tuple(self.tokenizer(text, add_special_tokens=special)["input_ids"])
        prompt = _Prompt(ids, {})
        self._prompt_cache[context] = prompt
        if len(self._prompt_cache) > 2048:
            self._prompt_cache.popitem(last=False)
        return prompt

    def _prompts(self, contexts: Sequence[Context]) -> list[_Prompt]:
        seen: dict[int, _Prompt] = {}
        out = []
        for c in contexts:
            p = seen.get(id(c))
            if p is None:
                p = seen[id(c)] = self._prompt(c)
            out.append(p)
        return out

    # -- batching ---------------------------------------------------------------------------------
    def _batch(
        self, prompts: Sequence[_Prompt], completions: Sequence[Sequence[int]]
    ) -> dict[str, Any]:
        """Left-padded ``prompt + completion`` rows: input_ids, attention_mask, position_ids
        (text models; VLMs compute their own), processor extras concatenated on dim 0."""
        seqs = [list(p.ids) + list(c) for p, c in zip(prompts, completions, strict=True)]
        length = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), length), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), length), dtype=torch.long)
        for i, s in enumerate(seqs):
            ids[i, length - len(s) :] = torch.tensor(s, dtype=torch.long)
            mask[i, length - len(s) :] = 1
        inputs: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if not self.vision:
            inputs["position_ids"] = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
        keys = sorted({k for p in prompts for k in p.extras})
        for key in keys:
            inputs[key] = torch.cat([p.extras[key] for p in prompts if key in p.extras], 0)
        out = {}
        for k, v in inputs.items():
            if isinstance(v, torch.Tensor):
                v = v.to(self.device)
                if v.is_floating_point():
                    v = v.to(self.dtype)
            out[k] = v
        return out

    def _chunks(self, n: int) -> list[range]:
        size = self.config.batch_size
        return [range(i, min(i + size, n)) for i in range(0, n, size)]

    # -- generation -------------------------------------------------------------------------------
    def generation_config(self, greedy: bool = False, **extra: Any) -> GenerationConfig:
        """The generation config of every ``generate`` call: pure tempered sampling (or
        argmax), every logits processor a checkpoint may ship explicitly neutral."""
        sampling: dict[str, Any] = {}
        if not greedy:  # sampling-only warpers; set only when sampling (else transformers warns)
            sampling = {
                "temperature": self.config.temperature,
                "top_k": 0,
                "top_p": 1.0,
                "min_p": None,
                "typical_p": 1.0,
                "epsilon_cutoff": 0.0,
                "eta_cutoff": 0.0,
            }
        return GenerationConfig(
            do_sample=not greedy,
            repetition_penalty=1.0,
            encoder_repetition_penalty=1.0,
            no_repeat_ngram_size=0,
            min_new_tokens=0,
            max_new_tokens=self.config.max_new_tokens,
            bad_words_ids=None,
            suppress_tokens=None,
            begin_suppress_tokens=None,
            forced_bos_token_id=None,
            forced_eos_token_id=None,
            sequence_bias=None,
            renormalize_logits=False,
            remove_invalid_values=False,
            num_beams=1,
            num_return_sequences=1,
            eos_token_id=list(self.stop_ids),
            pad_token_id=self.pad_id,
            use_cache=True,
            return_dict_in_generate=True,
            **sampling,
            **extra,
        )

    def _generate(self, prompts: Sequence[_Prompt], greedy: bool) -> list[list[int]]:
        """Completion ids per prompt, cut after the first stop token (kept)."""
        inputs = self._batch(prompts, [[] for _ in prompts])
        inputs.pop("position_ids", None)  # generate derives them from the attention mask
        width = inputs["input_ids"].shape[1]
        out = self.model.generate(**inputs, generation_config=self.generation_config(greedy))
        rows = out.sequences[:, width:].tolist()
        return [self._cut(r) for r in rows]

    def _cut(self, ids: Sequence[int]) -> list[int]:
        for j, t in enumerate(ids):
            if t in self.stop_ids:
                return list(ids[: j + 1])
        return list(ids)

    # -- scoring ----------------------------------------------------------------------------------
    def _score(
        self, prompts: Sequence[_Prompt], completions: Sequence[Sequence[int]]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-token log-probs ``[B, T]`` of ``completions[i]`` after ``prompts[i]`` and the
        mask ``[B, T]`` (CPU, float32; gradients when enabled)."""
        B = len(prompts)
        T = max((len(c) for c in completions), default=0)
        if B == 0 or T == 0:
            return torch.zeros(B, T), torch.zeros(B, T)
        if any(len(c) == 0 for c in completions):
            raise ValueError("cannot score an empty completion")
        parts_lp, parts_mask = [], []
        for chunk in self._chunks(B):
            ps = [prompts[i] for i in chunk]
            cs = [list(completions[i]) for i in chunk]
            tc = max(len(c) for c in cs)
            inputs = self._batch(ps, cs)
            kwargs: dict[str, Any] = {"use_cache": False}
            if self._keep_arg:
                kwargs["logits_to_keep"] = tc + 1
            logits = self.model(**inputs, **kwargs).logits[:, -(tc + 1) :]
            lsm = torch.log_softmax(logits.float() / self.config.temperature, dim=-1)
            lens = torch.tensor([len(c) for c in cs], device=lsm.device)
            cols = torch.arange(tc, device=lsm.device)
            valid = cols[None, :] < lens[:, None]
            pos = torch.where(valid, tc - lens[:, None] + cols[None, :], 0)
            tgt = torch.zeros(len(cs), tc, dtype=torch.long)
            for i, c in enumerate(cs):
                tgt[i, : len(c)] = torch.tensor(c, dtype=torch.long)
            rows = torch.arange(len(cs), device=lsm.device)[:, None]
            lp = lsm[rows, pos, tgt.to(lsm.device)]
            lp = torch.where(valid, lp, torch.zeros_like(lp)).cpu()
            parts_lp.append(torch.nn.functional.pad(lp, (0, T - tc)))
            parts_mask.append(torch.nn.functional.pad(valid.float().cpu(), (0, T - tc)))
        return torch.cat(parts_lp, 0), torch.cat(parts_mask, 0)

    def completion_ids(self, sample: SampledAction | Action) -> list[int]:
        """The token ids ``decision_log_probs`` scores for ``sample`` (see module docstring)."""
        if isinstance(sample, LMSample) and sample.token_ids:
            return list(sample.token_ids)
        if isinstance(sample, Action):
            text = sample.to_text()
        else:
            text = sample.raw or (sample.action.to_text() if sample.action is not None else "")
        return self.tokenize(text) + [self.stop_ids[0]]

    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text`` as a completion (no special tokens added)."""
        return [int(t) for t in self.tokenizer(text, add_special_tokens=False)["input_ids"]]

    def decode(self, ids: Sequence[int]) -> str:
        """The text of completion ids without stop tokens (other special tokens dropped)."""
        body = [t for t in ids if t not in self.stop_ids]
        return str(
            self.tokenizer.decode(
                body, skip_special_tokens=True, clean_up_tokenization_spaces=False
            )
        )

    def to_sample(self, ids: Sequence[int], log_prob: float) -> LMSample:
        """Decode and strictly parse ``ids``; an unparseable text gives ``action=None``."""
        raw = self.decode(ids)
        try:
            action: Action | None = parse_action(raw)
        except (ActionParseError, ValueError):
            action = None
        truncated = not ids or ids[-1] not in self.stop_ids
        return LMSample(action, float(log_prob), raw, tuple(int(t) for t in ids), truncated)

    # -- Policy protocol --------------------------------------------------------------------------
    @torch.no_grad()
    def sample(
        self, contexts: Sequence[Context], n: int, *, greedy: bool = False
    ) -> list[list[SampledAction]]:
        """``n`` samples per context; ``greedy`` decodes the argmax once and repeats it."""
        if not contexts:
            return []
        if n < 1:
            raise ValueError("n must be >= 1")
        prompts = self._prompts(contexts)
        copies = 1 if greedy else n
        rows = [i for i in range(len(contexts)) for _ in range(copies)]
        texts: list[str] | None = None
        if self.sampler is not None:
            self.sync_sampler()
            drawn_remote = self.sampler.sample(contexts, copies, greedy=greedy)
            texts = [s.raw for row in drawn_remote for s in row]
        was_training = self.model.training
        self.model.eval()
        try:
            completions: list[list[int]] = []
            if texts is not None:  # scored as the canonical tokens + the first stop token
                completions = [self.tokenize(t) + [self.stop_ids[0]] for t in texts]
            else:
                for chunk in self._chunks(len(rows)):
                    completions += self._generate([prompts[rows[i]] for i in chunk], greedy)
            logp, mask = self._score([prompts[r] for r in rows], completions)
        finally:
            self.model.train(was_training)
        totals = (logp * mask).sum(-1).tolist()
        drawn: list[SampledAction] = [
            self.to_sample(c, lp) for c, lp in zip(completions, totals, strict=True)
        ]
        out: list[list[SampledAction]] = []
        for i in range(len(contexts)):
            mine = drawn[i * copies : (i + 1) * copies]
            out.append(list(mine) * n if greedy else list(mine))
        return out

    def reseed(self, seed: int) -> None:
        """Reset torch's RNG (which ``generate`` samples with) and the sampler's request seeds."""
        super().reseed(seed)
        if self.sampler is not None:
            self.sampler.reseed(seed)

    def decision_log_probs(
        self, contexts: Sequence[Context], samples: Sequence[SampledAction | Action]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-token log-probs ``[B, T]`` and mask ``[B, T]`` (T = longest completion, stop
        token included), with gradients; accepts samples (invalid ones too) or plain Actions."""
        if len(contexts) != len(samples):
            raise ValueError(f"{len(contexts)} contexts but {len(samples)} samples")
        if not contexts:
            return torch.zeros(0, 0), torch.zeros(0, 0)
        prompts = self._prompts(contexts)
        return self._score(prompts, [self.completion_ids(s) for s in samples])

    def represents(self, context: Context, action: Action) -> bool:
        """Every action has a text, so a language model can score any of them."""
        return True

    def parameters(self) -> list[torch.nn.Parameter]:
        return [p for p in self.model.parameters() if p.requires_grad]

    def named_trainable(self) -> dict[str, torch.nn.Parameter]:
        return {n: p for n, p in self.model.named_parameters() if p.requires_grad}

    def state_dict(self) -> dict[str, Any]:
        """The trainable weights (the LoRA adapter, or every weight without LoRA), on CPU."""
        return {n: p.detach().cpu().clone() for n, p in self.named_trainable().items()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        params = self.named_trainable()
        missing, unexpected = set(params) - set(state), set(state) - set(params)
        if missing or unexpected:
            raise ValueError(
                f"state dict does not fit this policy: missing {sorted(missing)[:5]}, "
                f"unexpected {sorted(unexpected)[:5]}"
            )
        with torch.no_grad():
            for name, p in params.items():
                p.copy_(torch.as_tensor(state[name]).to(device=p.device, dtype=p.dtype))

    def train(self, mode: bool = True) -> None:
        self.model.train(mode)

    def save(self, path: Path | str) -> None:
        """Write the policy under ``path`` atomically (layout in the module docstring)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        final, old = path / SAVE_DIR, path / f".{SAVE_DIR}.old"
        tmp = Path(tempfile.mkdtemp(dir=path, prefix=f".{SAVE_DIR}.tmp-"))
        try:
            (self.processor or self.tokenizer).save_pretrained(str(tmp / "tokenizer"))
            if self.config.lora:
                self.model.save_pretrained(str(tmp / "adapter"))
            if self.config.tiny or not self.config.lora:
                full = self._tiny_base if self._tiny_base is not None else self.model
                full.save_pretrained(str(tmp / "model"))
            meta = {"format": FORMAT, "kind": "hf", "config": self.config.to_dict()}
            atomic_write_text(tmp / "policy.json", json.dumps(meta, indent=1))
            _fsync_tree(tmp)
            if old.exists():
                shutil.rmtree(old)
            if final.exists():
                final.rename(old)
            tmp.rename(final)
            shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        atomic_write_text(
            path / "config.json", json.dumps({"kind": "hf", **self.config.to_dict()}, indent=1)
        )

    @classmethod
    def load(cls, path: Path | str) -> HFPolicy:
        """Restore a policy written by :meth:`save` (a LoRA policy over a real checkpoint
        re-reads its base model from ``config.model``)."""
        path = Path(path)
        saved = path / SAVE_DIR
        if not saved.exists() and (path / f".{SAVE_DIR}.old").exists():
            saved = path / f".{SAVE_DIR}.old"  # killed between the two renames of a save
        meta_file = saved / "policy.json"
        if not meta_file.exists():
            raise FileNotFoundError(f"no saved hf policy under {path} (expected {meta_file})")
        meta = json.loads(meta_file.read_text())
        if meta.get("format") != FORMAT:
            raise ValueError(f"{meta_file} is not an hf-policy file ({FORMAT})")
        return cls(HFPolicyConfig.from_options(meta["config"]), _saved=saved)


def _fsync_tree(root: Path) -> None:
    for folder, _, files in os.walk(root):
        for name in files:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
