"""memmut-sim: replays a trace through the consolidation planner (engine),
with migrations that take time, Neat's SLA metrics and the per-step bound."""
