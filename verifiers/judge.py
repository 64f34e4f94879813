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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BACKENDS = ("openai", "transformers")


MAX_RETRIES = 100


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
    video_frames: int = field(default=4, metadata={"help": "frames sampled uniformly per video when vision is on (rounded up to even: "
                                                        "frames come in temporal pairs, as for the trained model)"})
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
        if self.max_retries > MAX_RETRIES:  # with capped backoff, 10**21 retries of a dead judge never end
            raise ValueError(f"judge config: max_retries must be <= {MAX_RETRIES}, got {self.max_retries}")
        if self.temperature < 0:
            raise ValueError(f"judge config: temperature must be >= 0, got {self.temperature}")
        if self.video_frames < 1:
            raise ValueError(f"judge config: video_frames must be >= 1, got {self.video_frames}")
        if self.backend == "openai":
            from ifpo.verifiers.http import base_url_problem

            problem = base_url_problem(self.base_url)
            if problem:
                raise ValueError(f"judge config: base_url: {problem}")
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

    first_error: str | None = None
    # Questions never asked because the item's media could not be sent to a vision judge (a corrupt
    # or missing file): counted apart from failed requests, and named, so they are never silent.
    media_failures: int = 0
    first_media_error: str | None = None

    def fail(self, error: str) -> None:
        with self.lock:
            self.failures += 1
            if self.first_error is None:
                self.first_error = error

    def media_fail(self, error: str) -> None:
        with self.lock:
            self.media_failures += 1
            if self.first_media_error is None:
                self.first_media_error = error

    def as_dict(self) -> dict[str, Any]:
        keys = ("requests", "cache_hits", "failures", "retries", "seconds", "first_error", "media_failures",
                "first_media_error")
        return {k: getattr(self, k) for k in keys}

    def summary(self) -> str | None:
        """A loud line when judge calls failed or media could not be sent (verdicts unjudged), else ``None``."""
        lines = []
        if self.failures:
            asked = self.failures + self.requests
            lines.append(f"WARNING: {self.failures} of {asked} judge request(s) failed; their verdicts are unjudged. "
                         f"First error: {self.first_error}")
        if self.media_failures:
            lines.append(f"WARNING: {self.media_failures} judge question(s) not asked: the item's media cannot be "
                         f"sent to the vision judge; their verdicts are unjudged. First error: {self.first_media_error}")
        return "\n".join(lines) or None

    @property
    def all_failed(self) -> bool:
        failed = self.failures + self.media_failures
        return failed > 0 and self.requests == 0 and self.cache_hits == 0


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
    """OpenAI content parts for an item's images and ``frames`` sampled video frames.

    Paths are confined to the dataset root (symlinks resolved), and frames are sampled through
    ``verifiers.media``'s budget, so only the kept frames are decoded and resized, as for a model.
    Any media that cannot be used raises :class:`JudgeError`: that item's judge verdicts become
    unjudged with the reason, the run goes on.
    """
    if not media or root is None:
        return []
    from ifpo.verifiers.media import MediaBudget, confined_path, load_image, load_video

    # Uniform sampling of exactly `frames` frames (kept even: frames come in temporal pairs).
    n = max(2, frames + frames % 2)
    budget = MediaBudget(video_fps=1e-3, video_min_frames=n, video_max_frames=n)
    parts: list[dict[str, Any]] = []
    for kind in ("images", "videos"):
        for rel in media.get(kind, []) or []:
            try:
                path = confined_path(root, rel)
                if kind == "images":
                    images = [load_image(path, budget, 32)]
                else:
                    from PIL import Image

                    decoded, _ = load_video(path, budget, 32)
                    images = [Image.fromarray(frame) for frame in decoded]
            except JudgeError:
                raise
            except Exception as exc:  # PIL, PyAV and numpy raise their own types on corrupt files
                raise JudgeError(f"media {rel!r} cannot be used: {type(exc).__name__}: {exc}") from None
            parts += [{"type": "image_url", "image_url": {"url": png_data_url(img)}} for img in images]
    return parts


# --- backends -----------------------------------------------------------------------------------


_SQLITE_ATTEMPTS = 12  # 0.01 s doubling to 1 s between them


class AnswerCache:
    """Judge answers by content hash in one SQLite file (``answers.sqlite3`` in the cache folder).

    One file, not one per answer: a GRPO run asks millions of questions. WAL journaling lets many
    processes read while one writes, ``busy_timeout`` makes concurrent writers wait their turn
    instead of failing, and a kill -9 mid-write loses at most that answer (SQLite's journal rolls
    the torn transaction back). Entries of the former one-file-per-answer layout
    (``<key[:2]>/<key>.json``) are still read, so an old cache keeps serving.
    """

    FILE = "answers.sqlite3"

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.path = self.folder / self.FILE
        self._local = threading.local()

    def _db(self):
        import sqlite3

        db = getattr(self._local, "db", None)
        if db is None or getattr(self._local, "pid", None) != os.getpid():
            self.folder.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(str(self.path), timeout=60.0, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, model TEXT, answer TEXT NOT NULL)")
            self._local.db, self._local.pid = db, os.getpid()
        return db

    def _execute(self, sql: str, args: tuple[Any, ...]) -> Any:
        """``sql`` on this thread's connection; a busy or locked database (another process's write,
        or its WAL recovery after a kill -9, can answer that before the busy timeout applies) is
        retried on a fresh connection with a growing pause (about 6 s in all) before it counts."""
        import sqlite3
        import time

        for attempt in range(_SQLITE_ATTEMPTS - 1):
            try:
                return self._db().execute(sql, args)
            except sqlite3.OperationalError:
                db = getattr(self._local, "db", None)
                self._local.db = None
                if db is not None:
                    try:
                        db.close()
                    except sqlite3.Error:
                        pass
                time.sleep(min(0.01 * 2**attempt, 1.0))
        return self._db().execute(sql, args)  # the last attempt: its error counts

    def get(self, key: str) -> dict[str, Any] | None:
        import sqlite3

        try:
            row = self._execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        except (sqlite3.Error, OSError):
            row = None  # an unreadable cache (or a folder that cannot be made) is a miss, never a failed verdict
        if row is not None:
            try:
                value = json.loads(row[0])
                return value if isinstance(value, dict) else None
            except ValueError:
                return None
        legacy = self.folder / key[:2] / f"{key}.json"
        if legacy.is_file():
            try:
                value = json.loads(legacy.read_text(encoding="utf-8"))["answer"]
                return value if isinstance(value, dict) else None
            except (OSError, ValueError, KeyError, TypeError):
                return None
        return None

    def put(self, key: str, model: str, answer: dict[str, Any]) -> None:
        import sqlite3

        from ifpo.verifiers.io import dumps

        try:
            self._execute("INSERT OR REPLACE INTO answers (key, model, answer) VALUES (?, ?, ?)",
                          (key, model, dumps(answer)))
        except (sqlite3.Error, OSError):
            pass  # a full disk or locked file costs a cache entry, not the verdict


class Judge:
    """Base class: cache, retries, parsing. Subclasses implement :meth:`_complete`."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self.stats = JudgeStats()
        self.cache_dir = Path(os.path.expanduser(config.cache_dir)) if config.cache_dir else None
        if self.cache_dir is not None and self.cache_dir.exists() and not self.cache_dir.is_dir():
            raise ValueError(f"judge config: cache_dir: {self.cache_dir} is a file, expected a folder "
                             "(or null for no cache)")
        self.cache = AnswerCache(self.cache_dir) if self.cache_dir else None

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

    def _cache_get(self, key: str) -> dict[str, Any] | None:
        return self.cache.get(key) if self.cache is not None else None

    def _cache_put(self, key: str, answer: dict[str, Any]) -> None:
        if self.cache is not None:
            self.cache.put(key, self.config.model, answer)

    def ask(self, messages: list[dict[str, Any]], schema: Mapping[str, Any]) -> dict[str, Any]:
        """One JSON answer for ``messages``, validated against ``schema``; cached; retried."""
        from ifpo.verifiers.http import EndpointError, with_retries

        key = self.cache_key(messages, schema)
        cached = self._cache_get(key)
        if cached is not None:
            self.stats.add(cache_hits=1)
            return cached

        def attempt() -> dict[str, Any]:
            start = time.perf_counter()
            try:
                text = self._complete(messages, schema)
                return check_schema(parse_json_answer(text), schema)
            except EndpointError:
                raise
            except (JudgeError, ValueError, OSError, TimeoutError, RuntimeError) as exc:
                # An answer that is not the JSON asked for may come right on a second try.
                raise EndpointError(f"{type(exc).__name__}: {exc}") from None
            finally:
                self.stats.add(seconds=time.perf_counter() - start)

        try:
            answer = with_retries(attempt, retries=self.config.max_retries, backoff_s=self.config.backoff_s,
                                  on_retry=lambda: self.stats.add(retries=1))
        except EndpointError as exc:
            self.stats.fail(str(exc))
            raise JudgeError(f"judge {exc}") from None
        self.stats.add(requests=1)
        self._cache_put(key, answer)
        return answer

    def _complete(self, messages: list[dict[str, Any]], schema: Mapping[str, Any]) -> str:
        raise NotImplementedError


class OpenAIJudge(Judge):
    """Chat completions over HTTP against any OpenAI-compatible server (vLLM, SGLang, hosted)."""

    def __init__(self, config: JudgeConfig) -> None:
        super().__init__(config)
        self._api_key()  # an unset key variable is a configuration error now, not N unjudged verdicts later

    def _api_key(self) -> str | None:
        from ifpo.verifiers.http import api_key

        return api_key(self.config.api_key_env, "judge")

    def _complete(self, messages: list[dict[str, Any]], schema: Mapping[str, Any]) -> str:
        from ifpo.verifiers.http import EndpointError, chat_content, post_json

        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
        }
        if self.config.json_schema:
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": schema}}
        try:
            key = self._api_key()
        except ValueError as exc:
            raise EndpointError(str(exc), retryable=False) from None
        url = self.config.base_url.rstrip("/") + "/chat/completions"
        return chat_content(post_json(url, body, key=key, timeout_s=self.config.timeout_s), url)


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
    source = None
    if isinstance(config, (str, Path)):
        source = str(config)
        config = JudgeConfig.from_yaml(config)
    elif isinstance(config, Mapping):
        config = JudgeConfig.from_mapping(config)
    elif not isinstance(config, JudgeConfig):
        raise ValueError(f"judge: expected the path of a judge YAML or a mapping of its keys, got "
                         f"{type(config).__name__} {config!r:.60}")
    try:
        return OpenAIJudge(config) if config.backend == "openai" else TransformersJudge(config)
    except ValueError as exc:  # e.g. the api_key_env variable is unset: name the file that asked for it
        raise ValueError(f"{source}: {exc}" if source else str(exc)) from None
