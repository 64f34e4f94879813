"""GRPO rollouts from a vLLM server in its own environment, with the policy's LoRA adapter loaded at each sync.

No vLLM release installs beside ifpo's transformers (docs/vllm.md), so TRL's in-process vLLM path
(``use_vllm``) cannot run here. Instead the rollouts go to vLLM's OpenAI-compatible server, started
apart with ``--enable-lora`` and ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=true``:

- **sync**: every ``vllm_sync_steps`` optimizer steps the policy's current adapter is saved under
  ``vllm_adapter_dir`` and loaded with ``POST /v1/load_lora_adapter`` under a new name (vLLM refuses
  to reload a name; vllm/entrypoints/serve/lora/api_router.py); the previous one is then unloaded.
  Rollouts name the adapter as their ``model``. Staleness (optimizer steps since the weights that
  generated a rollout) and sync time are logged as ``rollout/staleness_steps`` and ``rollout/sync_s``.
- **media**: each prompt goes as chat messages with the same images and video frames the training
  forward sees (``ifpo.train.vision``: the recipe's budgets, frames sampled by ifpo). Images are PNG
  data URLs; a video is its sampled frames as one ``video/jpeg`` data URL (vLLM splits it at commas
  and opens each frame with PIL, so PNG frames pass losslessly) with its ``fps`` and ``frames_indices``
  in ``media_io_kwargs``, so Qwen3-VL's timestamps match (vllm/multimodal/media/video.py,
  ``VideoMediaIO.load_base64``).
- **tokens**: ``return_token_ids`` gives the completion's token ids (TRL scores those, not a
  re-tokenised text) and the prompt ids vLLM rendered; a prompt that differs from the trainer's is
  counted in ``rollout/prompt_mismatch`` and warned about once.
- **restarts**: a request that fails because the server went away (or lost the adapter) waits up to
  ``vllm_reconnect_s`` for ``/v1/models`` to answer, loads the current adapter again if it is missing,
  and retries; a step survives the engine restarting.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

logger = logging.getLogger("ifpo.grpo")

ROLLOUT_BACKENDS = ("transformers", "vllm_server")


class RolloutServerError(RuntimeError):
    """The rollout server could not be used (unreachable past the reconnect wait, refused a request); says why."""


def _png_b64(image: Any) -> str:
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def server_messages(prompt: Sequence[Mapping[str, Any]], image_paths: Sequence[str], video_paths: Sequence[str],
                    *, media_root: str | None, budget: Any, factor: int) -> tuple[list[dict[str, Any]], dict]:
    """OpenAI chat messages for one GRPO prompt row, and the request's ``media_io_kwargs``.

    ``prompt`` is the dataset's conversation with ``{"type": "image"}`` / ``{"type": "video"}``
    placeholders; the k-th placeholder of a kind is the k-th path of that kind, as the processor pairs them.
    """
    from ifpo.train.vision import load_image, load_video, resolve_media
    from PIL import Image

    images, videos = iter(image_paths or []), iter(video_paths or [])
    video_kwargs: dict[str, Any] | None = None
    messages = []
    for message in prompt:
        content = message["content"]
        if isinstance(content, str):
            messages.append({"role": message["role"], "content": content})
            continue
        parts = []
        for part in content:
            if part["type"] == "image":
                image = load_image(resolve_media(next(images), media_root), budget, factor)
                parts.append({"type": "image_url", "image_url": {"url": "data:image/png;base64," + _png_b64(image)}})
            elif part["type"] == "video":
                frames, meta = load_video(resolve_media(next(videos), media_root), budget, factor)
                kwargs = {"fps": float(meta.fps), "frames_indices": [int(i) for i in meta.frames_indices],
                          "total_num_frames": int(meta.total_num_frames)}
                if video_kwargs is not None and video_kwargs != kwargs:
                    # vLLM takes one media_io_kwargs per modality and request.
                    raise RolloutServerError("a prompt with two videos of different frame rates or frame counts "
                                             "cannot be sent to the vLLM server in one request")
                video_kwargs = kwargs
                data = ",".join(_png_b64(Image.fromarray(frame)) for frame in frames)
                parts.append({"type": "video_url", "video_url": {"url": "data:video/jpeg;base64," + data}})
            elif part["type"] == "text":
                parts.append({"type": "text", "text": part["text"]})
            else:
                raise RolloutServerError(f"prompt part of type {part['type']!r} cannot be sent to the vLLM server")
        messages.append({"role": message["role"], "content": parts})
    return messages, ({"video": video_kwargs} if video_kwargs else {})


class VllmServerRollouts:
    """The client of one vLLM server: adapter sync, rollouts with media, recovery after a restart."""

    def __init__(self, base_url: str, adapter_dir: str | Path, *, sync_steps: int = 1, api_key_env: str | None = None,
                 timeout_s: float = 600.0, reconnect_s: float = 600.0, concurrency: int = 8) -> None:
        from ifpo.verifiers.http import api_key

        self.base_url = base_url.rstrip("/")
        self.adapter_dir = Path(adapter_dir)
        self.sync_steps = sync_steps
        self.timeout_s = timeout_s
        self.reconnect_s = reconnect_s
        self.concurrency = concurrency
        self._key = api_key(api_key_env, "vllm_api_key_env")
        self._run = uuid.uuid4().hex[:8]  # adapter names from an earlier run on the same server never collide
        self.adapter: str | None = None  # the adapter rollouts use now (None: the base weights)
        self.adapter_path: Path | None = None
        self.synced_step: int | None = None
        self.recoveries = 0
        # The rollout threads of one batch fail together when the server goes away: one of them recovers, the
        # others then find the adapter loaded (two concurrent loads of one name: the second is refused).
        self._recover_lock = threading.Lock()
        self.mismatch_warned = False
        # A chat template sent with every request (the server's own when None); see trainer_rollouts.
        self.chat_template: str | None = None

    # -- HTTP --------------------------------------------------------------------------------------

    def _post(self, path: str, body: Mapping[str, Any], timeout_s: float | None = None) -> Any:
        from ifpo.verifiers.http import post_json

        return post_json(self.base_url + path, body, key=self._key, timeout_s=timeout_s or self.timeout_s)

    def _post_plain(self, path: str, body: Mapping[str, Any]) -> str:
        """POST for the adapter endpoints, which answer 200 with plain text (not JSON)."""
        import httpx
        from ifpo.verifiers.http import EndpointError

        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        url = self.base_url + path
        try:
            response = httpx.post(url, json=dict(body), headers=headers, timeout=self.timeout_s)
        except httpx.HTTPError as exc:
            raise EndpointError(f"{url}: {type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            raise EndpointError(f"{url}: HTTP {response.status_code}: {response.text[:300]}",
                                retryable=response.status_code >= 500)
        return response.text

    def models(self, timeout_s: float = 10.0) -> list[str]:
        """The model names the server answers to (the base model and every loaded adapter)."""
        import httpx
        from ifpo.verifiers.http import EndpointError

        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        url = self.base_url + "/models"
        try:
            response = httpx.get(url, headers=headers, timeout=timeout_s)
        except httpx.HTTPError as exc:
            raise EndpointError(f"{url}: {type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            raise EndpointError(f"{url}: HTTP {response.status_code}", retryable=response.status_code >= 500)
        try:
            return [m["id"] for m in response.json()["data"]]
        except (ValueError, KeyError, TypeError):
            raise EndpointError(f"{url}: unexpected answer {response.text[:200]!r}") from None

    def wait_ready(self, timeout_s: float | None = None) -> list[str]:
        """Poll ``/v1/models`` until the server answers; :class:`RolloutServerError` after ``timeout_s``."""
        from ifpo.verifiers.http import EndpointError

        deadline = time.monotonic() + (self.reconnect_s if timeout_s is None else timeout_s)
        for attempt in range(1_000_000):
            try:
                return self.models()
            except EndpointError as exc:
                if attempt == 0:
                    logger.warning("waiting for the vLLM server at %s (%s)", self.base_url, exc)
                if time.monotonic() >= deadline:
                    raise RolloutServerError(
                        f"the vLLM server at {self.base_url} did not answer ({exc}); start it as docs/vllm.md "
                        "shows (vllm serve MODEL --enable-lora with VLLM_ALLOW_RUNTIME_LORA_UPDATING=true)") from None
                time.sleep(1.0)

    def base_model(self) -> str:
        return self.wait_ready()[0]

    def _load(self, name: str, path: Path) -> None:
        from ifpo.verifiers.http import EndpointError

        try:
            self._post_plain("/load_lora_adapter", {"lora_name": name, "lora_path": str(path.resolve())})
        except EndpointError as exc:
            hint = ""
            if "404" in str(exc) or "405" in str(exc):
                hint = " (is VLLM_ALLOW_RUNTIME_LORA_UPDATING=true set for the server, and --enable-lora given?)"
            raise RolloutServerError(f"loading adapter {name!r} from {path}: {exc}{hint}") from None

    def sync(self, save: Callable[[Path], None], step: int) -> float:
        """Save the policy's adapter with ``save(folder)`` and load it into the server; returns the seconds taken."""
        from ifpo.verifiers.http import EndpointError

        started = time.perf_counter()
        name = f"ifpo-{self._run}-step{step}"
        path = self.adapter_dir / name
        save(path)
        self.wait_ready()
        self._load(name, path)
        previous, previous_path = self.adapter, self.adapter_path
        self.adapter, self.adapter_path, self.synced_step = name, path, step
        if previous is not None:
            try:
                self._post_plain("/unload_lora_adapter", {"lora_name": previous})
            except EndpointError as exc:  # a restarted server never had it: nothing to free
                logger.info("unloading adapter %s: %s", previous, exc)
            if previous_path is not None:
                shutil.rmtree(previous_path, ignore_errors=True)
        return time.perf_counter() - started

    def _recover(self) -> None:
        """After a failed request: wait for the server, and load the current adapter again if it lost it."""
        with self._recover_lock:
            self.recoveries += 1
            names = self.wait_ready()
            if self.adapter is not None and self.adapter not in names:
                logger.warning("vLLM server at %s came back without adapter %s: loading it again", self.base_url,
                               self.adapter)
                self._load(self.adapter, self.adapter_path)

    def _chat(self, body: dict[str, Any], attempts: int = 3) -> dict[str, Any]:
        from ifpo.verifiers.http import EndpointError

        for attempt in range(attempts):
            try:
                return self._post("/chat/completions", {**body, "model": self.adapter or body["model"]})
            except EndpointError as exc:
                # A 404 is what a restarted server says of an adapter it no longer has.
                lost = "404" in str(exc) and self.adapter is not None
                if attempt + 1 == attempts or not (exc.retryable or lost):
                    raise RolloutServerError(f"rollout request failed: {exc}") from None
                logger.warning("rollout request failed (%s); checking the vLLM server", exc)
                self._recover()
        raise AssertionError("unreachable")

    # -- rollouts ----------------------------------------------------------------------------------

    def generate(self, requests: Sequence[tuple[list[dict[str, Any]], dict, int]], sampling: Mapping[str, Any],
                 seed: int) -> list[tuple[list[list[int]], list[int]]]:
        """For each ``(messages, media_io_kwargs, n)``: ``n`` completions' token ids and the prompt's token ids."""
        base = None if self.adapter else self.base_model()

        greedy = not sampling.get("temperature", 1.0)

        def one(index: int) -> tuple[list[list[int]], list[int]]:
            messages, media_kwargs, wanted = requests[index]
            # vLLM refuses n > 1 with greedy sampling; the n answers would be the same one anyway.
            n = 1 if greedy else wanted
            body = {"model": base, "messages": messages, "n": n, "seed": seed + index, "return_token_ids": True,
                    **sampling}
            if self.chat_template is not None:
                body["chat_template"] = self.chat_template
            if media_kwargs:
                body["media_io_kwargs"] = media_kwargs
            answer = self._chat(body)
            try:
                choices = sorted(answer["choices"], key=lambda c: c.get("index", 0))
                ids = [list(c["token_ids"]) for c in choices]
                prompt_ids = list(answer.get("prompt_token_ids") or [])
            except (KeyError, TypeError):
                raise RolloutServerError(f"unexpected rollout answer: {json.dumps(answer)[:300]}") from None
            if len(ids) != n:
                raise RolloutServerError(f"asked for {n} completions, got {len(ids)}")
            return ids * (wanted // n), prompt_ids

        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(one, range(len(requests))))


# ------------------------------------------------------------------------------------------------
# the GRPO trainer's side (train/grpo_trainer.py calls these)
# ------------------------------------------------------------------------------------------------


def sync_from_trainer(trainer) -> float:
    """Save the trainer's current adapter and load it into the server (the main process does both; every
    process then names the same adapter). Returns the seconds the main process took (0 elsewhere)."""
    client: VllmServerRollouts = trainer.rollouts
    accelerator, step = trainer.accelerator, trainer.state.global_step
    seconds, payload = 0.0, [None, None]
    if accelerator.is_main_process:
        seconds = client.sync(lambda path: accelerator.unwrap_model(trainer.model).save_pretrained(str(path)), step)
        payload = [client.adapter, str(client.adapter_path)]
    if accelerator.num_processes > 1:
        from accelerate.utils import broadcast_object_list

        broadcast_object_list(payload)
        client.adapter, client.adapter_path, client.synced_step = payload[0], Path(payload[1]), step
    return seconds


def trainer_rollouts(trainer, prompt_ids: Sequence[Sequence[int]]) -> tuple[list[list[int]], None]:
    """Completion token ids for the rows of the batch being generated (``trainer._rollout_inputs``), from the
    server, after a sync when one is due. The rows of one prompt go as one request with ``n`` samples."""
    from ifpo.train.vision import clean_messages, patch_factor

    client: VllmServerRollouts = trainer.rollouts
    inputs = trainer._rollout_inputs
    if len(inputs) != len(prompt_ids):
        raise RuntimeError(f"{len(prompt_ids)} prompts but {len(inputs)} rollout rows")
    mode = "train" if trainer.model.training else "eval"
    metrics, step = trainer._metrics[mode], trainer.state.global_step
    if client.synced_step is None or (mode == "train" and step - client.synced_step >= client.sync_steps):
        metrics["rollout/sync_s"].append(sync_from_trainer(trainer))
    metrics["rollout/staleness_steps"].append(float(step - client.synced_step))

    groups: dict[str, list[int]] = {}
    for i, x in enumerate(inputs):
        key = json.dumps([x["prompt"], x.get("image_paths"), x.get("video_paths")], sort_keys=True, default=str)
        groups.setdefault(key, []).append(i)
    factor = patch_factor(trainer.processing_class)
    requests = []
    for rows in groups.values():
        x = inputs[rows[0]]
        messages, media_kwargs = server_messages(clean_messages(x["prompt"]), x.get("image_paths") or [],
                                                 x.get("video_paths") or [], media_root=trainer.media_root,
                                                 budget=trainer.budget, factor=factor)
        requests.append((messages, media_kwargs, len(rows)))
    sampling: dict[str, Any] = {
        "max_tokens": trainer.max_completion_length, "temperature": trainer.temperature, "top_p": trainer.top_p,
        # as in transformers generate (grpo_trainer.py): a sampled media pad token would match no media features
        "logit_bias": {str(t): -100 for t in trainer._pad_ids.values()},
    }
    if trainer.top_k:
        sampling["top_k"] = trainer.top_k
    if trainer.min_p:
        sampling["min_p"] = trainer.min_p
    if trainer.repetition_penalty != 1.0:
        sampling["repetition_penalty"] = trainer.repetition_penalty
    seed = (trainer.args.seed * 1_000_003 + step * 1009 + trainer.accelerator.process_index * 100_003) % 2**31
    started = time.perf_counter()
    answers = client.generate(requests, sampling, seed)
    firsts = [rows[0] for rows in groups.values()]
    _match_video_prompts(trainer, client, requests, answers, [prompt_ids[i] for i in firsts],
                         [bool(inputs[i].get("video_paths")) for i in firsts], sampling, seed)
    metrics["rollout/generate_s"].append(time.perf_counter() - started)

    completion_ids: list[list[int]] = [[] for _ in inputs]
    mismatched = 0
    for rows, (ids, served_prompt) in zip(groups.values(), answers):
        for row, completion in zip(rows, ids):
            completion_ids[row] = completion
        ours = [int(t) for t in prompt_ids[rows[0]]]
        if served_prompt and served_prompt != ours:
            mismatched += 1
            if not client.mismatch_warned:
                client.mismatch_warned = True
                at = next((i for i, (a, b) in enumerate(zip(ours, served_prompt)) if a != b), min(len(ours),
                                                                                                   len(served_prompt)))
                logger.warning("item %s: the vLLM server rendered the prompt differently from the trainer (%d vs %d "
                               "tokens, first difference at %d): its rollouts are slightly off-policy",
                               inputs[rows[0]].get("item_id"), len(served_prompt), len(ours), at)
    metrics["rollout/prompt_mismatch"].append(mismatched / len(groups))
    return completion_ids, None


VIDEO_SLOT = "<|vision_start|><|video_pad|><|vision_end|>"


def _match_video_prompts(trainer, client: VllmServerRollouts, requests, answers, prompt_ids, has_video, sampling,
                         seed) -> None:
    """Make the server render video prompts as the trainer does, once, by measurement.

    vLLM's Qwen3-VL expands the template's ``<|video_pad|>`` into the per-frame timestamps and pads and keeps
    the template's own ``<|vision_start|>``/``<|vision_end|>`` around them (vllm/model_executor/models/
    qwen3_vl.py); transformers' processor replaces that outer pair in some releases and keeps it in others
    (train/tiny_model.py). Where a video prompt came back different, the same requests are sent once more
    with the template's video slot reduced to ``<|video_pad|>`` (``--trust-request-chat-template``); if that
    renders the trainer's tokens, the reduced template is kept for every later request.
    """
    template = getattr(trainer.processing_class, "chat_template", None)
    if client.chat_template is not None or not isinstance(template, str) or VIDEO_SLOT not in template:
        return
    wrong = [i for i, ((_, served), ours, video) in enumerate(zip(answers, prompt_ids, has_video))
             if video and served and served != [int(t) for t in ours]]
    if not wrong:
        return
    client.chat_template = template.replace(VIDEO_SLOT, "<|video_pad|>")
    try:
        retried = client.generate([requests[i] for i in wrong], sampling, seed + 7919)
    except RolloutServerError as exc:
        logger.warning("retrying video prompts with the reduced chat template failed (%s); keeping the server's", exc)
        client.chat_template = None
        return
    if all(served == [int(t) for t in prompt_ids[i]] for i, (_, served) in zip(wrong, retried)):
        logger.info("vLLM server: video prompts rendered with the reduced template now match the trainer's")
        for i, answer in zip(wrong, retried):
            answers[i] = answer
    else:
        client.chat_template = None
