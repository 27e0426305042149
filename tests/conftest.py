"""Shared pytest configuration.

Its presence puts ``tests/`` on ``sys.path`` (rootdir-relative discovery without
``__init__.py`` files), so test modules can import ``stats_helpers``.
"""
