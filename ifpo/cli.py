"""The ``ifpo`` console command: a thin dispatcher to each subcommand's own module.

Subcommands are listed explicitly below (name -> "module:function", help). Each target takes
``argv: list[str]`` and returns an exit code; it is imported only when called, so ``ifpo --help``
stays fast and one subcommand's heavy imports (torch, transformers) never slow another.
"""

from __future__ import annotations

import difflib
import importlib
import sys

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("ifpo.verifiers.schema:cli_main", "validate an items JSONL file and print a summary or every error"),
    "constraints": ("ifpo.verifiers.constraints:cli_main", "list the registered constraint types and their parameters"),
    "score": ("ifpo.verifiers.score:cli_main", "score responses against items with the verifier suite; write REPORT.json"),
    "judge-agreement": ("ifpo.verifiers.agreement:cli_main", "agreement of judge verdicts with human labels (kappa, AC1, PABAK)"),
    "import": ("ifpo.data_builders.importers:cli_main", "convert Video-IFBench / IFEval / VSysBench / VCIFBench files to items"),
    "build-pairs": ("ifpo.data_builders.build:cli_main", "build verified chosen/rejected pairs from items (resumable)"),
    "export": ("ifpo.data_builders.export:cli_main", "export pairs to HF datasets (media inside), LLaMA-Factory or ms-swift"),
    "tiny-model": ("ifpo.train.tiny_model:cli_main", "write a tiny random Qwen3-VL (tokenizer, processor, model) offline"),
    "sample": ("ifpo.data_builders.sample_benchmark.cli:cli_main", "regenerate the bundled sample benchmark (media + items)"),
    "evaluate": ("ifpo.eval_hooks.evaluate:cli_main", "generate with a model, model + adapter or endpoint on items and score (resumable)"),
    "serve": ("ifpo.verifiers.serve:cli_main", "reward server: checklist rewards over HTTP (OpenRLHF /get_reward, batch)"),
    "compare": ("ifpo.eval_hooks.compare:cli_main", "compare checkpoints and runs: terminal table, CSV/JSON, self-contained HTML dashboard"),
}


def _usage() -> str:
    width = max(len(n) for n in SUBCOMMANDS)
    lines = ["usage: ifpo <command> [args...]", "", "commands:"]
    lines += [f"  {name:<{width}}  {help_}" for name, (_, help_) in SUBCOMMANDS.items()]
    lines += ["", "Run `ifpo <command> --help` for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    if argv[0] == "--version":
        from ifpo import __version__

        print(f"ifpo {__version__}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in SUBCOMMANDS:
        close = difflib.get_close_matches(name, SUBCOMMANDS, n=2, cutoff=0.5)
        hint = f" Did you mean {' or '.join(close)}?" if close else ""
        print(f"ifpo: unknown command {name!r}.{hint}\n\n{_usage()}", file=sys.stderr)
        return 2
    module_name, func_name = SUBCOMMANDS[name][0].split(":")
    try:
        func = getattr(importlib.import_module(module_name), func_name)
    except ModuleNotFoundError as exc:
        if missing_extra(exc) is None:
            raise
        return _needs_train(f"ifpo {name}", exc)
    return run_command(f"ifpo {name}", func, rest)


# Top-level modules of the `train` extra (pyproject.toml): the light install lacks them, and a command (or a
# code path of one, such as an in-process judge or a model to generate with) that imports one needs the extra.
TRAIN_EXTRA_MODULES = frozenset(
    {"torch", "torchvision", "transformers", "trl", "peft", "accelerate", "tokenizers", "qwen_vl_utils", "wandb"}
)
TRAIN_EXTRA_HINT = 'pip install "ifpo[train]"'


def missing_extra(exc: BaseException) -> str | None:
    """The `train` extra's module whose absence raised ``exc`` (a ``ModuleNotFoundError``), else None."""
    name = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
    root = (name or "").split(".")[0]
    return root if root in TRAIN_EXTRA_MODULES else None


def _needs_train(prog: str, exc: BaseException) -> int:
    print(f"{prog}: this needs the training extra ({missing_extra(exc)} is not installed): {TRAIN_EXTRA_HINT}",
          file=sys.stderr)
    return 3


def _service_errors() -> tuple[type[BaseException], ...]:
    """Failures of a judge, endpoint or policy that a command let through: a reason, not a bug."""
    from ifpo.verifiers.generation import GenerationError
    from ifpo.verifiers.http import EndpointError
    from ifpo.verifiers.judge import JudgeError

    return (GenerationError, EndpointError, JudgeError)


def run_command(prog: str, func, argv: list[str]) -> int:
    """Run one command's ``func(argv)``; user errors it did not catch become one line and exit 2.

    Each command reports its own bad input precisely (file:line: field: ...). This is the net
    under all of them: a ``ValueError`` (ifpo's type for bad user input), an ``OSError`` (a
    missing, unreadable or unwritable path) or a ``RecursionError`` (pathologically nested
    input) that slipped through is printed as ``<prog>: error: <message>``, never as a traceback.
    ``IFPO_DEBUG=1`` re-raises, for developers.
    """
    import os

    try:
        return int(func(argv) or 0)
    except BrokenPipeError:
        # `ifpo validate x | head` closed our stdout: not an error of ours, and no traceback.
        sys.stderr.close()
        return 141
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except ModuleNotFoundError as exc:
        # The light install (no `train` extra) running a path that needs torch & co.: one line, not a traceback.
        if missing_extra(exc) is None or os.environ.get("IFPO_DEBUG"):
            raise
        return _needs_train(prog, exc)
    except (ValueError, OSError, RecursionError, *_service_errors()) as exc:
        if os.environ.get("IFPO_DEBUG"):
            raise
        message = str(exc) or type(exc).__name__
        if isinstance(exc, OSError) and exc.filename and str(exc.filename) not in message:
            message = f"{exc.filename}: {message}"
        print(f"{prog}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
