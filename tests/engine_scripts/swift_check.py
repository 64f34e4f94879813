"""Run inside the ms-swift venv (tests/test_engines.py): ms-swift loads ifpo's plugin as ``--external_plugins``
does (swift.utils.import_external_file), and its GRPO reward step (swift/rl_core/grpo_algorithm.py,
compute_rewards_per_func) scores GRPOSample rollouts whose dataset column ``item_id`` names the item.
Prints one JSON object. argv: PLUGIN_PATH PAIRS_JSON ([[item_id, completion], ...])
"""

import json
import sys

import torch
from swift.rewards import orms
from swift.rl_core.data import GRPOSample
from swift.rl_core.grpo_algorithm import compute_rewards_per_func
from swift.utils import import_external_file

import_external_file(sys.argv[1])
pairs = json.loads(sys.argv[2])
names = ["ifpo", "ifpo_cpr", "ifpo_ipr", "ifpo_tcsr"]
samples = [GRPOSample(messages=[{"role": "user", "content": "q"}, {"role": "assistant", "content": text}],
                      extra={"item_id": item_id}) for item_id, text in pairs]
rewards = compute_rewards_per_func(samples, [orms[n]() for n in names], None, device=torch.device("cpu"))
print(json.dumps({n: [None if v != v else v for v in rewards[:, i].tolist()] for i, n in enumerate(names)}))
