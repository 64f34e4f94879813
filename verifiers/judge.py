"""LLM/VLM judge backends: OpenAI-compatible HTTP and in-process transformers.

A judge answers JSON questions (binary checklist questions, parameter extraction for the hybrid
route, the task gate, the Conflict-30 diagnosis). Every backend shares one request path:

    cache lookup (content hash) -> request with timeout -> robust JSON parse + schema check
    -> retry with exponential backoff on any failure -> cache store

A request that still fails after its retries raises :class:`JudgeError`; the checklist turns that
into an *unjudged* verdict (``passed: None``) with the error recorded, never a pass or a fail.

Configuration comes from a flat YAML file (``--judge judge.yaml``) whose keys are the fields of
:class:`JudgeConfig`. The API key is never in the file: ``api_key_env`` names the environment
variable that holds it, and the key is kept out of reprs, logs, caches and reports.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ifpo.verifiers.io import write_text_atomic

BACKENDS = ("openai", "transformers")


@dataclass
class JudgeConfig:
    """Judge settings; keys of a judge YAML file are exactly these fields."""

    backend: str = field(default="openai", metadata={"help": f"one of {BACKENDS}"})
    model: str = field(default="", metadata={"help": "model name sent to the endpoint, or a local path/hub id for transformers"})
    base_url: str = field(
        default="http://127.0.0.1:8000/v1",
        metadata={"help": "OpenAI-compatible base URL (vLLM, SGLang, hosted APIs); /chat/completions is appended"},
    )
    api_key_env: str | None = field(
        default=None, metadata={"help": "name of the environment variable holding the API key (never the key itself)"}
    )
    temperature: float = field(default=0.0, metadata={"help": "sampling temperature; 0 makes verdicts repeatable"})
    max_tokens: int = field(default=512, metadata={"help": "answer budget per request"})
    timeout_s: float = field(default=60.0, metadata={"help": "per-request timeout in seconds"})
    max_retries: int = field(default=3, metadata={"help": "retries after the first attempt (timeouts, HTTP errors, bad JSON)"})
    backoff_s: float = field(default=1.0, metadata={"help": "first retry delay; doubles each retry"})
    concurrency: int = field(default=8, metadata={"help": "requests in flight at once"})
    cache_dir: str | None = field(
        default="~/.cache/ifpo/judge", metadata={"help": "on-disk answer cache keyed by content hash; null disables"}
    )
    vision: bool = field(default=False, metadata={"help": "send images and sampled video frames (the judge is a VLM)"})
    video_frames: int = field(default=4, metadata={"help": "frames sampled uniformly per video when vision is on"})
    json_schema: bool = field(
        default=True, metadata={"help": "ask the endpoint for schema-constrained JSON (response_format json_schema)"}
    )
    device: str = field(default="cpu", metadata={"help": "transformers backend: device to run on"})

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"judge backend {self.backend!r} is not one of {list(BACKENDS)}")
        if not self.model:
            raise ValueError("judge config: 'model' is required (endpoint model name or local model path)")
        for name in ("timeout_s", "concurrency", "max_tokens"):
            if getattr(self, name) <= 0:
                raise ValueError(f"judge config: {name} must be > 0, got {getattr(self, name)}")
        if self.max_retries < 0 or self.backoff_s < 0:
            raise ValueError("judge config: max_retries and backoff_s must be >= 0")
        if self.api_key_env is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.api_key_env):
            raise ValueError(
                "judge config: api_key_env must be the NAME of an environment variable (e.g. OPENAI_API_KEY), "
                "not the key itself"
            )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "judge config") -> JudgeConfig:
        from ifpo.verifiers.config import from_mapping

        return from_mapping(cls, data, source)

    @classmethod
    def from_yaml(cls, path: str | Path) -> JudgeConfig:
        from ifpo.verifiers.config import yaml_mapping

        return cls.from_mapping(yaml_mapping(path), source=str(path))


class JudgeError(RuntimeError):
    """A judge request failed after all retries (the verdict becomes unjudged)."""


@dataclass
class JudgeStats:
    requests: int = 0  # answers obtained from the backend (not from the cache)
    cache_hits: int = 0
    failures: int = 0
    retries: int = 0
    seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: float) -> None:
        with self.lock:
            for k, v in counts.items():
                setattr(self, k, getattr(self, k) + v)

    def as_dict(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in ("requests", "cache_hits", "failures", "retries", "seconds")}


# --- JSON answers -------------------------------------------------------------------------------

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def parse_json_answer(text: str) -> dict[str, Any]:
    """Find the JSON object in a model answer: plain, fenced, or wrapped in prose.

    >>> parse_json_answer('Sure! ```json\\n{"passed": true}\\n```')
    {'passed': True}
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty answer")
    candidates = [text.strip()] + [m.strip() for m in _FENCE.findall(text)]
    start = text.find("{")
    while start != -1:
        depth, in_str, esc = 0, False, False
        for i in range(start, len(text)):
            ch = text[i]
            if in_str:
                esc = (ch == "\\") and not esc
                if ch == '"' and not esc:
                    in_str = False
                continue
            if ch == '"':
                in_str = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    candidates.append(text[start : i + 1])
                    break
        start = text.find("{", start + 1)
    for cand in candidates:
        try:
            value = json.loads(cand)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raise ValueError(f"no JSON object in answer: {text[:120]!r}")


def coerce_bool(value: Any) -> bool:
    """Booleans as judges write them: true/false, "yes"/"no", 1/0."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "y", "pass", "passed", "1"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "no", "n", "fail", "failed", "0"):
        return False
    raise ValueError(f"expected a boolean, got {value!r}")


def check_schema(answer: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """Validate and coerce an answer against the small JSON-schema subset the prompts use."""
    out = dict(answer)
    for key in schema.get("required", []):
        if key not in answer:
            raise ValueError(f"answer lacks required key {key!r}")
    for key, spec in schema.get("properties", {}).items():
        if key not in answer:
            continue
        kind = spec.get("type")
        if kind == "boolean":
            out[key] = coerce_bool(answer[key])
        elif kind == "array" and spec.get("items", {}).get("type") == "boolean":
            if not isinstance(answer[key], list):
                raise ValueError(f"{key}: expected an array of booleans")
            out[key] = [coerce_bool(x) for x in answer[key]]
        elif kind == "object" and not isinstance(answer[key], dict):
            raise ValueError(f"{key}: expected an object")
        elif kind == "string" and not isinstance(answer[key], str):
            out[key] = str(answer[key])
    return out


# --- media for VLM judges -----------------------------------------------------------------------


def png_data_url(image: Any) -> str:
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def media_parts(media: Mapping[str, Sequence[str]] | None, root: Path | None, frames: int) -> list[dict[str, Any]]:
    """OpenAI content parts for an item's images and uniformly sampled video frames."""
    if not media or root is None:
        return []
    from PIL import Image

    parts: list[dict[str, Any]] = []
    for rel in media.get("images", []) or []:
        with Image.open(root / rel) as img:
            parts.append({"type": "image_url", "image_url": {"url": png_data_url(img)}})
    for rel in media.get("videos", []) or []:
        import av

        with av.open(str(root / rel)) as container:
            decoded = [f.to_image() for f in container.decode(video=0)]
        if not decoded:
            continue
        step = max(len(decoded) / max(frames, 1), 1)
        picks = sorted({min(int(i * step + step / 2), len(decoded) - 1) for i in range(min(frames, len(decoded)))})
        parts += [{"type": "image_url", "image_url": {"url": png_data_url(decoded[i])}} for i in picks]
    return parts


# --- backends -----------------------------------------------------------------------------------


class Judge:
    """Base class: cache, retries, parsing. Subclasses implement :meth:`_complete`."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self.stats = JudgeStats()
        self.cache_dir = Path(os.path.expanduser(config.cache_dir)) if config.cache_dir else None

    # The content hash covers everything that changes the answer, and nothing secret.
    def cache_key(self, messages: Sequence[Mapping[str, Any]], schema: Mapping[str, Any]) -> str:
        payload = {
            "backend": self.config.backend,
            "model": self.config.model,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "messages": messages,
            "schema": schema,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def _cache_path(self, key: str) -> Path | None:
        return self.cache_dir / key[:2] / f"{key}.json" if self.cache_dir else None

    def _cache_get(self, key: str) -> dict[str, Any] | None:
        path = self._cache_path(key)
        if path is None or not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))["answer"]
        except (OSError, ValueError, KeyError):
            return None  # a torn or foreign file is a miss; it is overwritten on store

    def _cache_put(self, key: str, answer: dict[str, Any]) -> None:
        path = self._cache_path(key)
        if path is None:
            return
        # Atomic: concurrent writers and a crash mid-write never leave a torn entry.
        write_text_atomic(path, json.dumps({"model": self.config.model, "answer": answer}, ensure_ascii=False))

    def ask(self, messages: list[dict[str, Any]], schema: Mapping[str, Any]) -> dict[str, Any]:
        """One JSON answer for ``messages``, validated against ``schema``; cached; retried."""
        key = self.cache_key(messages, schema)
        cached = self._cache_get(key)
        if cached is not None:
            self.stats.add(cache_hits=1)
            return cached
        errors: list[str] = []
        for attempt in range(self.config.max_retries + 1):
            if attempt:
                self.stats.add(retries=1)
                time.sleep(self.config.backoff_s * 2 ** (attempt - 1))
            start = time.perf_counter()
            try:
                text = self._complete(messages, schema)
                answer = check_schema(parse_json_answer(text), schema)
            except (JudgeError, ValueError, OSError, urllib.error.URLError, TimeoutError) as exc:
                errors.append(f"attempt {attempt + 1}: {type(exc).__name__}: {exc}")
                continue
            finally:
                self.stats.add(seconds=time.perf_counter() - start)
            self.stats.add(requests=1)
            self._cache_put(key, answer)
            return answer
        self.stats.add(failures=1)
        raise JudgeError(f"judge failed after {len(errors)} attempt(s): " + " | ".join(errors[-3:]))

    def _complete(self, messages: list[dict[str, Any]], schema: Mapping[str, Any]) -> str:
        raise NotImplementedError


class OpenAIJudge(Judge):
    """Chat completions over HTTP against any OpenAI-compatible server (vLLM, SGLang, hosted)."""

    def _api_key(self) -> str | None:
        if not self.config.api_key_env:
            return None
        key = os.environ.get(self.config.api_key_env)
        if not key:
            raise JudgeError(f"environment variable {self.config.api_key_env} (api_key_env) is not set")
        return key

    def _complete(self, messages: list[dict[str, Any]], schema: Mapping[str, Any]) -> str:
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
        }
        if self.config.json_schema:
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": schema}}
        headers = {"Content-Type": "application/json"}
        key = self._api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = self.config.base_url.rstrip("/") + "/chat/completions"
        request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.config.timeout_s) as resp:
                payload = json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            detail = exc.read(300).decode("utf-8", "replace") if exc.fp else ""
            raise JudgeError(f"HTTP {exc.code} from {url}: {detail}") from None
        try:
            return payload["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise JudgeError(f"unexpected response shape from {url}: {str(payload)[:200]}") from None


class TransformersJudge(Judge):
    """An in-process model (any AutoModelForImageTextToText / causal LM with a chat template)."""

    def __init__(self, config: JudgeConfig) -> None:
        super().__init__(config)
        self._lock = threading.Lock()  # one generate at a time per model
        self._model = None
        self._processor = None

    def _load(self) -> None:
        from transformers import AutoModelForImageTextToText, AutoProcessor

        self._processor = AutoProcessor.from_pretrained(self.config.model)
        self._model = AutoModelForImageTextToText.from_pretrained(self.config.model).to(self.config.device).eval()

    def _complete(self, messages: list[dict[str, Any]], schema: Mapping[str, Any]) -> str:
        import torch

        with self._lock:
            if self._model is None:
                self._load()
            # Text-only rendering: image parts are dropped for the in-process backend.
            plain = [
                {"role": m["role"], "content": [{"type": "text", "text": _text_of(m["content"])}]} for m in messages
            ]
            inputs = self._processor.apply_chat_template(
                plain, add_generation_prompt=True, tokenize=True, return_dict=True, return_tensors="pt"
            ).to(self.config.device)
            with torch.no_grad():
                out = self._model.generate(
                    **inputs,
                    max_new_tokens=self.config.max_tokens,
                    do_sample=self.config.temperature > 0,
                    **({"temperature": self.config.temperature} if self.config.temperature > 0 else {}),
                )
            new_tokens = out[0, inputs["input_ids"].shape[1] :]
            return self._processor.decode(new_tokens, skip_special_tokens=True)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")


def make_judge(config: JudgeConfig | str | Path | Mapping[str, Any] | None) -> Judge | None:
    """Build the judge a config names; None stays None (no judge: judge-route verdicts are unjudged)."""
    if config is None:
        return None
    if isinstance(config, (str, Path)):
        config = JudgeConfig.from_yaml(config)
    elif isinstance(config, Mapping):
        config = JudgeConfig.from_mapping(config)
    return OpenAIJudge(config) if config.backend == "openai" else TransformersJudge(config)
