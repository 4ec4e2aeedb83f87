"""verl's agent loops, run on CPU without verl's trainer: what stands in for the parts of verl that
need GPUs (docs/integrations.md, "verl on CPU").

* :class:`LocalServer` - verl's ``AsyncLLMServerManager`` as an agent loop calls it
  (``generate(request_id, prompt_ids=..., sampling_params=...)`` -> ``TokenOutput``), backed
  by a Hugging Face model in this process instead of vLLM/SGLang servers;
* :class:`AgentLoopRunner` - verl's ``AgentLoopWorker``: each row's loop instantiated from
  verl's registry by ``hydra.utils.instantiate`` exactly as the worker does, ``n`` samples per
  row run as concurrent coroutines;
* :func:`sampler_batch` - the non-tensor part of verl's batch (``uid`` per row, the loops'
  ``extra_fields``), what ``AdaRollCurriculumSampler.update`` reads.

The loops themselves (:mod:`adaroll.integrations.verl`), their registry, config wrappers, token
outputs and ``DataProto`` are verl's own classes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import hydra
import numpy as np
import torch
from omegaconf import DictConfig
from verl.experimental.agent_loop.agent_loop import (
    AgentLoopOutput,
    DictConfigWrap,
    _agent_loop_registry,
)
from verl.protocol import DataProto
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.workers.rollout.replica import TokenOutput


@dataclass
class _Request:
    prompt_ids: list[int]
    sampling_params: dict[str, Any]
    reply: asyncio.Future[TokenOutput]


class LocalServer:
    """An LLM server for verl's agent loops: a causal LM sampling in this process.

    Requests wait until every running loop has asked (or finished) and are then generated as one
    batch, in the order of their prompts: like a real server it batches, and unlike one the
    samples of a step do not depend on which env step or restore happened to finish first (so a
    run is the same on every try, which its test needs)."""

    def __init__(self, model: Any, tokenizer: Any, *, max_new_tokens: int = 16) -> None:
        self.model, self.tokenizer, self.max_new_tokens = model, tokenizer, max_new_tokens
        self._pending: list[_Request] = []
        self._running = 0

    async def serve(self, loops: Sequence[Awaitable[AgentLoopOutput]]) -> list[AgentLoopOutput]:
        """Run ``loops`` concurrently against this server; their outputs, in order."""
        self._running = len(loops)

        async def tracked(loop: Awaitable[AgentLoopOutput]) -> AgentLoopOutput:
            try:
                return await loop
            finally:
                self._running -= 1
                self._generate_when_all_wait()

        return list(await asyncio.gather(*(tracked(loop) for loop in loops)))

    async def generate(
        self,
        request_id: str,
        *,
        prompt_ids: list[int],
        sampling_params: dict[str, Any],
        image_data: list[Any] | None = None,
        video_data: list[Any] | None = None,
    ) -> TokenOutput:
        """verl's signature; one response of at most ``max_new_tokens`` tokens, EOS included."""
        reply: asyncio.Future[TokenOutput] = asyncio.get_running_loop().create_future()
        self._pending.append(_Request(list(prompt_ids), dict(sampling_params), reply))
        self._generate_when_all_wait()
        return await reply

    def _generate_when_all_wait(self) -> None:
        if not self._pending or len(self._pending) < self._running:
            return
        batch = sorted(self._pending, key=lambda r: r.prompt_ids)
        self._pending = []
        for request, output in zip(batch, self._sample(batch), strict=True):
            request.reply.set_result(output)

    @torch.no_grad()
    def _sample(self, batch: Sequence[_Request]) -> list[TokenOutput]:
        pad, eos = self.tokenizer.pad_token_id, self.tokenizer.eos_token_id
        width = max(len(r.prompt_ids) for r in batch)
        ids = [[pad] * (width - len(r.prompt_ids)) + r.prompt_ids for r in batch]
        mask = [[0] * (width - len(r.prompt_ids)) + [1] * len(r.prompt_ids) for r in batch]
        temperature = float(batch[0].sampling_params.get("temperature", 1.0))
        self.model.eval()
        out = self.model.generate(
            input_ids=torch.tensor(ids),
            attention_mask=torch.tensor(mask),
            do_sample=True,
            temperature=temperature,
            top_k=0,  # the plain tempered distribution, whose log-probs the update recomputes
            top_p=1.0,
            max_new_tokens=self.max_new_tokens,
            output_scores=True,
            return_dict_in_generate=True,
            pad_token_id=pad,
            eos_token_id=eos,
        )
        self.model.train()
        tokens = out.sequences[:, width:]
        log_probs = torch.stack(out.scores, dim=1).log_softmax(-1)
        log_probs = log_probs.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
        outputs = []
        for row, row_log_probs in zip(tokens.tolist(), log_probs.tolist(), strict=True):
            length = row.index(eos) + 1 if eos in row else len(row)
            outputs.append(TokenOutput(token_ids=row[:length], log_probs=row_log_probs[:length]))
        return outputs


class AgentLoopRunner:
    """verl's ``AgentLoopWorker`` for one process: the loops of verl's registry, ``n`` per row."""

    def __init__(
        self, trainer_config: DictConfig, data_config: DictConfig, server: LocalServer
    ) -> None:
        self.trainer_config, self.data_config, self.server = trainer_config, data_config, server

    def run(
        self, rows: Sequence[dict[str, Any]], n: int, sampling_params: dict[str, Any]
    ) -> list[list[AgentLoopOutput]]:
        """The ``n`` samples of every row (one list per row), all rows at once."""

        async def everything() -> list[AgentLoopOutput]:
            # built inside the running event loop: verl's loops take it at construction
            loops = [
                self._loop(row["agent_name"]).run(sampling_params, **row)
                for row in rows
                for _ in range(n)
            ]
            return await self.server.serve(loops)

        # an event loop of its own, in a thread of its own: the caller may already run one
        with ThreadPoolExecutor(1) as thread:
            outputs = thread.submit(asyncio.run, everything()).result()
        groups = [outputs[i : i + n] for i in range(0, len(outputs), n)]
        # the samples of a group in a fixed order (which coroutine got which sample of a group
        # depends on timing; the update should not)
        return [sorted(g, key=lambda o: (o.response_ids, o.reward_score)) for g in groups]

    def _loop(self, agent_name: str) -> Any:
        return hydra.utils.instantiate(
            config=_agent_loop_registry[agent_name],
            trainer_config=DictConfigWrap(self.trainer_config),
            server_manager=self.server,
            tokenizer=self.server.tokenizer,
            processor=None,
            dataset_cls=RLHFDataset,
            data_config=DictConfigWrap(self.data_config),
        )


def sampler_batch(groups: Sequence[Sequence[AgentLoopOutput]]) -> DataProto:
    """verl's batch as the sampler's ``update`` reads it: the loops' ``extra_fields`` and one
    ``uid`` per row (verl gives each row a uuid; a row's number does here)."""
    outputs = [o for group in groups for o in group]
    fields = {
        key: np.array([o.extra_fields[key] for o in outputs], dtype=object)
        for key in outputs[0].extra_fields
    }
    fields["uid"] = np.array(
        [f"row-{r}" for r, group in enumerate(groups) for _ in group], dtype=object
    )
    return DataProto(non_tensor_batch=fields)
