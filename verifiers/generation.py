"""Response generation for builders and evaluation: item -> chat messages -> text.

Two backends, one config:

- ``openai``: chat completions on any OpenAI-compatible server (vLLM, SGLang, hosted APIs); images
  and uniformly sampled video frames go as ``image_url`` data URLs;
- ``transformers``: an in-process Qwen3-VL (a hub id or local path; the tiny model in tests).
  Videos are decoded with PyAV through ``transformers.video_utils.load_video`` and passed as
  frames plus their metadata (the processor cannot open an mp4 path without torchcodec; see
  ``train/tiny_model.py`` for the measured details).

The pair builders (policy / teacher answers) and the checkpoint evaluation both generate through
here, so a prompt is rendered the same way wherever it is sent.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BACKENDS = ("openai", "transformers")


@dataclass
class GenerationConfig:
    """How to generate answers; YAML keys are exactly these fields."""

    backend: str = field(default="transformers", metadata={"help": f"one of {BACKENDS}"})
    model: str = field(default="", metadata={"help": "local path or hub id (transformers), or the served model name"})
    base_url: str = field(default="http://127.0.0.1:8000/v1", metadata={"help": "OpenAI-compatible base URL"})
    api_key_env: str | None = field(default=None, metadata={"help": "NAME of the env variable with the API key"})
    max_new_tokens: int = field(default=256, metadata={"help": "answer budget"})
    temperature: float = field(default=0.0, metadata={"help": "0 = greedy (VCIFBench evaluated at 0.1)"})
    top_p: float = field(default=1.0, metadata={"help": "nucleus sampling when temperature > 0"})
    timeout_s: float = field(default=120.0, metadata={"help": "HTTP timeout per request"})
    max_retries: int = field(default=2, metadata={"help": "HTTP retries with exponential backoff"})
    concurrency: int = field(default=8, metadata={"help": "HTTP requests in flight"})
    batch_size: int = field(default=8, metadata={"help": "conversations per generate call (transformers; left-padded)"})
    media: dict = field(
        default_factory=dict,
        metadata={"help": "image/video budgets (verifiers.media.MediaBudget keys: video_fps, video_max_frames, "
                          "image_max_pixels, ...); give the training recipe's values so evaluation sees what training saw"},
    )
    device: str = field(default="cpu", metadata={"help": "transformers backend device (cpu, cuda, cuda:1)"})
    seed: int = field(default=0, metadata={"help": "sampling seed (transformers backend)"})

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"generation backend {self.backend!r} is not one of {list(BACKENDS)}")
        if not self.model:
            raise ValueError("generation config: 'model' is required")
        for name in ("max_new_tokens", "concurrency", "batch_size", "timeout_s"):
            if getattr(self, name) <= 0:
                raise ValueError(f"generation config: {name} must be > 0, got {getattr(self, name)}")
        from ifpo.verifiers.judge import MAX_RETRIES

        if not 0 <= self.max_retries <= MAX_RETRIES:
            raise ValueError(f"generation config: max_retries must be in 0..{MAX_RETRIES}, got {self.max_retries}")
        if self.temperature < 0:
            raise ValueError(f"generation config: temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"generation config: top_p must be in (0, 1], got {self.top_p}")
        from ifpo.verifiers.config import seed_problem

        if seed_problem(self.seed):
            raise ValueError(f"generation config: seed: {seed_problem(self.seed)}")
        if self.backend == "openai":
            from ifpo.verifiers.http import base_url_problem

            problem = base_url_problem(self.base_url)
            if problem:
                raise ValueError(f"generation config: base_url: {problem}")
        if self.api_key_env is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.api_key_env):
            # Never echoed: a value that is no variable name is most likely the key itself.
            raise ValueError("generation config: api_key_env must be the NAME of an environment variable "
                             "(e.g. OPENAI_API_KEY), not the key itself")
        _ = self.budget  # validates the media keys now rather than at the first video

    @property
    def budget(self):
        from ifpo.verifiers.config import from_mapping
        from ifpo.verifiers.media import MediaBudget

        return from_mapping(MediaBudget, self.media, "generation config: media")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "generation config") -> GenerationConfig:
        from ifpo.verifiers.config import from_mapping

        return from_mapping(cls, data, source)


def item_messages(
    item: Mapping[str, Any], *, instruction: str | None = None, system: str | None = ..., with_media: bool = True
) -> list[dict[str, Any]]:
    """Chat messages for an item: optional system turn, then the user turn with media placeholders.

    Media parts carry the relative path under ``"path"``; backends resolve it against the dataset
    root. ``instruction`` / ``system`` override the item's (``system=None`` drops the system turn).
    """
    system_text = item.get("system") if system is ... else system
    media = item.get("media") or {}
    content: list[dict[str, Any]] = []
    if with_media:
        content += [{"type": "video", "path": p} for p in media.get("videos", []) or []]
        content += [{"type": "image", "path": p} for p in media.get("images", []) or []]
    content.append({"type": "text", "text": instruction if instruction is not None else item["instruction"]})
    messages: list[dict[str, Any]] = []
    if system_text:
        messages.append({"role": "system", "content": [{"type": "text", "text": system_text}]})
    messages.append({"role": "user", "content": content})
    return messages


class Generator:
    """Base: ``generate(list of messages) -> list of texts`` (one per conversation, same order)."""

    def __init__(self, config: GenerationConfig, media_root: str | Path | None = None) -> None:
        self.config = config
        self.media_root = Path(media_root) if media_root is not None else Path(".")

    def generate(self, conversations: Sequence[list[dict[str, Any]]], progress: bool = False) -> list[str]:
        raise NotImplementedError

    def sample(self, messages: list[dict[str, Any]], k: int, *, temperature: float, top_p: float,
               seed: int) -> list[str]:
        """``k`` sampled answers to one conversation, reproducible for the same ``seed`` (on-policy pairs).

        The sampling settings here override the config's, so one loaded model serves both greedy
        answers (``generate``) and sampling.
        """
        raise NotImplementedError

    def close(self) -> None:
        pass


class GenerationError(RuntimeError):
    """An answer could not be generated (endpoint failure after retries, unusable media); says why."""


class OpenAIGenerator(Generator):
    def __init__(self, config: GenerationConfig, media_root: str | Path | None = None) -> None:
        super().__init__(config, media_root)
        from ifpo.verifiers.http import api_key

        # An unset key variable is a configuration error up front, not one failed request per item.
        self._key = api_key(config.api_key_env, "generation endpoint")

    def _content(self, part: Mapping[str, Any]) -> list[dict[str, Any]]:
        from ifpo.verifiers.judge import png_data_url
        from ifpo.verifiers.media import confined_path, load_image, load_video

        if part["type"] == "text":
            return [{"type": "text", "text": part["text"]}]
        # The same frames and sizes an in-process model (and training) would get, as PNG data URLs.
        try:
            path = confined_path(self.media_root, part["path"])
            if part["type"] == "image":
                images = [load_image(path, self.config.budget, 32)]
            else:
                from PIL import Image

                frames, _ = load_video(path, self.config.budget, 32)
                images = [Image.fromarray(frame) for frame in frames]
        except Exception as exc:  # PIL / PyAV raise their own types on corrupt files
            raise GenerationError(f"media {part['path']!r} cannot be used: {type(exc).__name__}: {exc}") from None
        return [{"type": "image_url", "image_url": {"url": png_data_url(img)}} for img in images]

    def _one(self, messages: list[dict[str, Any]]) -> str:
        from ifpo.verifiers.http import EndpointError, chat_content, post_json, with_retries

        body = {
            "model": self.config.model,
            "messages": [{"role": m["role"], "content": [x for p in m["content"] for x in self._content(p)]}
                         for m in messages],
            "max_tokens": self.config.max_new_tokens,
            "temperature": self.config.temperature,
            "top_p": self.config.top_p,
        }
        url = self.config.base_url.rstrip("/") + "/chat/completions"

        def call() -> str:
            return chat_content(post_json(url, body, key=self._key, timeout_s=self.config.timeout_s), url)

        try:
            return with_retries(call, retries=self.config.max_retries, backoff_s=1.0, max_wait_s=30.0)
        except EndpointError as exc:
            raise GenerationError(f"generation {exc}") from None

    def sample(self, messages: list[dict[str, Any]], k: int, *, temperature: float, top_p: float,
               seed: int) -> list[str]:
        from ifpo.verifiers.http import EndpointError, post_json, with_retries

        body = {
            "model": self.config.model,
            "messages": [{"role": m["role"], "content": [x for p in m["content"] for x in self._content(p)]}
                         for m in messages],
            "max_tokens": self.config.max_new_tokens,
            "temperature": temperature,
            "top_p": top_p,
        }
        url = self.config.base_url.rstrip("/") + "/chat/completions"

        def call(n: int, request_seed: int) -> list[str]:
            payload = post_json(url, body | {"n": n, "seed": request_seed}, key=self._key,
                                timeout_s=self.config.timeout_s)
            try:
                choices = sorted(payload["choices"], key=lambda c: c.get("index", 0))
                texts = [c["message"]["content"] or "" for c in choices]
            except (KeyError, TypeError, AttributeError):
                raise EndpointError(f"{url}: unexpected response shape: {str(payload)[:200]}") from None
            if not texts or not all(isinstance(t, str) for t in texts):
                raise EndpointError(f"{url}: no text choices in the response: {str(payload)[:200]}")
            return texts

        # One request asks for all k (``n``); a server that returns fewer (some ignore ``n``) is asked
        # again for the rest, each request with its own seed so a seeded server does not repeat itself.
        out: list[str] = []
        for request in range(k):
            try:
                n, request_seed = k - len(out), seed + request
                out += with_retries(lambda n=n, s=request_seed: call(n, s), retries=self.config.max_retries,
                                    backoff_s=1.0, max_wait_s=30.0)
            except EndpointError as exc:
                raise GenerationError(f"sampling {exc}") from None
            if len(out) >= k:
                return out[:k]
        raise GenerationError(f"{url}: returned {len(out)} of {k} samples in {k} requests")

    def _one_or_error(self, messages: list[dict[str, Any]]) -> str | GenerationError:
        try:
            return self._one(messages)
        except GenerationError as exc:
            return exc

    def generate_or_errors(self, conversations: Sequence[list[dict[str, Any]]]) -> list[str | GenerationError]:
        """One answer or the :class:`GenerationError` that prevented it, per conversation (same order)."""
        with ThreadPoolExecutor(max_workers=self.config.concurrency) as pool:
            return list(pool.map(self._one_or_error, conversations))

    def generate(self, conversations: Sequence[list[dict[str, Any]]], progress: bool = False) -> list[str]:
        results = self.generate_or_errors(conversations)
        failed = [r for r in results if isinstance(r, GenerationError)]
        if failed:
            raise GenerationError(f"{len(failed)} of {len(results)} generation request(s) failed; first: {failed[0]}")
        return results


class TransformersGenerator(Generator):
    """In-process generation, ``batch_size`` conversations per ``generate`` call (left padding)."""

    def __init__(self, config: GenerationConfig, media_root: str | Path | None = None, model: Any = None,
                 processor: Any = None) -> None:
        super().__init__(config, media_root)
        self._model = model
        self._processor = processor
        self._lock = threading.Lock()

    def _load(self) -> None:
        from transformers import AutoModelForImageTextToText, AutoProcessor

        if self._processor is None:
            self._processor = AutoProcessor.from_pretrained(self.config.model)
        if self._model is None:
            self._model = AutoModelForImageTextToText.from_pretrained(self.config.model).to(self.config.device)
        self._model.eval()

    def encode(self, conversations: Sequence[list[dict[str, Any]]]):
        """Processor inputs for a batch of conversations (generation prompt added, left-padded)."""
        from ifpo.verifiers.media import confined_path, load_image, load_video, patch_factor

        budget, factor = self.config.budget, patch_factor(self._processor)
        rendered, metas = [], []
        for messages in conversations:
            turns = []
            for m in messages:
                parts = []
                for p in m["content"]:
                    if p["type"] == "image":
                        parts.append({"type": "image", "image": load_image(confined_path(self.media_root, p["path"]),
                                                                         budget, factor)})
                    elif p["type"] == "video":
                        frames, meta = load_video(confined_path(self.media_root, p["path"]), budget, factor)
                        metas.append(meta)  # in the order the processor meets the videos
                        parts.append({"type": "video", "video": frames})
                    else:
                        parts.append(p)
                turns.append({"role": m["role"], "content": parts})
            rendered.append(turns)
        # Left padding: generation continues every row right after its own prompt.
        self._processor.tokenizer.padding_side = "left"
        # Media are sampled and resized already (verifiers.media), exactly as the training collator does.
        # padding is a processor kwarg: passed loose, transformers warns once per call (92 times in the main job).
        kwargs: dict[str, Any] = {"do_resize": False, "padding": True}
        if metas:
            kwargs.update(video_metadata=metas, do_sample_frames=False)
        encoded = self._processor.apply_chat_template(
            rendered, tokenize=True, return_dict=True, return_tensors="pt", add_generation_prompt=True,
            processor_kwargs=kwargs,
        )
        # Media guard: every conversation's images and videos reach generate() as vision features.
        from ifpo.verifiers.media_guard import check_media, media_pad_ids

        wanted = [(sum(p["type"] == "image" for m in c for p in m["content"]),
                   sum(p["type"] == "video" for m in c for p in m["content"])) for c in conversations]
        names = [f"conversation {i} ({', '.join(p['path'] for m in c for p in m['content'] if 'path' in p) or 'text'})"
                 for i, c in enumerate(conversations)]
        vision = getattr(getattr(self._model, "config", None), "vision_config", None)
        check_media(encoded, pad_ids=media_pad_ids(self._processor), ids=names, expected=wanted, what="generation",
                    merge_size=int(getattr(vision, "spatial_merge_size", 2) or 2))
        return encoded

    def generate(self, conversations: Sequence[list[dict[str, Any]]], progress: bool = False) -> list[str]:
        return self._generate(conversations, progress, self.config.temperature, self.config.top_p, self.config.seed)

    def sample(self, messages: list[dict[str, Any]], k: int, *, temperature: float, top_p: float,
               seed: int) -> list[str]:
        if temperature <= 0:
            raise ValueError("sampling needs temperature > 0 (greedy decoding gives k identical answers)")
        # k copies of one prompt: the batches hold no padding, and the same seed, k and batch_size
        # draw the same samples (the torch generator is seeded once before the first batch).
        return self._generate([messages] * k, False, temperature, top_p, seed)

    def _generate(self, conversations: Sequence[list[dict[str, Any]]], progress: bool, temperature: float,
                  top_p: float, seed: int) -> list[str]:
        import torch

        with self._lock:
            if self._model is None or self._processor is None:
                self._load()
            size = self.config.batch_size
            batches = [conversations[i:i + size] for i in range(0, len(conversations), size)]
            if progress:
                from tqdm import tqdm

                batches = tqdm(batches, desc="generating", unit="batch", leave=False)
            sampling = temperature > 0
            gen_kwargs: dict[str, Any] = {"max_new_tokens": self.config.max_new_tokens, "do_sample": sampling}
            if sampling:
                gen_kwargs.update(temperature=temperature, top_p=top_p)
                torch.manual_seed(seed)
            outputs: list[str] = []
            for batch in batches:
                inputs = self.encode(batch).to(self._model.device)
                with torch.no_grad():
                    out = self._model.generate(**inputs, **gen_kwargs)
                prompt_len = inputs["input_ids"].shape[1]
                outputs += [self._processor.decode(row[prompt_len:], skip_special_tokens=True).strip() for row in out]
            return outputs


def make_generator(config: GenerationConfig | Mapping[str, Any], media_root: str | Path | None = None,
                   **kwargs: Any) -> Generator:
    if isinstance(config, Mapping):
        config = GenerationConfig.from_mapping(config)
    elif not isinstance(config, GenerationConfig):
        raise ValueError(f"generation config: expected a mapping of its keys, got {type(config).__name__}")
    cls = OpenAIGenerator if config.backend == "openai" else TransformersGenerator
    return cls(config, media_root, **kwargs)
