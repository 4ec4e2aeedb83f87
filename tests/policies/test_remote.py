"""The ``remote`` policy against a local OpenAI-compatible chat server (loopback only).

The server is ``http.server`` in a thread; each test scripts its answers. Imports httpx
unconditionally: without the ``llm`` extra these tests fail, they do not skip.
"""

from __future__ import annotations

import json
import math
import pickle
import re
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from adaroll.actions import Action, action_format_help
from adaroll.config import PolicyConfig
from adaroll.envs.base import Observation, UIElement
from adaroll.experts import collect_experts
from adaroll.policies import load_policy, make_policy
from adaroll.policies.base import Context
from adaroll.policies.remote import (
    RemoteError,
    RemoteExpert,
    RemoteNotTrainableError,
    RemotePolicy,
)
from tests.fakes import LineEnv, LineSuite

KEY = "sk-test-0123456789abcdef"
CTX = Context(
    "Tap OK",
    Observation((UIElement(1, "button", "OK", (0.1, 0.1, 0.3, 0.2)),), (100, 100)),
    (Action.press("back"),),
)


def choice(text: str | None, logprobs: list[float] | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {
        "index": 0,
        "finish_reason": "stop",
        "message": {"role": "assistant", "content": text},
    }
    if logprobs is not None:
        c["logprobs"] = {"content": [{"token": "t", "logprob": v} for v in logprobs]}
    return c


class FakeOpenAI:
    """A scripted ``/v1/chat/completions`` server. ``plan`` holds one behaviour per request
    (then ``default``): ``("status", code)``, ``("status", code, retry_after)``,
    ``("sleep", seconds)``, ``("raw", text)``, ``("json", obj)``, or a callable body -> obj."""

    def __init__(self) -> None:
        self.plan: list[Any] = []
        self.default: Any = lambda body: {
            "choices": [choice("tap(0.2, 0.15)", [-0.5, -0.25])] * body.get("n", 1)
        }
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lora: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw)
                if self.path in ("/v1/load_lora_adapter", "/v1/unload_lora_adapter"):
                    with outer.lock:
                        outer.lora.append((self.path.rsplit("/", 1)[1], body))
                    return self._send(200, b"Success: LoRA adapter updated.")
                with outer.lock:
                    outer.requests.append(body)
                    outer.headers.append(dict(self.headers))
                    what = outer.plan.pop(0) if outer.plan else outer.default
                if self.path != "/v1/chat/completions":
                    return self._send(404, b'{"error": "not found"}')
                if callable(what):
                    return self._send(200, json.dumps(what(body)).encode())
                kind = what[0]
                if kind == "status":
                    extra = {"Retry-After": str(what[2])} if len(what) > 2 else {}
                    return self._send(what[1], b'{"error": {"message": "busy"}}', extra)
                if kind == "sleep":
                    time.sleep(what[1])
                    return self._send(200, json.dumps(outer.default(body)).encode())
                if kind == "raw":
                    return self._send(200, what[1].encode())
                return self._send(200, json.dumps(what[1]).encode())

            def _send(self, code: int, data: bytes, headers: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # client timed out and left
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    srv = FakeOpenAI()
    yield srv
    srv.close()


@pytest.fixture
def make(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Callable[..., RemotePolicy]:
    monkeypatch.setenv("ADAROLL_TEST_KEY", KEY)

    def build(**options: Any) -> RemotePolicy:
        opts: dict[str, Any] = {
            "base_url": server.url,
            "model": "gui-model",
            "api_key_env": "ADAROLL_TEST_KEY",
            "backoff_s": 0.01,
            "backoff_max_s": 0.05,
            "timeout_s": 5.0,
        }
        opts.update(options)
        return RemotePolicy(**opts)

    return build


# -- sampling -------------------------------------------------------------------------------------


def test_samples_parse_choices_and_sum_logprobs(
    server: FakeOpenAI, make: Callable[..., RemotePolicy]
) -> None:
    server.plan = [
        (
            "json",
            {
                "choices": [
                    choice("tap(0.5, 0.5)", [-0.25, -0.5]),
                    choice(" swipe(up) ", [-1.0]),
                    choice("I would tap OK", [-2.0]),
                ]
            },
        )
    ]
    p = make(max_tokens=32, temperature=0.8)
    (row,) = p.sample([CTX], 3)
    assert [s.action for s in row] == [Action.tap(0.5, 0.5), Action.swipe("up"), None]
    assert [s.log_prob for s in row] == [-0.75, -1.0, -2.0]
    assert row[2].raw == "I would tap OK" and p.stats["invalid"] == 1
    (body,) = server.requests
    assert body["model"] == "gui-model" and body["n"] == 3 and body["logprobs"] is True
    assert body["max_tokens"] == 32 and body["temperature"] == 0.8 and isinstance(body["seed"], int)
    system, user = body["messages"]
    assert action_format_help() in system["content"]
    assert "Task: Tap OK" in user["content"] and "1. key(back)" in user["content"]
    assert '[1] button "OK"' in user["content"]
    assert server.headers[0]["Authorization"] == f"Bearer {KEY}"


def test_many_contexts_run_concurrently_and_keep_order(
    server: FakeOpenAI, make: Callable[..., RemotePolicy]
) -> None:
    # every request waits until all 8 are in the server at once: requests sent one after
    # another would break the barrier (its timeout) and fail the test
    together = threading.Barrier(8, timeout=60)

    def echo(body: dict[str, Any]) -> dict[str, Any]:
        together.wait()
        task = re.search(r"Task: (\w+)", body["messages"][1]["content"]).group(1)  # type: ignore[union-attr]
        return {"choices": [choice(f'type("{task}")')] * body.get("n", 1)}

    server.default = echo
    p = make(concurrency=8, logprobs=False)
    contexts = [Context(f"t{i}", CTX.observation) for i in range(8)]
    rows = p.sample(contexts, 2)
    assert not together.broken
    assert [[s.action.text for s in r] for r in rows] == [[f"t{i}"] * 2 for i in range(8)]  # type: ignore[union-attr]
    assert all(math.isnan(s.log_prob) for r in rows for s in r)  # no logprobs -> NaN
    assert "logprobs" not in server.requests[0]


def test_n_separate_requests_and_top_up_when_server_ignores_n(
    server: FakeOpenAI, make: Callable[..., RemotePolicy]
) -> None:
    server.default = lambda body: {"choices": [choice("wait()")]}  # always one choice
    p = make(use_n=False)
    (row,) = p.sample([CTX], 3)
    assert len(row) == 3 and len(server.requests) == 3 and "n" not in server.requests[0]
    server.requests.clear()
    (row,) = make(use_n=True).sample([CTX], 3)
    assert len(row) == 3 and [r.get("n") for r in server.requests] == [3, None, None]


def test_greedy_sends_temperature_zero_once(
    server: FakeOpenAI, make: Callable[..., RemotePolicy]
) -> None:
    rows = make(top_p=0.9).sample([CTX, CTX], 4, greedy=True)
    assert [len(r) for r in rows] == [4, 4] and len(server.requests) == 2
    assert all(
        r["temperature"] == 0.0 and "n" not in r and "top_p" not in r for r in server.requests
    )


def test_reseed_repeats_request_seeds(
    server: FakeOpenAI, make: Callable[..., RemotePolicy]
) -> None:
    p = make()
    p.reseed(5)
    p.sample([CTX, CTX], 2)
    p.reseed(5)
    p.sample([CTX, CTX], 2)
    seeds = [r["seed"] for r in server.requests]  # in arrival order: the requests are concurrent
    assert sorted(seeds[:2]) == sorted(seeds[2:]) and seeds[0] != seeds[1]
    server.requests.clear()
    make(send_seed=False).sample([CTX], 1)
    assert "seed" not in server.requests[0]


# -- failures -------------------------------------------------------------------------------------


def test_retries_after_500_and_429_then_succeeds(
    server: FakeOpenAI, make: Callable[..., RemotePolicy]
) -> None:
    server.plan = [("status", 500), ("status", 429, 0), ("status", 503)]
    p = make(max_retries=3)
    (row,) = p.sample([CTX], 2)
    assert [s.action for s in row] == [Action.tap(0.2, 0.15)] * 2
    assert row[0].log_prob == -0.75
    assert len(server.requests) == 4 and p.stats["retries"] == 3


def test_gives_up_with_a_clear_error_and_no_key(
    server: FakeOpenAI, make: Callable[..., RemotePolicy]
) -> None:
    server.default = ("status", 503)
    with pytest.raises(
        RemoteError, match=r"giving up after 3 attempt\(s\); last error: HTTP 503"
    ) as err:
        make(max_retries=2).sample([CTX], 1)
    assert KEY not in str(err.value) and len(server.requests) == 3


def test_client_errors_are_not_retried(
    server: FakeOpenAI, make: Callable[..., RemotePolicy]
) -> None:
    server.plan = [("status", 401)]
    with pytest.raises(RemoteError, match="HTTP 401 \\(not retried.*ADAROLL_TEST_KEY") as err:
        make(max_retries=3).sample([CTX], 1)
    assert KEY not in str(err.value) and len(server.requests) == 1


def test_timeout_is_retried_then_fails_cleanly(
    server: FakeOpenAI, make: Callable[..., RemotePolicy]
) -> None:
    server.plan = [("sleep", 1.0)]
    (row,) = make(timeout_s=0.3, max_retries=1).sample([CTX], 1)
    assert row[0].action == Action.tap(0.2, 0.15)
    server.plan = [("sleep", 5.0), ("sleep", 5.0)]
    began = time.perf_counter()
    with pytest.raises(RemoteError, match="timed out after 0.3 s"):
        make(timeout_s=0.3, max_retries=1).sample([CTX], 1)
    assert time.perf_counter() - began < 5.0  # gave up on its timeouts, never waited 10 s


def test_malformed_responses(server: FakeOpenAI, make: Callable[..., RemotePolicy]) -> None:
    # non-JSON and choice-less bodies are retried, then reported
    server.plan = [("raw", "<html>bad gateway</html>"), ("json", {"object": "chat.completion"})]
    (row,) = make(max_retries=2).sample([CTX], 1)
    assert row[0].valid and len(server.requests) == 3
    server.plan = [("raw", "<html>oops</html>")] * 2
    with pytest.raises(RemoteError, match="malformed response: not JSON: '<html>oops</html>'"):
        make(max_retries=1).sample([CTX], 1)
    server.plan = [("json", {"error": {"message": "model overloaded"}})] * 2
    with pytest.raises(RemoteError, match="no non-empty 'choices' list.*model overloaded"):
        make(max_retries=1).sample([CTX], 1)
    # choices without usable text are invalid samples (reward 0), not errors
    server.plan = [("json", {"choices": [choice(None), "junk", {"message": {}}, choice("done()")]})]
    (row,) = make().sample([CTX], 4)
    assert [s.action for s in row] == [None, None, None, Action.done()]
    assert all(math.isnan(s.log_prob) for s in row)


# -- protocol, persistence, secrets ---------------------------------------------------------------


def test_not_trainable_and_registered(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("ADAROLL_REMOTE_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    p = make_policy(PolicyConfig(kind="remote", history=2, options={"backoff_s": 0.0}), seed=1)
    assert isinstance(p, RemotePolicy) and p.model_name == "env-model"
    assert p.parameters() == [] and p.state_dict() == {}
    with pytest.raises(RemoteNotTrainableError, match="cannot be trained"):
        p.decision_log_probs([CTX], p.sample([CTX], 1)[0])
    assert server.requests[0]["model"] == "env-model"
    assert KEY not in repr(p)
    p.save(tmp_path / "pol")
    for file in (tmp_path / "pol").iterdir():
        assert KEY not in file.read_text()
    q = load_policy(PolicyConfig(kind="remote"), tmp_path / "pol")
    assert isinstance(q, RemotePolicy) and q.config == p.config
    blob = pickle.dumps(p)
    assert KEY.encode() not in blob
    r = pickle.loads(blob)  # a Ray worker re-reads the key from its own environment
    r.sample([CTX], 1)
    assert server.headers[-1]["Authorization"] == f"Bearer {KEY}"


def test_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="OPENAI_BASE_URL"):
        RemotePolicy(model="m")
    with pytest.raises(ValueError, match="never a config option"):
        RemotePolicy(base_url="http://127.0.0.1:9/v1", model="m", api_key="x")
    with pytest.raises(ValueError, match="must not carry credentials"):
        RemotePolicy(base_url="http://127.0.0.1:9/v1", model="m", extra_body={"api_key": "x"})
    with pytest.raises(ValueError, match="unknown remote policy option"):
        RemotePolicy(base_url="http://127.0.0.1:9/v1", model="m", bogus=1)


def test_no_key_variable_sends_no_authorization(
    server: FakeOpenAI, make: Callable[..., RemotePolicy], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ADAROLL_TEST_KEY")
    make().sample([CTX], 1)
    assert "Authorization" not in server.headers[0]


# -- the remote expert ----------------------------------------------------------------------------


def test_remote_expert_collects_verified_trajectories(
    server: FakeOpenAI, make: Callable[..., RemotePolicy]
) -> None:
    """A model that reads the element list and taps "go" solves LineEnv tasks; one junk answer
    is retried by sampling."""

    def solver(body: dict[str, Any]) -> dict[str, Any]:
        text = body["messages"][1]["content"]
        m = re.search(r'"go" \(([\d.]+), ([\d.]+), ([\d.]+), ([\d.]+)\)', text)
        assert m is not None
        x0, y0, x1, y1 = (float(v) for v in m.groups())
        return {"choices": [choice(f"tap({(x0 + x1) / 2:.3f}, {(y0 + y1) / 2:.3f})")]}

    server.default = solver
    server.plan = [("json", {"choices": [choice("hmm")]})]
    expert = RemoteExpert(make(), attempts=2)
    suite = expert.wrap(LineSuite())
    tasks = suite.split("train")[:2]
    collection = collect_experts(lambda: LineEnv(length=3), suite, tasks, progress=False)
    assert collection.verified_rate == 1.0 and expert.invalid_answers == 1 and expert.gave_up == 0
    assert [len(r.actions) for r in collection.runs] == [3, 3]
    first, retry = server.requests[0], server.requests[1]
    assert first["temperature"] == 0.0 and retry["temperature"] == 1.0
    # the history shown to the model is this episode's actions
    assert "(none)" in server.requests[0]["messages"][1]["content"]
    assert "1. tap(" in server.requests[2]["messages"][1]["content"]
    assert "(none)" in server.requests[4]["messages"][1]["content"]  # second task starts afresh


def test_remote_expert_gives_up_with_done(
    server: FakeOpenAI, make: Callable[..., RemotePolicy]
) -> None:
    server.default = lambda body: {"choices": [choice("no idea")]}
    expert = RemoteExpert(make(), attempts=2)
    env = LineEnv()
    env.reset(options={"task": LineSuite().split("train")[0]})
    assert expert.expert_action(env) == Action.done() and expert.gave_up == 1


# -- vLLM serving the policy being trained ---------------------------------------------------------


def test_hf_policy_samples_through_a_server_and_syncs_its_adapter(
    server: FakeOpenAI, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """``hf`` with a ``sampler``: texts come from the server, log-probs from the local model,
    and the LoRA adapter is (re)loaded into the server whenever the weights changed."""
    import torch

    from adaroll.policies.hf import HFPolicy

    threads = torch.get_num_threads()
    request.addfinalizer(lambda: torch.set_num_threads(threads))
    torch.set_num_threads(1)  # tiny matrices: one thread is faster
    server.default = lambda body: {"choices": [choice("tap(0.2, 0.15)"), choice("oops")]}
    p = HFPolicy(
        tiny=True,
        seed=0,
        max_new_tokens=8,
        temperature=0.9,
        sync_dir=str(tmp_path),
        sampler={
            "base_url": server.url,
            "model": "base-model",
            "api_key_env": None,
            "backoff_s": 0.0,
        },
    )
    (row,) = p.sample([CTX], 2)
    assert [s.action for s in row] == [Action.tap(0.2, 0.15), None]
    ((op, body),) = server.lora
    assert op == "load_lora_adapter" and Path(body["lora_path"], "adapter_config.json").exists()
    chat = server.requests[-1]
    assert chat["model"] == body["lora_name"] and chat["n"] == 2 and chat["temperature"] == 0.9
    assert chat["max_tokens"] == 8 and "logprobs" not in chat
    logp, mask = p.decision_log_probs([CTX, CTX], row)
    assert [s.log_prob for s in row] == pytest.approx((logp * mask).sum(-1).tolist(), abs=1e-5)
    assert row[0].token_ids == tuple(p.tokenize("tap(0.2, 0.15)") + [p.stop_ids[0]])
    p.sample([CTX], 2)
    assert len(server.lora) == 1  # weights unchanged: no new sync
    optimizer = torch.optim.SGD(p.parameters(), lr=0.1)
    (-p.log_prob([CTX], [row[0]]).sum()).backward()
    optimizer.step()
    p.sample([CTX], 1, greedy=True)
    assert [op for op, _ in server.lora] == [
        "load_lora_adapter",
        "load_lora_adapter",
        "unload_lora_adapter",
    ]
    new, old = server.lora[1][1]["lora_name"], server.lora[2][1]["lora_name"]
    assert server.requests[-1]["model"] == new and old == body["lora_name"] and new != old
    assert server.requests[-1]["temperature"] == 0.0
    assert not Path(body["lora_path"]).exists()  # the stale adapter folder is removed
    with pytest.raises(ValueError, match="needs lora: true"):
        HFPolicy(tiny=True, lora=False, sampler={"base_url": server.url, "model": "m"})
