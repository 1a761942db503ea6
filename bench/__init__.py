"""Benchmarks of shoe-ctl: ``python -m bench [--json] [--quick]`` (see ``docs/performance.md``).

The other scripts here (``bench_games.py``, ``bench_stub.py``, ``bench_journal.py``) time single
parts and are run as files. Nothing in this folder is part of the test suite's timing.
"""
