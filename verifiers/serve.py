"""``ifpo serve``: the checklist rewards over HTTP, for RL engines that call a remote reward model.

    ifpo serve --items ITEMS.jsonl [--judge JUDGE.yaml] [--host 127.0.0.1] [--port 8765] [--workers N]
               [--rewards cpr ipr:format ...] [--unjudged drop|zero|none] [--empty zero|score]

Endpoints (JSON in, JSON out):

- ``POST /get_reward``: OpenRLHF's remote reward model (``--remote_rm_url http://HOST:PORT/get_reward``),
  as its client sends it: ``{"query": [...], "prompts": [...], "labels": [...]}`` -> ``{"rewards": [...],
  "scores": [...], "extra_logs": {...}}`` (openrlhf/utils/agent.py, ``SingleTurnAgentExecutor.
  _fetch_rewards_via_http``, and openrlhf/cli/serve_rm.py, openrlhf 0.11.2 wheel). ``query`` is the prompt
  and the response decoded together with their special tokens; the completion is what follows the prompt,
  end-of-turn tokens stripped. ``labels`` carry the item: its id, or the item itself (a JSON object or
  its JSON text). The reward is the first of ``--rewards``; a reward with nothing to score (``None``) is
  sent as ``--none-reward`` (OpenRLHF makes a tensor of it). ``extra_logs`` holds every reward and the
  count of unjudged verdicts.
- ``POST /v1/rewards``: the native batch: ``{"completions": [{"item_id": ID | "item": {...}, "completion":
  TEXT}, ...], "rewards": [...], "unjudged": ..., "empty": ..., "type_weights": {...}, "verdicts": true}``
  -> ``{"results": [{"item_id", "rewards": {name: value | null}, "task_gate", "verdicts": [{constraint_id,
  type, dimension, route, passed, reason}]}], "unjudged": N}``. The reward modes are those of GRPO
  (``ifpo.verifiers.rewards``: cpr, ipr, tcsr, MODE:DIMENSION; the unjudged and empty policies).
- ``GET /health``: liveness, the item count, the judge, and the request, completion and unjudged counts.

The checks run in a process pool (``--pool``, default the cores divided among ``--workers``), each process
with its own judge client; judge answers go through the judge's on-disk cache (SQLite, safe across
processes), so several server workers and a restarted server answer a repeated request the same way.
A request is refused with a 4xx naming the field when it is malformed, 413 when larger than
``--max-body-mb``, 504 when it runs past ``--timeout-s``; the server keeps serving. With the environment
variable named by ``--token-env`` (default ``IFPO_SERVE_TOKEN``) set, POST endpoints need ``Authorization:
Bearer <token>`` (the token is never logged).
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ifpo.verifiers.reward_adapters import LabelError, openrlhf_completion, resolve_label
from ifpo.verifiers.rewards import EMPTY_POLICIES, UNJUDGED_POLICIES, RewardSpec, reward_values

log = logging.getLogger("ifpo.serve")

# The verdict fields a response carries (the params, timings and errors stay on the server).
VERDICT_FIELDS = ("constraint_id", "type", "dimension", "route", "passed", "reason")
@dataclass
class ServeConfig:
    """Settings of ``ifpo serve`` (each one a command-line option)."""

    items: str = field(metadata={"help": "items JSONL the completions are scored against (ids and checklists)"})
    judge: str | None = field(default=None, metadata={"help": "judge YAML; without it judge verdicts are unjudged"})
    root: str | None = field(default=None, metadata={"help": "dataset root of media paths (default: the items' folder)"})
    host: str = field(default="127.0.0.1", metadata={"help": "address to listen on"})
    port: int = field(default=8765, metadata={"help": "port to listen on"})
    workers: int = field(default=1, metadata={"help": "server processes (uvicorn workers), each with its own pool"})
    pool: int | None = field(default=None, metadata={"help": "check processes per server process (default: cores / "
                                                              "workers); 0 checks in the server process's threads"})
    rewards: list[str] = field(default_factory=lambda: ["cpr"],
                               metadata={"help": "default reward names: cpr, ipr, tcsr or MODE:DIMENSION"})
    unjudged: str = field(default="drop", metadata={"help": f"unjudged verdicts: one of {list(UNJUDGED_POLICIES)}"})
    empty: str = field(default="zero", metadata={"help": f"empty completions: one of {list(EMPTY_POLICIES)}"})
    mode: str = field(default="strict", metadata={"help": "strict or loose (IFEval's loose rule checks)"})
    none_reward: float = field(default=0.0, metadata={"help": "what /get_reward sends for a reward of None"})
    max_body_mb: float = field(default=16.0, metadata={"help": "largest request body, MiB (larger: 413)"})
    max_completions: int = field(default=4096, metadata={"help": "most completions in one request (more: 413)"})
    timeout_s: float = field(default=600.0, metadata={"help": "per-request time limit, seconds (past it: 504)"})
    token_env: str = field(default="IFPO_SERVE_TOKEN",
                           metadata={"help": "environment variable holding the bearer token (unset: no token)"})

    def __post_init__(self) -> None:
        for spec in self.rewards:
            RewardSpec.parse(spec)
        if self.unjudged not in UNJUDGED_POLICIES:
            raise ValueError(f"--unjudged must be one of {list(UNJUDGED_POLICIES)}, got {self.unjudged!r}")
        if self.empty not in EMPTY_POLICIES:
            raise ValueError(f"--empty must be one of {list(EMPTY_POLICIES)}, got {self.empty!r}")
        if self.mode not in ("strict", "loose"):
            raise ValueError(f"--mode must be strict or loose, got {self.mode!r}")
        if self.workers < 1:
            raise ValueError(f"--workers must be at least 1, got {self.workers}")
        if self.pool is not None and self.pool < 0:
            raise ValueError(f"--pool must be >= 0, got {self.pool}")
        if self.max_body_mb <= 0 or self.max_completions < 1 or self.timeout_s <= 0:
            raise ValueError("--max-body-mb, --max-completions and --timeout-s must be positive")

    def pool_size(self) -> int:
        if self.pool is not None:
            return self.pool
        return max(1, (os.cpu_count() or 1) // self.workers)


class RequestError(ValueError):
    """A malformed request: ``field`` is the JSON path of what is wrong."""

    def __init__(self, field_path: str, message: str, status: int = 422) -> None:
        super().__init__(f"{field_path}: {message}" if field_path else message)
        self.field = field_path
        self.status = status


# -- the checks, in a pool process (or in the server's threads with --pool 0) ---------------------------------

_EVALUATOR = None


def _exit_with_parent(parent: int) -> None:
    """A pool process ends when its server does, even one killed by SIGKILL (no shutdown ran to stop it)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def _init_checker(judge: str | None, root: str | None, mode: str, parent: int | None = None) -> None:
    global _EVALUATOR
    if parent is not None:
        threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
    from ifpo.verifiers.checklist import ChecklistEvaluator
    from ifpo.verifiers.judge import make_judge

    _EVALUATOR = ChecklistEvaluator(make_judge(judge), media_root=root, mode=mode)


def _check_chunk(pairs: list[tuple[dict, str]]) -> list[dict[str, Any]]:
    """Score (item, completion) pairs: the records of ``ItemResult.to_dict`` (verdicts with reasons)."""
    return [r.to_dict() for r in _EVALUATOR.evaluate_many(pairs, progress=False)]


def _ready(_: int = 0) -> int:
    return os.getpid()


class Scorer:
    """The items, the checking pool and the reward policies of one server process."""

    def __init__(self, config: ServeConfig) -> None:
        from ifpo.verifiers.schema import Validator, load_items

        self.config = config
        items_path = Path(config.items)
        loaded = load_items(items_path, root=config.root)
        if loaded.errors:
            shown = "\n".join(str(e) for e in loaded.errors[:20])
            raise ValueError(f"{items_path}: {len(loaded.errors)} invalid item record(s):\n{shown}")
        if not loaded.items:
            raise ValueError(f"{items_path}: no items")
        self.items = {str(item["id"]): item for item in loaded.items}
        self.root = str(Path(config.root) if config.root else items_path.parent)
        self.validator = Validator(Path(self.root), check_media=False)
        if config.judge:
            from ifpo.verifiers.judge import make_judge

            make_judge(config.judge)  # a bad judge YAML fails at start, not at the first request
        self.specs = [RewardSpec.parse(r) for r in config.rewards]
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        if config.pool_size() == 0:
            _init_checker(config.judge, self.root, config.mode)
        else:
            self._pool = self._new_pool()
        self.stats = {"requests": 0, "errors": 0, "completions": 0, "verdicts": 0, "unjudged": 0, "seconds": 0.0}

    def _new_pool(self) -> ProcessPoolExecutor:
        import multiprocessing

        # spawn, not fork: the server process runs an event loop and threads by the time a pool is (re)made
        pool = ProcessPoolExecutor(self.config.pool_size(), mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_init_checker,
                                   initargs=(self.config.judge, self.root, self.config.mode, os.getpid()))
        list(pool.map(_ready, range(self.config.pool_size())))  # start them now, not on the first request
        return pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    # -- requests --------------------------------------------------------------------------------------------

    def resolve_item(self, value: Any, field_path: str) -> dict[str, Any]:
        """An item from its id (a string) or inline (an object, or its JSON text), validated."""
        try:
            return resolve_label(value, self.items, self.validator, field_path,
                                 holds=f"the server holds {len(self.items)} items from {self.config.items}")
        except LabelError as exc:
            raise RequestError(exc.field, exc.message) from None

    async def check(self, pairs: list[tuple[dict, str]]) -> list[dict[str, Any]]:
        """The verdict records of ``pairs``, the pool's processes sharing the work."""
        if not pairs:
            return []
        if self._pool is None:
            return await asyncio.to_thread(_check_chunk, pairs)
        size = self.config.pool_size()
        step = -(-len(pairs) // size)
        chunks = [pairs[i:i + step] for i in range(0, len(pairs), step)]
        loop = asyncio.get_running_loop()
        try:
            parts = await asyncio.gather(*(loop.run_in_executor(self._pool, _check_chunk, c) for c in chunks))
        except BrokenProcessPool:
            # A check process died (out of memory, killed): a fresh pool serves the next request.
            with self._lock:
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = await asyncio.to_thread(self._new_pool)
            raise
        return [record for part in parts for record in part]

    def rewards_of(self, record: Mapping[str, Any], text: str, specs: Sequence[RewardSpec], unjudged: str,
                   empty: str, type_weights: Mapping[str, float] | None) -> dict[str, float | None]:
        return reward_values(record, specs, text, unjudged=unjudged, type_weights=type_weights, empty=empty)

    def count(self, records: Sequence[Mapping[str, Any]], seconds: float) -> int:
        unjudged = sum(v["passed"] is None for r in records for v in r["verdicts"])
        with self._lock:
            self.stats["requests"] += 1
            self.stats["completions"] += len(records)
            self.stats["verdicts"] += sum(len(r["verdicts"]) for r in records)
            self.stats["unjudged"] += unjudged
            self.stats["seconds"] += seconds
        return unjudged


# -- request parsing -------------------------------------------------------------------------------------------


def _list_field(body: Mapping[str, Any], name: str, limit: int, *, required: bool = True) -> list | None:
    if name not in body or body[name] is None:
        if required:
            raise RequestError(name, "required field is missing")
        return None
    value = body[name]
    if not isinstance(value, list):
        raise RequestError(name, f"expected a list, got {type(value).__name__}")
    if len(value) > limit:
        raise RequestError(name, f"{len(value)} entries, more than the server's --max-completions {limit}", 413)
    return value


def _policies(body: Mapping[str, Any], scorer: Scorer) -> tuple[list[RewardSpec], str, str, dict | None]:
    specs = scorer.specs
    if body.get("rewards") is not None:
        names = body["rewards"]
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise RequestError("rewards", "expected a non-empty list of reward names (cpr, ipr, tcsr, MODE:DIMENSION)")
        try:
            specs = [RewardSpec.parse(n) for n in names]
        except ValueError as exc:
            raise RequestError("rewards", str(exc)) from None
        if len({s.name for s in specs}) != len(specs):
            raise RequestError("rewards", "a reward is named twice")
    unjudged = body.get("unjudged", scorer.config.unjudged)
    if unjudged not in UNJUDGED_POLICIES:
        raise RequestError("unjudged", f"expected one of {list(UNJUDGED_POLICIES)}, got {unjudged!r}")
    empty = body.get("empty", scorer.config.empty)
    if empty not in EMPTY_POLICIES:
        raise RequestError("empty", f"expected one of {list(EMPTY_POLICIES)}, got {empty!r}")
    weights = body.get("type_weights")
    if weights is not None:
        if not isinstance(weights, Mapping):
            raise RequestError("type_weights", f"expected an object of type -> weight, got {type(weights).__name__}")
        for name, w in weights.items():
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not w >= 0 or w == float("inf"):
                raise RequestError(f"type_weights.{name}", f"expected a finite number >= 0, got {w!r}")
    return specs, unjudged, empty, weights


def _float_or(value: float | None, default: float) -> float:
    return default if value is None else float(value)


async def score_openrlhf(scorer: Scorer, body: Mapping[str, Any]) -> dict[str, Any]:
    limit = scorer.config.max_completions
    queries = _list_field(body, "query", limit)
    labels = _list_field(body, "labels", limit)
    prompts = _list_field(body, "prompts", limit, required=False)
    if len(labels) != len(queries):
        raise RequestError("labels", f"{len(labels)} labels for {len(queries)} queries")
    if prompts is not None and len(prompts) != len(queries):
        raise RequestError("prompts", f"{len(prompts)} prompts for {len(queries)} queries")
    pairs = []
    for i, query in enumerate(queries):
        if not isinstance(query, str):
            raise RequestError(f"query[{i}]", f"expected a string, got {type(query).__name__}")
        prompt = prompts[i] if prompts is not None else None
        if prompt is not None and not isinstance(prompt, str):
            raise RequestError(f"prompts[{i}]", f"expected a string, got {type(prompt).__name__}")
        item = scorer.resolve_item(labels[i], f"labels[{i}]")
        pairs.append((item, openrlhf_completion(query, prompt, f"query[{i}]")))
    specs, unjudged, empty, weights = _policies({}, scorer)
    records = await scorer.check(pairs)
    values = [scorer.rewards_of(r, text, specs, unjudged, empty, weights) for r, (_, text) in zip(records, pairs)]
    none = scorer.config.none_reward
    main = [_float_or(v[specs[0].name], none) for v in values]
    extra = {s.name: [_float_or(v[s.name], none) for v in values] for s in specs}
    extra["unjudged"] = [float(sum(v["passed"] is None for v in r["verdicts"])) for r in records]
    return {"rewards": main, "scores": main, "extra_logs": extra, "_records": records}


async def score_native(scorer: Scorer, body: Mapping[str, Any]) -> dict[str, Any]:
    entries = _list_field(body, "completions", scorer.config.max_completions)
    specs, unjudged, empty, weights = _policies(body, scorer)
    with_verdicts = body.get("verdicts", True)
    if not isinstance(with_verdicts, bool):
        raise RequestError("verdicts", f"expected true or false, got {with_verdicts!r}")
    pairs = []
    for i, entry in enumerate(entries):
        where = f"completions[{i}]"
        if not isinstance(entry, Mapping):
            raise RequestError(where, f"expected an object {{item_id | item, completion}}, got {type(entry).__name__}")
        if ("item_id" in entry) == ("item" in entry):
            raise RequestError(where, "give exactly one of item_id (an id the server holds) or item (an inline item)")
        if "item_id" in entry:
            if not isinstance(entry["item_id"], str):
                raise RequestError(f"{where}.item_id", f"expected a string, got {type(entry['item_id']).__name__}")
            if entry["item_id"] not in scorer.items:
                raise RequestError(f"{where}.item_id", f"unknown item id {entry['item_id'][:80]!r}")
            item = scorer.items[entry["item_id"]]
        else:
            if not isinstance(entry["item"], Mapping):
                raise RequestError(f"{where}.item", f"expected an object, got {type(entry['item']).__name__}")
            item = scorer.resolve_item(entry["item"], f"{where}.item")
        text = entry.get("completion")
        if not isinstance(text, str):
            raise RequestError(f"{where}.completion", f"expected a string, got {type(text).__name__}")
        pairs.append((item, text))
    records = await scorer.check(pairs)
    results = []
    for record, (item, text) in zip(records, pairs):
        out = {
            "item_id": str(item["id"]),
            "rewards": scorer.rewards_of(record, text, specs, unjudged, empty, weights),
            "task_gate": record["task_gate"],
        }
        if with_verdicts:
            out["verdicts"] = [{k: v[k] for k in VERDICT_FIELDS} for v in record["verdicts"]]
        results.append(out)
    return {"results": results, "unjudged": sum(v["passed"] is None for r in records for v in r["verdicts"]),
            "_records": records}


# -- the ASGI app ----------------------------------------------------------------------------------------------


def build_app(config: ServeConfig, scorer: Scorer | None = None):
    """The Starlette app; ``scorer`` defaults to one built from ``config`` at startup."""
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    state: dict[str, Any] = {"scorer": scorer}
    token = os.environ.get(config.token_env) or None
    max_bytes = int(config.max_body_mb * 1024 * 1024)

    @asynccontextmanager
    async def lifespan(app):
        if state["scorer"] is None:
            state["scorer"] = await asyncio.to_thread(Scorer, config)
        s = state["scorer"]
        log.info("ifpo serve: %d items, judge %s, %d check process(es), pid %d", len(s.items),
                 config.judge or "none", config.pool_size(), os.getpid())
        try:
            yield
        finally:
            s.close()

    def error(status: int, message: str, field_path: str | None = None) -> JSONResponse:
        payload = {"error": message}
        if field_path is not None:
            payload["field"] = field_path
        return JSONResponse(payload, status_code=status)

    async def read_json(request: Request) -> Any:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > max_bytes:
            raise RequestError("", f"request body of {declared} bytes is over --max-body-mb "
                                   f"({config.max_body_mb:g} MiB)", 413)
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_bytes:
                raise RequestError("", f"request body over --max-body-mb ({config.max_body_mb:g} MiB)", 413)
            chunks.append(chunk)
        try:
            body = json.loads(b"".join(chunks))
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise RequestError("", f"the body is not JSON ({exc})", 400) from None
        if not isinstance(body, dict):
            raise RequestError("", f"expected a JSON object, got {type(body).__name__}", 400)
        return body

    def authorized(request: Request) -> bool:
        if token is None:
            return True
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())

    def endpoint(handler, name: str):
        async def serve(request: Request) -> JSONResponse:
            start = time.perf_counter()
            s: Scorer = state["scorer"]
            if not authorized(request):
                s.stats["errors"] += 1
                log.warning("%s 401 (missing or wrong bearer token)", name)
                return error(401, "missing or wrong bearer token (Authorization: Bearer ...)")
            try:
                body = await read_json(request)
                result = await asyncio.wait_for(handler(s, body), timeout=config.timeout_s)
            except RequestError as exc:
                s.stats["errors"] += 1
                log.info("%s %d %s", name, exc.status, exc)
                return error(exc.status, str(exc), exc.field)
            except LabelError as exc:
                s.stats["errors"] += 1
                log.info("%s 422 %s", name, exc)
                return error(422, str(exc), exc.field)
            except ClientDisconnect:
                s.stats["errors"] += 1
                log.info("%s client disconnected before sending its body", name)
                return error(400, "client disconnected")
            except TimeoutError:
                s.stats["errors"] += 1
                log.warning("%s 504 past --timeout-s %gs", name, config.timeout_s)
                return error(504, f"the request took longer than the server's --timeout-s ({config.timeout_s:g} s)")
            except BrokenProcessPool:
                s.stats["errors"] += 1
                log.error("%s 503: a check process died; the pool was restarted", name)
                return error(503, "a check process died; the pool was restarted, retry the request")
            records = result.pop("_records")
            seconds = time.perf_counter() - start
            unjudged = s.count(records, seconds)
            verdicts = sum(len(r["verdicts"]) for r in records)
            st = s.stats
            log.info("%s 200 n=%d unjudged=%d/%d latency_ms=%.1f | requests=%d completions=%d unjudged_rate=%.3f",
                     name, len(records), unjudged, verdicts, seconds * 1000, st["requests"], st["completions"],
                     st["unjudged"] / max(st["verdicts"], 1))
            return JSONResponse(result)

        return serve

    async def health(request: Request) -> JSONResponse:
        s: Scorer | None = state["scorer"]
        if s is None:
            return error(503, "starting")
        st = dict(s.stats)
        return JSONResponse({
            "status": "ok", "items": len(s.items), "judge": config.judge, "pool": config.pool_size(), "pid": os.getpid(),
            "rewards": [spec.name for spec in s.specs], **st,
            "unjudged_rate": st["unjudged"] / st["verdicts"] if st["verdicts"] else None,
            "mean_latency_ms": 1000 * st["seconds"] / st["requests"] if st["requests"] else None,
        })

    routes = [
        Route("/health", health, methods=["GET"]),
        Route("/get_reward", endpoint(score_openrlhf, "POST /get_reward"), methods=["POST"]),
        Route("/v1/rewards", endpoint(score_native, "POST /v1/rewards"), methods=["POST"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


def _configure_logging(level: str) -> None:
    logging.basicConfig(level=level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)


def app_from_env():
    """uvicorn's factory for ``--workers`` > 1: each worker process rebuilds the app from the settings."""
    _configure_logging(os.environ.get("IFPO_SERVE_LOG_LEVEL", "info"))
    return build_app(ServeConfig(**json.loads(os.environ["IFPO_SERVE_CONFIG"])))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ifpo serve", description=__doc__.splitlines()[0])
    for f in ServeConfig.__dataclass_fields__.values():
        flag = "--" + f.name.replace("_", "-")
        kind = {"int": int, "float": float, "int | None": int}.get(str(f.type))
        if f.name == "rewards":
            parser.add_argument(flag, nargs="+", default=None, help=f.metadata["help"])
        elif f.name == "items":
            parser.add_argument(flag, required=True, help=f.metadata["help"])
        else:
            parser.add_argument(flag, type=kind or str, default=None, help=f.metadata["help"])
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    return parser


def cli_main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    given = {k: v for k, v in vars(args).items() if v is not None and k != "log_level"}
    config = ServeConfig(**given)
    from ifpo.verifiers.io import require_input_file

    require_input_file(Path(config.items), "items file")
    import uvicorn

    _configure_logging(args.log_level)
    if config.workers == 1:
        scorer = Scorer(config)  # bad items or judge fail here, with one line, before the port opens
        uvicorn.run(build_app(config, scorer), host=config.host, port=config.port, log_level=args.log_level)
    else:
        Scorer(ServeConfig(**{**asdict(config), "pool": 0})).close()
        os.environ["IFPO_SERVE_CONFIG"] = json.dumps(asdict(config))
        os.environ["IFPO_SERVE_LOG_LEVEL"] = args.log_level
        uvicorn.run("ifpo.verifiers.serve:app_from_env", factory=True, host=config.host, port=config.port,
                    workers=config.workers, log_level=args.log_level)
    return 0
