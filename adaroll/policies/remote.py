"""The ``remote`` policy: sampling through any OpenAI-compatible chat-completions endpoint
(vLLM, SGLang, hosted APIs), and :class:`RemoteExpert`, which lets such a model act as the
expert of ``adaroll experts collect``.

Needs ``httpx`` (in the ``llm`` extra).

**Where things come from**: ``base_url`` (e.g. ``http://127.0.0.1:8000/v1``) and ``model``
from the options, else from the environment variables named by ``base_url_env`` /
``model_env``. The API key comes *only* from the environment variable named by
``api_key_env`` (default ``OPENAI_API_KEY``; unset -> no ``Authorization`` header, fine for a
local vLLM). The key is never part of the config, never saved, never pickled (a copy sent to a
Ray worker re-reads the variable there) and never put into a message or log line.

**Requests**: one ``POST {base_url}/chat/completions`` per context asking for ``n`` choices
(``use_n: true``), or ``n`` requests of one choice each (``use_n: false``, for servers without
``n``); if a server returns fewer choices than asked, the rest are requested one by one.
Requests run on a thread pool of ``concurrency`` workers. ``greedy`` sends ``temperature: 0``
once per context and repeats the answer ``n`` times. With ``send_seed`` every request carries
a ``seed`` derived from :meth:`RemotePolicy.reseed`'s seed and a request counter, assigned
before the requests are dispatched, so a server that honours seeds (vLLM does) answers the
same on a rerun.

**Failures**:

* connection errors, timeouts (``timeout_s`` per request) and HTTP 408/409/429/5xx are retried
  with exponential backoff (``backoff_s * 2**attempt``, capped at ``backoff_max_s``; a
  ``Retry-After`` header in seconds is honoured up to the same cap), ``max_retries`` times;
* a 200 answer that breaks the protocol - a body that is not JSON, or JSON without a non-empty
  ``choices`` list (e.g. an ``{"error": ...}`` object) - is retried the same way (proxies and
  overloaded servers produce these transiently);
* other HTTP errors (400, 401, 404, ...) are configuration errors and are not retried;
* when retries are exhausted, or on a non-retried error, :class:`RemoteError` is raised with
  the URL, the status and an excerpt of the body: an unreachable endpoint stops the run rather
  than silently turning into zero rewards;
* a choice that is present but carries no usable text (``content`` null, a refusal or tool
  call, a non-object choice) is a sample with ``action=None`` (invalid: reward 0, its own
  disagreement cluster), as is any text that does not parse strictly as one action.

**Log-probs**: with ``logprobs: true`` the request asks for token log-probs and a sample's
``log_prob`` is the sum of ``choices[i].logprobs.content[*].logprob``; when the server returns
none, it is ``NaN``. Caveats: OpenAI-style APIs do not report the stop token, so the sum
covers the text tokens only; vLLM reports log-probs of the *raw* (untempered) model
distribution unless started with ``--logprobs-mode processed_logprobs``. The value is for
monitoring and entropy-style pivot scores; nothing trains on it.

**Training**: impossible - there are no local weights. :meth:`decision_log_probs` raises
:class:`RemoteNotTrainableError`, :meth:`parameters` is empty. To train a model while vLLM
samples it, train it as ``kind: hf`` and sync its LoRA adapter to the server (docs/llm.md).
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import torch

try:
    import httpx
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        f"the 'remote' policy needs httpx (pip install -e '.[llm]'); import failed with: {exc}"
    ) from exc

from adaroll.actions import Action, ActionParseError, parse_action
from adaroll.envs.base import GUIEnv, TaskSpec, TaskSuite
from adaroll.io import atomic_write_text
from adaroll.policies.base import POLICIES, Context, Policy, SampledAction
from adaroll.policies.prompts import openai_messages

FORMAT = "adaroll-remote-policy/1"
SAVE_FILE = "remote_policy.json"
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


class RemoteError(RuntimeError):
    """The endpoint failed after retries, or refused the request (status and body excerpt
    in the message; never the API key)."""


class RemoteNotTrainableError(TypeError):
    """A remote policy has no local weights: it samples, it cannot be trained."""


@dataclass(frozen=True)
class RemotePolicyConfig:
    """Configuration of :class:`RemotePolicy` (``policy.options``; saved without any key)."""

    base_url: str | None = None
    """Endpoint root, e.g. ``http://127.0.0.1:8000/v1`` (``/chat/completions`` is appended);
    None reads the variable named by ``base_url_env``."""
    base_url_env: str = "OPENAI_BASE_URL"
    """Environment variable holding the base URL when ``base_url`` is not set."""
    model: str | None = None
    """Model name sent with each request; None reads the variable named by ``model_env``."""
    model_env: str = "ADAROLL_REMOTE_MODEL"
    """Environment variable holding the model name when ``model`` is not set."""
    api_key_env: str | None = "OPENAI_API_KEY"
    """Name of the environment variable holding the API key (the key itself is never
    configured, saved or logged). None or unset variable: no Authorization header."""
    temperature: float = 1.0
    """Sampling temperature (greedy sampling sends 0)."""
    top_p: float | None = None
    """Nucleus sampling mass, sent only when set."""
    max_tokens: int = 64
    """Most tokens per answer."""
    logprobs: bool = True
    """Ask for token log-probs (a sample's log_prob is their sum; NaN when absent)."""
    use_n: bool = True
    """Ask for all n samples of a context in one request (``n``); False sends n requests."""
    concurrency: int = 8
    """Requests in flight at once (thread pool size)."""
    timeout_s: float = 60.0
    """Timeout of one request, seconds."""
    max_retries: int = 4
    """Retries of a failed request (connection error, timeout, 408/409/429/5xx, malformed)."""
    backoff_s: float = 0.5
    """First retry delay, seconds; doubled on every further retry."""
    backoff_max_s: float = 8.0
    """Longest retry delay (also caps a Retry-After header), seconds."""
    send_seed: bool = True
    """Send a per-request ``seed`` derived from the policy seed (reproducible on vLLM)."""
    send_screenshot: bool = True
    """Attach the observation's screenshot (PNG data URL) when it has one."""
    history_len: int = 4
    """Previous actions shown in the prompt."""
    max_elements: int = 200
    """UI elements listed in the prompt at most."""
    system_prompt: str | None = None
    """Replaces the default role text of the system message (the action help is appended)."""
    extra_body: dict[str, Any] = field(default_factory=dict)
    """Extra request fields, e.g. ``{top_k: 20}`` or ``{chat_template_kwargs: {...}}`` for vLLM."""
    seed: int = 0
    """Base of the per-request seeds (reset by ``reseed``)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra_body", dict(self.extra_body))
        if not (self.temperature >= 0 and math.isfinite(self.temperature)):
            raise ValueError("temperature must be >= 0")
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise ValueError("top_p must be in (0, 1]")
        for name in ("max_tokens", "concurrency", "max_elements"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.max_retries < 0 or self.history_len < 0:
            raise ValueError("max_retries and history_len must be >= 0")
        if not (self.timeout_s > 0 and self.backoff_s >= 0 and self.backoff_max_s >= 0):
            raise ValueError("timeout_s must be > 0 and backoffs >= 0")
        secret = {k for k in self.extra_body if "key" in k.lower() or "auth" in k.lower()}
        if secret:
            raise ValueError(
                f"extra_body must not carry credentials ({sorted(secret)}); put the "
                "key in the environment variable named by api_key_env"
            )

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> RemotePolicyConfig:
        if "api_key" in options:
            raise ValueError(
                "the API key is never a config option: put it in an environment "
                "variable and name that variable with api_key_env"
            )
        known = {f.name for f in fields(cls)}
        unknown = set(options) - known
        if unknown:
            raise ValueError(
                f"unknown remote policy option(s) {sorted(unknown)}; valid: "
                f"{', '.join(sorted(known))}"
            )
        return cls(**options)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _excerpt(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def _choice_text(choice: Any) -> tuple[str, bool]:
    """(text, usable) of one choice; a missing/null/non-string content is not usable."""
    if not isinstance(choice, dict):
        return "", False
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content, True
    return "", False


def _choice_logprob(choice: Any) -> float:
    """Sum of the choice's token log-probs; NaN when the server sent none."""
    if not isinstance(choice, dict):
        return math.nan
    lp = choice.get("logprobs")
    content = lp.get("content") if isinstance(lp, dict) else None
    if not isinstance(content, list) or not content:
        return math.nan
    total = 0.0
    for token in content:
        value = token.get("logprob") if isinstance(token, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return math.nan
        total += float(value)
    return total


def to_sample(choice: Any) -> SampledAction:
    """A choice of a chat-completions answer as a sample (``action=None`` if unusable)."""
    text, usable = _choice_text(choice)
    action: Action | None = None
    if usable:
        try:
            action = parse_action(text)
        except (ActionParseError, ValueError):
            action = None
    return SampledAction(action, _choice_logprob(choice), text)


def _choices(response: httpx.Response) -> tuple[list[Any] | None, str]:
    """The ``choices`` of a 2xx chat answer, or an error for a malformed one."""
    try:
        data = response.json()
    except ValueError:
        return None, f"malformed response: not JSON: {_excerpt(response.text)!r}"
    choices = data.get("choices") if isinstance(data, dict) else None
    if isinstance(choices, list) and choices:
        return choices, ""
    return None, f"malformed response: no non-empty 'choices' list: {_excerpt(json.dumps(data))}"


@POLICIES.register("remote")
class RemotePolicy(Policy):
    """A policy answered by an OpenAI-compatible chat endpoint (see the module docstring)."""

    @property
    def history_window(self) -> int:
        return self.config.history_len

    def __init__(self, config: RemotePolicyConfig | None = None, **options: Any) -> None:
        if config is None:
            config = RemotePolicyConfig.from_options(options)
        elif options:
            raise TypeError("pass either a RemotePolicyConfig or keyword options, not both")
        self.config = config
        base = config.base_url or os.environ.get(config.base_url_env, "")
        if not base:
            raise ValueError(
                f"remote policy: set policy.options.base_url or the environment "
                f"variable {config.base_url_env}"
            )
        model = config.model or os.environ.get(config.model_env, "")
        if not model:
            raise ValueError(
                f"remote policy: set policy.options.model or the environment "
                f"variable {config.model_env}"
            )
        self.base_url = base.rstrip("/")
        self.model_name = model
        self.url = f"{self.base_url}/chat/completions"
        self._seed = config.seed
        self._lock = threading.Lock()
        self._requests = 0
        self.stats = {"requests": 0, "retries": 0, "invalid": 0}
        """Counters: HTTP requests sent, retries among them, invalid samples returned."""
        self._connect()

    def _connect(self) -> None:
        cfg = self.config
        key = os.environ.get(cfg.api_key_env) if cfg.api_key_env else None
        self._headers = {"Content-Type": "application/json"}
        if key:
            self._headers["Authorization"] = f"Bearer {key}"
        self._client = httpx.Client(
            timeout=httpx.Timeout(cfg.timeout_s),
            limits=httpx.Limits(
                max_connections=cfg.concurrency, max_keepalive_connections=cfg.concurrency
            ),
        )

    def __repr__(self) -> str:
        return f"RemotePolicy(url={self.url!r}, model={self.model_name!r})"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for name in ("_client", "_headers", "_lock"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._connect()

    def close(self) -> None:
        self._client.close()

    # -- HTTP -------------------------------------------------------------------------------------
    def _delay(self, attempt: int, retry_after: str | None) -> float:
        cfg = self.config
        delay = min(cfg.backoff_max_s, cfg.backoff_s * 2**attempt)
        if retry_after:
            try:
                delay = min(cfg.backoff_max_s, max(delay, float(retry_after)))
            except ValueError:
                pass
        return delay

    def complete(self, payload: dict[str, Any]) -> list[Any]:
        """POST one chat-completions request with retries; the answer's ``choices`` list."""
        return self._post(self.url, payload, _choices)

    def post(self, path: str, payload: dict[str, Any]) -> str:
        """POST ``payload`` to ``{base_url}/{path}`` with the same retries; the body text (e.g.
        vLLM's ``load_lora_adapter``, which answers plain text)."""
        return self._post(f"{self.base_url}/{path.lstrip('/')}", payload, lambda r: (r.text, ""))

    def _post(
        self, url: str, payload: dict[str, Any], accept: Callable[[httpx.Response], tuple[Any, str]]
    ) -> Any:
        """Retry loop: ``accept(response)`` of a 2xx answer gives ``(result, "")`` or
        ``(None, error)`` for a malformed one (retried)."""
        cfg = self.config
        error = ""
        for attempt in range(cfg.max_retries + 1):
            retry_after: str | None = None
            with self._lock:
                self.stats["requests"] += 1
                if attempt:
                    self.stats["retries"] += 1
            try:
                response = self._client.post(url, json=payload, headers=self._headers)
            except httpx.TimeoutException:
                error = f"timed out after {cfg.timeout_s} s"
            except httpx.TransportError as exc:
                error = f"connection failed ({type(exc).__name__}: {exc})"
            else:
                status = response.status_code
                if status in RETRY_STATUS:
                    error = f"HTTP {status}: {_excerpt(response.text)}"
                    retry_after = response.headers.get("retry-after")
                elif status >= 400:
                    raise RemoteError(
                        f"{url} answered HTTP {status} (not retried; check "
                        f"base_url, model and the key variable "
                        f"{cfg.api_key_env}): {_excerpt(response.text)}"
                    )
                else:
                    result, error = accept(response)
                    if not error:
                        return result
            if attempt < cfg.max_retries:
                time.sleep(self._delay(attempt, retry_after))
        raise RemoteError(
            f"{url}: giving up after {cfg.max_retries + 1} attempt(s); last error: {error}"
        )

    def payload(
        self, context: Context, n: int, *, greedy: bool, seed: int | None
    ) -> dict[str, Any]:
        """The request body for ``n`` answers to ``context``."""
        cfg = self.config
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": openai_messages(
                context,
                history_len=cfg.history_len,
                max_elements=cfg.max_elements,
                system=cfg.system_prompt,
                image=cfg.send_screenshot,
            ),
            "max_tokens": cfg.max_tokens,
            "temperature": 0.0 if greedy else cfg.temperature,
        }
        if n != 1:
            body["n"] = n
        if cfg.top_p is not None and not greedy:
            body["top_p"] = cfg.top_p
        if cfg.logprobs:
            body["logprobs"] = True
        if seed is not None:
            body["seed"] = seed
        body.update(cfg.extra_body)
        return body

    def _seeds(self, count: int) -> list[int | None]:
        if not self.config.send_seed:
            return [None] * count
        with self._lock:
            first = self._requests
            self._requests += count
        return [(self._seed * 1_000_003 + first + i) % 2**31 for i in range(count)]

    # -- Policy protocol --------------------------------------------------------------------------
    def sample(
        self, contexts: Sequence[Context], n: int, *, greedy: bool = False
    ) -> list[list[SampledAction]]:
        """``n`` samples per context (see the module docstring for requests and failures)."""
        if not contexts:
            return []
        if n < 1:
            raise ValueError("n must be >= 1")
        want = 1 if greedy else n
        got: list[list[SampledAction]] = [[] for _ in contexts]
        per_request = want if (self.config.use_n and not greedy) else 1
        jobs = [(i, per_request) for i in range(len(contexts)) for _ in range(want // per_request)]
        with ThreadPoolExecutor(max_workers=self.config.concurrency) as pool:
            for _ in range(want + 1):  # a first round, then top-ups if choices were missing
                if not jobs:
                    break
                seeds = self._seeds(len(jobs))
                bodies = [
                    self.payload(contexts[i], k, greedy=greedy, seed=s)
                    for (i, k), s in zip(jobs, seeds, strict=True)
                ]
                answers = list(pool.map(self.complete, bodies))
                for (i, _), choices in zip(jobs, answers, strict=True):
                    got[i].extend(to_sample(c) for c in choices[: want - len(got[i])])
                jobs = [(i, 1) for i in range(len(contexts)) for _ in range(want - len(got[i]))]
        out: list[list[SampledAction]] = []
        for row in got:
            row = row * n if greedy else row
            out.append(row)
            with self._lock:
                self.stats["invalid"] += sum(s.action is None for s in row)
        return out

    def act(self, context: Context, *, greedy: bool = True) -> SampledAction:
        """One answer for one context (greedy by default)."""
        return self.sample([context], 1, greedy=greedy)[0][0]

    def decision_log_probs(
        self, contexts: Sequence[Context], samples: Sequence[SampledAction]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        raise RemoteNotTrainableError(
            "a remote policy cannot be trained or score actions (no local weights). Train the "
            "model as policy.kind: hf and serve it with vLLM for sampling (docs/llm.md)."
        )

    def parameters(self) -> list[torch.nn.Parameter]:
        return []

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state:
            raise ValueError("a remote policy has no weights to load")

    def reseed(self, seed: int) -> None:
        """Restart the per-request seeds from ``seed`` (and torch's RNG, per the protocol)."""
        super().reseed(seed)
        with self._lock:
            self._seed = int(seed)
            self._requests = 0

    def save(self, path: Path | str) -> None:
        """Write the config (never the key) to ``path/remote_policy.json`` atomically."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        meta = {"format": FORMAT, "kind": "remote", "config": self.config.to_dict()}
        atomic_write_text(path / SAVE_FILE, json.dumps(meta, indent=1))
        atomic_write_text(
            path / "config.json", json.dumps({"kind": "remote", **self.config.to_dict()}, indent=1)
        )

    @classmethod
    def load(cls, path: Path | str) -> RemotePolicy:
        file = Path(path) / SAVE_FILE
        if not file.exists():
            raise FileNotFoundError(f"no saved remote policy at {file}")
        meta = json.loads(file.read_text())
        if meta.get("format") != FORMAT:
            raise ValueError(f"{file} is not a remote-policy file ({FORMAT})")
        return cls(RemotePolicyConfig.from_options(meta["config"]))


# -- experts ----------------------------------------------------------------------------------------


class RemoteExpert:
    """A model behind an OpenAI-compatible endpoint acting as the expert of a task suite.

    ``expert_action(env)`` has the signature of :meth:`TaskSuite.expert_action`; :meth:`wrap`
    returns a suite whose splits/templates are the scripted suite's and whose expert is this
    one, so ``collect_experts(make_env, RemoteExpert(policy).wrap(suite), tasks)`` collects
    remote-expert trajectories (only verified ones become checkpoints, as for scripted experts).

    Each decision asks for a greedy answer first, then up to ``attempts - 1`` sampled ones
    until one parses; if none does, the expert answers ``done()``, which ends the episode and
    leaves the verdict to the task's verifier (the trajectory is normally dropped). The
    history shown to the model is the actions this expert returned in the current episode of
    that env (an env at step 0 starts a new episode).
    """

    def __init__(self, policy: RemotePolicy, *, attempts: int = 3) -> None:
        if attempts < 1:
            raise ValueError("attempts must be >= 1")
        self.policy = policy
        self.attempts = attempts
        self._history: dict[int, list[Action]] = {}
        self.decisions = 0
        """Actions returned."""
        self.invalid_answers = 0
        """Answers that did not parse (each retried)."""
        self.gave_up = 0
        """Decisions where no answer parsed and ``done()`` was returned."""

    @classmethod
    def from_options(cls, options: dict[str, Any], *, attempts: int = 3) -> RemoteExpert:
        return cls(RemotePolicy(**options), attempts=attempts)

    def expert_action(self, env: GUIEnv) -> Action:
        steps = env.steps_taken
        history = self._history.get(id(env), []) if steps > 0 else []
        history = history[:steps]
        context = Context(env.instruction, env.observe(), tuple(history))
        action: Action | None = None
        for attempt in range(self.attempts):
            answer = self.policy.sample([context], 1, greedy=attempt == 0)[0][0]
            if answer.action is not None:
                action = answer.action
                break
            self.invalid_answers += 1
        if action is None:
            self.gave_up += 1
            action = Action.done()
        self._history[id(env)] = history + [action]
        self.decisions += 1
        return action

    def wrap(self, suite: TaskSuite) -> TaskSuite:
        """``suite`` with this expert in place of its scripted one."""
        return _RemoteExpertSuite(suite, self)


class _RemoteExpertSuite(TaskSuite):
    def __init__(self, suite: TaskSuite, expert: RemoteExpert) -> None:
        self.inner = suite
        self.expert = expert

    def templates(self) -> list[str]:
        return self.inner.templates()

    def split(self, name: str) -> list[TaskSpec]:
        return self.inner.split(name)

    def expert_action(self, env: GUIEnv) -> Action:
        return self.expert.expert_action(env)

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "expert"):
            raise AttributeError(name)
        return getattr(self.inner, name)
