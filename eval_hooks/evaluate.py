"""``ifpo evaluate``: the checkpoint evaluation outside training, for a model, a model + adapter, or an endpoint.

    ifpo evaluate --model PATH_OR_ID [--adapter DIR] --items ITEMS.jsonl --out DIR [--judge JUDGE.yaml]
    ifpo evaluate --endpoint URL --model NAME --items ITEMS.jsonl --out DIR [--judge JUDGE.yaml]

``--model`` may be a training checkpoint holding a LoRA adapter (``adapter_config.json``): its base
model is read from the adapter config. The folder gets the files a training checkpoint's
evaluation gets (``responses.jsonl``, ``verdicts.jsonl``, ``report.json``; see
``eval_hooks/core.py``), so ``ifpo compare`` reads both alike.

Resumable: every answer is appended to ``responses.jsonl`` (flushed and fsynced) as soon as it
exists; a rerun with the same settings generates only the missing ones, then scores. A rerun with
different settings (another model, temperature, items, scoring ``--mode``) is refused unless
``--overwrite``, so one folder never mixes two models' answers nor two modes' verdicts (``ifpo score
--mode`` rescores a folder's ``responses.jsonl`` in the other mode without generating again).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ifpo.eval_hooks.core import (
    REPORT,
    RESPONSES,
    VERDICTS,
    ResponseLog,
    read_responses,
    score_and_write,
    step_from_path,
)
from ifpo.verifiers.checklist import ChecklistEvaluator
from ifpo.verifiers.generation import GenerationConfig, Generator, item_messages, make_generator
from ifpo.verifiers.io import write_json_atomic, write_jsonl_atomic
from ifpo.verifiers.media import MediaBudget
from ifpo.verifiers.score import format_table

RUN_FILE = "evaluation.json"  # what this folder's answers were generated with (checked on resume)
# Settings that change the answers; the others (concurrency, timeouts, device) may differ on a resume.
IDENTITY_KEYS = ("backend", "model", "base_url", "max_new_tokens", "temperature", "top_p", "media", "seed")
# What a record written before a setting existed means by it: folders from before --mode were strict.
IDENTITY_DEFAULTS = {"mode": "strict"}
DTYPES = ("auto", "float32", "bfloat16", "float16")


def items_fingerprint(items: Sequence[Mapping[str, Any]]) -> str:
    """Hash of the items as evaluated (ids, prompts, media, constraints): a resume must see the same ones."""
    h = hashlib.sha256()
    for item in items:
        h.update(json.dumps(item, sort_keys=True, ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()[:16]


def resolve_adapter(model: str, adapter: str | None) -> tuple[str, str | None]:
    """(base model, adapter): a ``--model`` folder that is a PEFT adapter names its own base."""
    if adapter is None and (Path(model) / "adapter_config.json").is_file():
        adapter = model
    if adapter is None:
        return model, None
    config_path = Path(adapter) / "adapter_config.json"
    if not config_path.is_file():
        raise ValueError(f"--adapter {adapter}: no adapter_config.json there (not a PEFT adapter folder)")
    if adapter != model:
        return model, adapter
    from ifpo.verifiers.io import read_json_file

    config = read_json_file(config_path, "adapter config")  # not UTF-8 / not JSON: one line naming it
    if not isinstance(config, dict):
        raise ValueError(f"{config_path}: expected a JSON object (PEFT's adapter config), got {type(config).__name__}")
    base = config.get("base_model_name_or_path")
    if not isinstance(base, str):
        base = None
    if not base:
        raise ValueError(f"{config_path}: base_model_name_or_path is empty; pass the base with --model and the folder with --adapter")
    return base, adapter


def _has_processor(folder: Path) -> bool:
    return any((folder / name).is_file() for name in ("processor_config.json", "preprocessor_config.json", "tokenizer_config.json"))


def load_model(model: str, adapter: str | None, device: str, dtype: str = "auto") -> tuple[Any, Any]:
    """Model (with the adapter applied) and processor, ready to generate.

    The processor comes from the adapter folder when a training checkpoint saved one there (it is
    the one the run trained with), else from the base model.
    """
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    if dtype not in DTYPES:
        raise ValueError(f"--dtype {dtype!r} is not one of {list(DTYPES)}")
    if dtype == "auto":
        torch_dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    else:
        torch_dtype = getattr(torch, dtype)
    processor_source = adapter if adapter is not None and _has_processor(Path(adapter)) else model
    processor = AutoProcessor.from_pretrained(processor_source)
    net = AutoModelForImageTextToText.from_pretrained(model, dtype=torch_dtype)
    if adapter is not None:
        from peft import PeftModel

        net = PeftModel.from_pretrained(net, adapter)
    net = net.to(device).eval()
    return net, processor


def generate_resumable(
    items: Sequence[Mapping[str, Any]],
    generator: Generator,
    out_dir: Path,
    *,
    chunk: int = 8,
    progress: bool = True,
    failures: list[tuple[str, str]] | None = None,
) -> dict[str, str]:
    """Answers for every item, reusing those already in ``out_dir/responses.jsonl``; new ones are appended as made.

    An item whose answer cannot be made (endpoint failure after retries, corrupt media) is left
    out, with ``(id, reason)`` appended to ``failures``; the others are kept, and a rerun retries it.
    """
    path = out_dir / RESPONSES
    done, damaged = read_responses(path)
    ids = {item["id"] for item in items}
    done = {k: v for k, v in done.items() if k in ids}
    if damaged:
        # A crash tore the last line: rewrite what is readable before appending after it.
        write_jsonl_atomic(path, ({"id": k, "response": v} for k, v in done.items()))
    todo = [item for item in items if item["id"] not in done]
    if done:
        # A resume: say what is reused, so a quick finish is not mistaken for a fast model.
        print(f"ifpo evaluate: resuming {out_dir}: {len(done)} of {len(items)} item(s) already answered in {RESPONSES} "
              f"(kept), {len(todo)} to generate", file=sys.stderr)
    if not todo:
        return done
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(items), initial=len(items) - len(todo), desc="generating", unit="item")
    with ResponseLog(path) as log:
        # Chunks keep an HTTP backend's requests in flight while each answer still lands on disk quickly.
        for start in range(0, len(todo), chunk):
            batch = todo[start:start + chunk]
            for item, text in zip(batch, _generate_each(generator, batch)):
                if isinstance(text, str):
                    log.append(item["id"], text)
                    done[item["id"]] = text
                elif failures is not None:
                    failures.append((item["id"], str(text)))
            if bar is not None:
                bar.update(len(batch))
    if bar is not None:
        bar.close()
    return done


def _generate_each(generator: Generator, batch: Sequence[Mapping[str, Any]]) -> list[str | Exception]:
    """One answer or the error that prevented it per item: one bad item never costs its chunk."""
    conversations = [item_messages(item) for item in batch]
    if hasattr(generator, "generate_or_errors"):
        return generator.generate_or_errors(conversations)
    try:
        return list(generator.generate(conversations))
    except (ValueError, OSError, RuntimeError) as exc:
        if len(batch) == 1:
            return [exc]
    # The batch failed as a whole (a corrupt video in it): answer item by item to find which.
    out: list[str | Exception] = []
    for conversation in conversations:
        try:
            out.append(generator.generate([conversation])[0])
        except (ValueError, OSError, RuntimeError) as exc:
            out.append(exc)
    return out


def check_resume(out_dir: Path, identity: Mapping[str, Any], overwrite: bool) -> None:
    """Refuse to continue a folder made with other settings; with ``overwrite``, clear it instead."""
    run_file = out_dir / RUN_FILE
    if overwrite:
        for name in (RUN_FILE, RESPONSES, "verdicts.jsonl", "report.json"):
            (out_dir / name).unlink(missing_ok=True)
        return
    if run_file.is_file():
        from ifpo.verifiers.io import read_json_file

        data = read_json_file(run_file, "evaluation record")  # a corrupt file: one line naming it
        if not isinstance(data, dict):
            raise ValueError(f"{run_file}: expected a JSON object, got {type(data).__name__}; "
                             "use --overwrite to start the evaluation again")
        previous = data.get("identity", {})
        if not isinstance(previous, dict):
            raise ValueError(f"{run_file}: identity: expected an object, got {type(previous).__name__}; "
                             "use --overwrite to start the evaluation again")
        previous = {**IDENTITY_DEFAULTS, **previous}
        diff = sorted(k for k in set(previous) | set(identity) if previous.get(k) != identity.get(k))
        if diff:
            detail = ", ".join(f"{k}: {previous.get(k)!r} -> {identity.get(k)!r}" for k in diff)
            if "mode" in diff:  # the answers are reusable: only the scoring differs
                detail += (f"; to score these answers in that mode: ifpo score --items ITEMS --responses "
                           f"{out_dir / RESPONSES} --mode {identity.get('mode')} --out REPORT.json")
            raise ValueError(
                f"{out_dir} holds an evaluation made with other settings ({detail}); "
                "use another --out, or --overwrite to start it again"
            )
    elif (out_dir / RESPONSES).is_file():
        raise ValueError(f"{out_dir} has responses.jsonl but no {RUN_FILE}: not an ifpo evaluate folder; use --overwrite")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ifpo evaluate",
        description="Generate on items with a model, model + adapter, or OpenAI-compatible endpoint; score with the "
        "verifier suite; write responses.jsonl, verdicts.jsonl, report.json (resumable).",
    )
    src = parser.add_argument_group("what to evaluate")
    src.add_argument("--model", required=True, help="local path or hub id (in-process), a training checkpoint with a "
                     "LoRA adapter, or the served model name with --endpoint")
    src.add_argument("--adapter", help="PEFT/LoRA adapter folder applied on --model")
    src.add_argument("--endpoint", help="OpenAI-compatible base URL (vLLM, SGLang, hosted API), e.g. http://127.0.0.1:8000/v1")
    src.add_argument("--api-key-env", help="NAME of the environment variable holding the endpoint's API key")
    io = parser.add_argument_group("data")
    io.add_argument("--items", required=True, help="items JSONL")
    io.add_argument("--root", help="dataset root for media paths (default: the items file's folder)")
    io.add_argument("--out", required=True, help="output folder (created; resumed when it holds a partial evaluation)")
    io.add_argument("--limit", type=int, help="evaluate only the first N items")
    io.add_argument("--overwrite", action="store_true", help="discard what --out holds and start again")
    io.add_argument("--strict", action="store_true",
                    help="refuse the items file when any record is invalid (default: name and skip them)")
    gen = parser.add_argument_group("generation (defaults as in the training callback)")
    gen.add_argument("--generation", help="YAML with keys of verifiers.generation.GenerationConfig; flags below override it")
    gen.add_argument("--temperature", type=float, help="sampling temperature (default 0.1 as VCIFBench; 0 = greedy)")
    gen.add_argument("--top-p", type=float, help="nucleus sampling (default 1.0)")
    gen.add_argument("--max-new-tokens", type=int, help="answer budget (default 512)")
    gen.add_argument("--seed", type=int, help="sampling seed (transformers backend)")
    gen.add_argument("--concurrency", type=int, help="HTTP requests in flight (endpoint)")
    gen.add_argument("--device", help="device for in-process models (default: cuda if available, else cpu)")
    gen.add_argument("--dtype", choices=DTYPES, default="auto", help="weights dtype (auto: bfloat16 on cuda, float32 on cpu)")
    media = parser.add_argument_group(
        "media budget (the training recipe's keys; evaluate with the frames and pixels training used)")
    media.add_argument("--recipe", help="a train/dpo.py or train/grpo.py recipe (or a run's recipe.resolved.yaml): its "
                                        "image_*/video_* keys; the flags below override them")
    for f in dataclasses.fields(MediaBudget):
        kind = float if f.type in (float, "float") else int
        media.add_argument(f"--{f.name.replace('_', '-')}", dest=f"media_{f.name}", type=kind, metavar="N",
                           help=f"{f.metadata['help']} (default: {f.default})")
    parser.add_argument("--step", type=int, help="training step recorded in the report (default: from a checkpoint-N path)")
    parser.add_argument("--judge", help="judge YAML (verifiers.judge.JudgeConfig); without it judge verdicts are unjudged")
    parser.add_argument("--mode", choices=["strict", "loose"], default="strict",
                        help="strict (default): rule checks see the response as given; loose: IFEval's loose definition "
                             "(a rule check also passes on the response without its first/last line or '*'); "
                             "recorded, so a resume with the other mode is refused")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    return parser


def recipe_media(path: str | Path) -> dict[str, Any]:
    """The media-budget keys (``MediaBudget`` fields) a training recipe sets; its other keys are not ours."""
    from ifpo.verifiers.config import yaml_mapping

    data = yaml_mapping(path)  # a missing file or bad YAML: one line naming it
    names = {f.name for f in dataclasses.fields(MediaBudget)}
    return {k: v for k, v in data.items() if k in names}


def recipe_max_new_tokens(path: str | Path) -> int | None:
    """The answer budget a training recipe evaluates with: its ``eval_hook.generation.max_new_tokens`` (what the
    checkpoint callback generates with), else GRPO's ``max_completion_length`` (the rollouts' budget); None if
    neither is set. Without it a recipe trained at 96 tokens was evaluated at the default 512 (10x the time)."""
    from ifpo.verifiers.config import yaml_mapping

    data = yaml_mapping(path)
    hook = data.get("eval_hook")
    generation = hook.get("generation") if isinstance(hook, dict) else None
    for where, value in ((f"{path}: eval_hook.generation.max_new_tokens",
                          generation.get("max_new_tokens") if isinstance(generation, dict) else None),
                         (f"{path}: max_completion_length", data.get("max_completion_length"))):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{where}: expected a positive integer, got {value!r}")
        return value
    return None


def generation_from_args(args: argparse.Namespace) -> GenerationConfig:
    from ifpo.eval_hooks.callback import DEFAULT_GENERATION

    data: dict[str, Any] = dict(DEFAULT_GENERATION)
    if args.generation:
        from ifpo.verifiers.config import yaml_mapping

        data.update(yaml_mapping(args.generation))  # syntax errors and a missing file: one line
    media = dict(data.get("media") or {})
    if getattr(args, "recipe", None):
        media.update(recipe_media(args.recipe))
        limit = recipe_max_new_tokens(args.recipe)
        if limit is not None:
            data["max_new_tokens"] = limit  # --max-new-tokens below still wins
    media.update({f.name: getattr(args, f"media_{f.name}") for f in dataclasses.fields(MediaBudget)
                  if getattr(args, f"media_{f.name}", None) is not None})
    if media:
        data["media"] = media
    flags = {"temperature": args.temperature, "top_p": args.top_p, "max_new_tokens": args.max_new_tokens,
             "seed": args.seed, "concurrency": args.concurrency, "api_key_env": args.api_key_env, "device": args.device}
    flags = {k: v for k, v in flags.items() if v is not None}
    data.update(flags)
    data["model"] = args.model
    if args.endpoint is not None:
        data.update(backend="openai", base_url=args.endpoint)
    else:
        data["backend"] = "transformers"
        if "device" not in data:
            import torch

            data["device"] = "cuda" if torch.cuda.is_available() else "cpu"
    # A bad value may come from the YAML or from a flag: the message says which places it can be.
    given = [f"--{k.replace('_', '-')}" for k in flags] + (["--endpoint"] if args.endpoint is not None else [])
    given += [f"--{f.name.replace('_', '-')}" for f in dataclasses.fields(MediaBudget)
              if getattr(args, f"media_{f.name}", None) is not None]
    given += [f"--recipe {args.recipe}"] if getattr(args, "recipe", None) else []
    source = " with ".join(x for x in (args.generation, ", ".join(given)) if x) or "the generation defaults"
    return GenerationConfig.from_mapping(data, source=source)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The whole evaluation; returns the report. Raises ValueError on bad input."""
    from ifpo.verifiers.judge import make_judge
    from ifpo.verifiers.schema import load_items

    if args.endpoint and args.adapter:
        raise ValueError("--adapter applies to in-process models; an endpoint serves its own weights (use --model NAME)")
    if args.limit is not None and args.limit <= 0:
        raise ValueError(f"--limit must be > 0, got {args.limit}")
    if args.step is not None and args.step < 0:
        raise ValueError(f"--step must be >= 0, got {args.step}")
    if args.endpoint is not None and not args.endpoint.strip():
        raise ValueError("--endpoint is empty; give the server's base URL (or leave --endpoint out to load --model)")
    from ifpo.verifiers.io import refuse_overwriting_inputs, require_input_file

    items_path = require_input_file(args.items, "--items file")
    out = Path(args.out)
    if not args.out or (out.exists() and not out.is_dir()):
        raise ValueError(f"--out {args.out!r}: expected an output folder" + (", not a file" if args.out else ""))
    for name in (RUN_FILE, RESPONSES, VERDICTS, REPORT):  # an input kept in --out under an output's name
        refuse_overwriting_inputs(out / name, {"--items file": items_path, "--generation file": args.generation,
                                               "--judge file": args.judge, "--recipe file": args.recipe})
    loaded = load_items(items_path, root=args.root)
    if loaded.errors:
        shown = "\n  ".join(str(e) for e in loaded.errors[:20])
        if args.strict or not loaded.items:
            raise ValueError(f"{len(loaded.errors)} invalid item field(s):\n  {shown}")
        # Bad records are named and skipped; the valid items are evaluated (--strict refuses).
        print(f"ifpo evaluate: skipping invalid records:\n  {shown}", file=sys.stderr)
    skipped_records = [str(e) for e in loaded.errors]  # also in report.json (evaluation.input_problems)
    items = loaded.items[: args.limit]
    if not items:
        raise ValueError(f"{items_path}: no items")
    root = Path(args.root) if args.root else items_path.parent
    config = generation_from_args(args)
    base, adapter = (args.model, None) if args.endpoint else resolve_adapter(args.model, args.adapter)
    judge = make_judge(args.judge) if args.judge else None
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    identity = {
        **{k: getattr(config, k) for k in IDENTITY_KEYS},
        "model": base,
        "adapter": str(Path(adapter).resolve()) if adapter else None,
        "items": items_fingerprint(items),
        "mode": args.mode,  # not an answer setting, but one folder holds one mode's verdicts
    }
    if args.endpoint:
        identity.pop("seed")  # an endpoint's sampling is not seeded by us
    check_resume(out_dir, identity, args.overwrite)
    write_json_atomic(out_dir / RUN_FILE, {"identity": identity, "items_path": str(items_path)})

    start = time.perf_counter()
    kwargs: dict[str, Any] = {}
    responses, _ = read_responses(out_dir / RESPONSES)
    if not args.endpoint and any(item["id"] not in responses for item in items):
        # Load weights only when something is left to generate (a resume after generation costs nothing).
        kwargs["model"], kwargs["processor"] = load_model(base, adapter, config.device, args.dtype)
    generator = make_generator(config, root, **kwargs)
    failures: list[tuple[str, str]] = []
    try:
        responses = generate_resumable(
            items, generator, out_dir, chunk=config.concurrency if args.endpoint else 8, progress=not args.no_progress,
            failures=failures,
        )
    finally:
        generator.close()
    generate_seconds = time.perf_counter() - start
    step = args.step if args.step is not None else step_from_path(Path(adapter or base))
    evaluation = {
        "step": step,
        "kind": "endpoint" if args.endpoint else ("model + adapter" if adapter else "model"),
        "model": base,
        "adapter": adapter,
        "endpoint": args.endpoint,
        "items": str(items_path),
        "n_items": len(items),
        "generation": {k: v for k, v in dataclasses.asdict(config).items() if k not in ("model", "api_key_env")},
        "judge": judge.config.model if judge is not None else None,
        "mode": args.mode,
        "generate_seconds": round(generate_seconds, 3),
        "generation_failures": {"count": len(failures), "first_error": failures[0][1] if failures else None,
                                "items": [i for i, _ in failures]},
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "input_problems": skipped_records,
    }
    evaluator = ChecklistEvaluator(judge, media_root=root, mode=args.mode)
    return score_and_write(items, responses, out_dir, evaluator, evaluation, progress=not args.no_progress)


def cli_main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.model and args.endpoint is None and args.model.startswith(("/", "./", "../", "~")) \
            and not Path(args.model).expanduser().exists():
        print(f"ifpo evaluate: --model {args.model}: no such folder", file=sys.stderr)
        return 2
    try:
        report = run(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"ifpo evaluate: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # transformers' "not a local folder nor a hub id" and offline-hub errors
        print(f"ifpo evaluate: cannot load {args.model!r}: {exc}", file=sys.stderr)
        return 2
    print(format_table(report))
    print(f"\nwrote {Path(args.out) / 'report.json'}")
    failed = (report.get("evaluation") or {}).get("generation_failures") or {}
    judge = report.get("judge") or {}
    # docs/exit-codes.md: 1 when the report leaves input out, each case named on stderr and in report.json.
    incomplete = False
    if judge.get("failures"):
        print(f"ifpo evaluate: WARNING: {judge['failures']} judge request(s) failed (verdicts unjudged); first error: "
              f"{judge.get('first_error')}", file=sys.stderr)
        incomplete = True
    if judge.get("media_failures"):
        print(f"ifpo evaluate: WARNING: {judge['media_failures']} judge question(s) not asked: media cannot be sent "
              f"to the vision judge (verdicts unjudged); first error: {judge.get('first_media_error')}",
              file=sys.stderr)
        incomplete = True
    problems = (report.get("evaluation") or {}).get("input_problems") or []
    if problems:
        print(f"ifpo evaluate: {len(problems)} invalid item record(s) skipped (named above; report.json "
              "evaluation.input_problems)", file=sys.stderr)
        incomplete = True
    if failed.get("count"):
        # Loud and non-zero: the report covers fewer items than asked; a rerun retries only those.
        print(f"ifpo evaluate: {failed['count']} of {report['evaluation']['n_items']} item(s) got no answer and are "
              f"not scored; first error: {failed['first_error']}; rerun the same command to retry them",
              file=sys.stderr)
        incomplete = True
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(cli_main(sys.argv[1:]))
