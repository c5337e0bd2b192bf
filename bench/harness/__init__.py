"""plimsoll's benchmark harness: scenarios as data, ratios to baselines measured in the same run.

Modules, one concern each:
  stats     percentiles and summaries of a list of samples; ratios
  scenario  the Scenario record, the Registry, and probe helpers
  fixtures  the per-run work directory: minimal rootfs, OCI bundle, state dirs (built lazily)
  timing    the timed command loop (also run as a child process inside a namespace wrapper)
  execute   runs one scenario and returns a ScenarioResult (measured / skipped / failed)
  peers     tiers and peers: each row's best peer of its tier and the ratio to it (issue 23)
  npm_peer  installs a pinned npm peer (package-lock.json) into the bench's cache
  report    JSON and Markdown writers
Standard library only.
"""
