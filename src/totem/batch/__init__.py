"""`totem batch TASKS.jsonl`: many headless runs, each in its own working copy and session.

- tasks.py: the task file, read and checked line by line.
- workcopy.py: a scratch copy of a task's repository (a clone; the original is never touched)
  and the diff of what the run changed.
- headless.py: one task's run in its copy (`python -m totem.batch.headless`): `--yes` inside
  the copy, never outside it.
- task.py: one task from start to result (copy, run, diff, clean up), the unit the pools run.
- results.py: the JSONL of results, appended as tasks finish; what a rerun may skip.
- local_pool.py / ray_pool.py: run the tasks N at a time, here or on Ray.
- progress.py: the progress line and the summary table.
"""
