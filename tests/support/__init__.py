"""Helpers the test modules share (fake plugins, hand-built inputs and runs, child-process launchers): a test
module imports from here, never from another test module (tests/test_test_layout.py checks both directions)."""
