"""The model step: an LLM's generate() choosing the delegation, and code checking it.

Essay: "a real LLM driving the delegation decisions through generate()". The hook and its
offline stand-ins (`generate`), what the model is shown and how its answer is read
(`prompts`), the run a --request tells (`planner`: the model chooses, the trust gate
decides), and what the customer is told (`customer`: never an UNTRUSTED result).

May import: `peers.support.calling`, `peers.support.output`, `peers.a2a`, `transports`.
Must not import: the story, the command line (cli), the learner tools, lessons or the
page (web), nor the modules directly in `peers/`.
"""
