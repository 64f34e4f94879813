"""Run inside the OpenRLHF venv (tests/test_engines.py): OpenRLHF's own single-turn executor
(openrlhf/utils/agent.py, SingleTurnAgentExecutor.execute) generates with a scripted engine, decodes the query
as it does, and fetches the reward from ``ifpo serve`` (its HTTP client) or from ifpo's reward_func file.
Prints one JSON object.

argv: TOKENIZER_DIR REMOTE_RM_URL CASES_JSON  (CASES: [{"messages", "label", "completion"}, ...])
"""

import asyncio
import json
import sys
from types import SimpleNamespace

from openrlhf.utils.agent import SingleTurnAgentExecutor
from transformers import AutoTokenizer

tokenizer_dir, remote_rm_url, cases_path = sys.argv[1:4]
cases = json.loads(open(cases_path).read())
tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)


class ScriptedEngine:
    """Stands in for vLLM: answers each prompt with the case's completion tokens and an end-of-turn token."""

    def __init__(self, answer_ids):
        self.answer_ids = answer_ids

    async def generate(self, prompt_token_ids, params, multi_modal_data=None):
        return SimpleNamespace(outputs=[SimpleNamespace(token_ids=self.answer_ids, finish_reason="stop", logprobs=None)])


async def main():
    executor = SingleTurnAgentExecutor(remote_rm_url=remote_rm_url)
    out = []
    for case in cases:
        prompt = tokenizer.apply_chat_template(case["messages"], tokenize=False, add_generation_prompt=True)
        answer_ids = tokenizer(case["completion"], add_special_tokens=False)["input_ids"]
        answer_ids += tokenizer.convert_tokens_to_ids(["<|im_end|>"])
        params = SimpleNamespace(max_tokens=4096, logprobs=None)
        result = await executor.execute(prompt, case["label"], params, 8192, tokenizer, ScriptedEngine(answer_ids))
        out.append({"reward": result["reward"], "scores": result["scores"], "extra_logs": result["extra_logs"],
                    "response": tokenizer.decode(answer_ids[:-1], skip_special_tokens=False)})
    print(json.dumps(out))


asyncio.run(main())
