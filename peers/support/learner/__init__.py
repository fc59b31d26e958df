"""The learner's tools: what watches a run without changing it, and draws it afterwards.

--trace (`trace`: one JSON record per frame, line and decision), --replay and --diagram
(`tools`, which hooks the printer and writes the files when the run ends), the drawings
(`steps` reads a run's records, `picture` and `diagram` draw SVG and Mermaid, `page` the
step-through HTML), a lesson's cards in brief (`frame_summaries`, the printer's
summarize hook) and --legacy-card-path (`legacy_cards`, a transport around the printer).

May import: `peers.support.calling`, `peers.support.output`, `peers.a2a`, `transports`.
Must not import: the story, the command line (cli), lessons, the model step or the page
server (web), nor the modules directly in `peers/`.
"""
