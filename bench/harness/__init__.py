"""plimsoll's benchmark harness: scenarios as data, ratios to baselines measured in the same run.

Modules, one concern each:
  stats     percentiles and summaries of a list of samples; ratios
  scenario  the Scenario record, the Registry, and probe helpers
  fixtures  the per-run work directory: minimal rootfs, OCI bundle, state dirs (built lazily)
  timing    the timed command loop (also run as a child process inside a namespace wrapper)
  execute   runs one scenario and returns a ScenarioResult (measured / skipped / failed)
  report    JSON and Markdown writers
Standard library only.
"""
