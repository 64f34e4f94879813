"""The RL engines' reward entry points, one file per engine, each loaded by the engine by path or module name
(``ifpo.verifiers.reward_adapters`` does the work). Their names start with ``ifpo_``: ms-swift puts a plugin's
folder first on ``sys.path``, so no file here may share a name with a module anyone imports."""
